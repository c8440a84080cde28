// The backend registry (hcq/backend.h): device names parsed in one place with clear errors, one device per canonical
// name, and a whole backend (device, target, loader) added from this test file alone: a toy device that runs every
// kernel through the reference interpreter, with a target whose pipeline, renderer and compiler count their calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/backend.h"
#include "hcq/devices.h"
#include "hcq/hw_queue.h"
#include "hcq/ref/ref_interpreter.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "ir/environment.h"
#include "ir/printer.h"
#include "scheduler/schedule.h"
#include "tests/common/error_of.h"

namespace doorbell {
namespace {

std::atomic<int> g_toy_lowered{0}, g_toy_rendered{0}, g_toy_compiled{0}, g_toy_opened{0};

// A number of its own for each run of a test (--gtest_repeat): a device or kernel no earlier run made.
int fresh() {
  static std::atomic<int> n{0};
  return ++n;
}

// The toy's target: the scheduler's kernel unchanged, "rendered" as its printed graph, "compiled" to nothing.
class ToyTarget final : public Target {
 public:
  ToyTarget() { options_.renderer = "TXT"; }
  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return key_; }
  const LoweringOptions& options() const override { return options_; }
  LoweredKernel lower(const UOp& sink, bool) const override {
    g_toy_lowered++;
    return LoweredKernel{sink};
  }
  std::string render(const std::string& name, const LoweredKernel& k, const std::vector<Statement>&) const override {
    g_toy_rendered++;
    return "toy kernel " + name + "\n" + print_graph(k.sink);
  }
  CompiledBinary compile(const std::string& source, const std::string&) const override {
    g_toy_compiled++;
    CompiledBinary b;
    b.bytes = "TOY" + std::to_string(source.size());
    return b;
  }

 private:
  LoweringOptions options_;
  std::string key_ = "TOY", name_ = "TOY text";
};

class ToyProgram final : public HostProgram {
 public:
  ToyProgram(std::string name, std::string device, UOp sink, std::vector<KernelVariable> vars)
      : HostProgram(std::move(name), std::move(device)), sink_(std::move(sink)), vars_(std::move(vars)) {}
  void run(void* const* buffers, const int64_t* vars, int32_t, int32_t) const override { interpret_kernel(sink_, buffers, vars_, vars); }

 private:
  UOp sink_;
  std::vector<KernelVariable> vars_;
};

// A host device that runs each queue when it is submitted, on the caller's thread.
class ToyDevice final : public Device {
 public:
  explicit ToyDevice(std::string name) : Device(std::move(name)) {
    static const ToyTarget target;
    set_target(target);
  }
  void submit(const HWQueue& q) override { run(q.commands(), q.buffers(), q.scalars()); }
  std::shared_ptr<BoundQueue> bind(const HWQueue& q) override { return host_bound_copy(q); }
  void submit_bound(std::shared_ptr<const BoundQueue> b) override { run(b->commands, b->buffers, b->scalars); }
  bool host_memory() const override { return true; }

 protected:
  std::shared_ptr<const LoadedProgram> load(const UOp& program) override {
    const ProgramInfo& info = program_info(program);
    if (program_binary(program).rfind("TOY", 0) != 0) throw std::invalid_argument("TOY: not a toy binary");
    return std::make_shared<ToyProgram>(info.name, name(), program.src(0), info.vars);
  }

 private:
  void run(std::span<const Command> commands, std::span<void* const> buffers, std::span<const int64_t> scalars) {
    for (const Command& c : commands) {
      if (c.kind == CommandKind::kExec)
        static_cast<const HostProgram*>(c.program)->run(buffers.data() + c.buffers_begin, scalars.data() + c.scalars_begin, 0, 1);
      else if (c.kind == CommandKind::kCopy)
        std::memmove(c.dst, c.src, c.bytes);
      else if (c.kind == CommandKind::kSignal)
        c.signal->set(c.value);
      else if (c.kind == CommandKind::kTimestamp)
        c.signal->write_timestamp(static_cast<uint64_t>(monotonic_ns()));
      else if (c.kind == CommandKind::kWait)
        c.signal->wait(c.value);
    }
  }
};

[[maybe_unused]] const bool kToyRegistered = register_backend({
    .prefix = "TOY",
    .description = "a toy backend registered by a test file",
    .renderers = {"TXT", "ALT"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> {
      if (name.index > 99999) throw std::invalid_argument("device " + name.canonical() + ": the TOY backend has 100000 devices");
      g_toy_opened++;
      return std::make_unique<ToyDevice>(name.canonical());
    },
});

template <class F>
std::string error_of(F&& f) {
  return testing::error_of<std::exception>(std::forward<F>(f));
}

TEST(BackendRegistry, ABackendRegisteredFromATestFileRunsKernelsThroughItsOwnTargetAndLoader) {
  const std::string saved = default_device_name();
  set_default_device_name("TOY");
  Tensor x = Tensor({1.f, 2.f, 3.f});
  const float k = static_cast<float>(fresh());  // a kernel no earlier run compiled
  Tensor y = (x + k) * 2;
  set_default_device_name(saved);
  EXPECT_EQ(y.device(), "TOY");
  const int lowered = g_toy_lowered, rendered = g_toy_rendered, compiled = g_toy_compiled;
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{2 * (1 + k), 2 * (2 + k), 2 * (3 + k)}));
  EXPECT_GT(g_toy_lowered, lowered) << "the toy target's pipeline ran";
  EXPECT_GT(g_toy_rendered, rendered);
  EXPECT_GT(g_toy_compiled, compiled);
  EXPECT_EQ(&device("toy"), &device("TOY")) << "names are case-insensitive";
  EXPECT_EQ(&device("TOY:0"), &device("TOY")) << "index 0 is the first device";
  EXPECT_EQ(&device("TOY:0:TXT"), &device("TOY")) << "the default renderer is part of the canonical name";
  EXPECT_EQ(device("TOY:0:TXT").name(), "TOY");
}

TEST(BackendRegistry, EachCanonicalNameIsOneDeviceOpenedOnce) {
  Device& second = device("TOY:1");
  EXPECT_EQ(second.name(), "TOY:1");
  const int opened = g_toy_opened;
  EXPECT_EQ(&device("toy:1"), &second);
  EXPECT_EQ(&device("TOY:1:TXT"), &second);
  EXPECT_EQ(g_toy_opened, opened) << "no second open for another spelling";
  EXPECT_NE(&device("TOY:ALT"), &device("TOY")) << "another renderer is another device";
  EXPECT_EQ(device("TOY:ALT").name(), "TOY:ALT");
}

TEST(BackendRegistry, ThreadsAskingForANewDeviceAtOnceGetOneDeviceOpenedOnce) {
  const int opened = g_toy_opened, index = 1 + fresh();
  ASSERT_LE(index, 99999) << "more repeats than toy devices";
  const std::string name = "TOY:" + std::to_string(index) + ":ALT", lower = "toy:" + std::to_string(index) + ":alt";
  std::vector<Device*> got(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); i++) threads.emplace_back([&, i] { got[i] = &device(i % 2 ? lower : name); });
  for (std::thread& t : threads) t.join();
  for (Device* d : got) EXPECT_EQ(d, got[0]);
  EXPECT_EQ(got[0]->name(), name);
  EXPECT_EQ(g_toy_opened, opened + 1);
}

TEST(BackendRegistry, DeviceNamesParseInOnePlaceWithErrorsNamingTheTextAndTheExpectation) {
  DeviceName n = parse_device_name("nv:1");
  EXPECT_EQ(n.prefix, "NV");
  EXPECT_EQ(n.index, 1);
  EXPECT_EQ(n.renderer, "PTX") << "the NV backend's default renderer";
  EXPECT_EQ(n.canonical(), "NV:1");
  EXPECT_EQ(parse_device_name("CPU").canonical(), "CPU");
  EXPECT_EQ(parse_device_name("CPU:X86").canonical(), "CPU") << "X86 is the CPU's default renderer";
  EXPECT_EQ(parse_device_name("cpu:clang").canonical(), "CPU:CLANG");
  EXPECT_EQ(parse_device_name("REF").renderer, "");

  std::string e = error_of([] { parse_device_name("CPU:LLVM"); });
  EXPECT_NE(e.find("device 'CPU:LLVM': the CPU backend has no renderer LLVM; expected one of X86, CLANG"), std::string::npos) << e;
  e = error_of([] { parse_device_name("XPU"); });
  EXPECT_NE(e.find("device 'XPU': no backend named XPU"), std::string::npos) << e;
  EXPECT_NE(e.find("CPU"), std::string::npos) << "lists the backends there are: " << e;
  EXPECT_NE(e.find("TOY"), std::string::npos) << e;
  e = error_of([] { parse_device_name("CPU:CLANG:1"); });
  EXPECT_NE(e.find("'CLANG' is neither an index nor a renderer"), std::string::npos) << e;
  e = error_of([] { parse_device_name(""); });
  EXPECT_NE(e.find("not a device name"), std::string::npos) << e;
  e = error_of([] { parse_device_name("NV:1:2"); });
  EXPECT_NE(e.find("the index comes before the renderer"), std::string::npos) << e;
  e = error_of([] { parse_device_name("REF:PTX"); });
  EXPECT_NE(e.find("the REF backend has no renderer PTX; it takes no renderer suffix"), std::string::npos) << e;
  e = error_of([] { parse_device_name("N-V"); });
  EXPECT_NE(e.find("not a device name"), std::string::npos) << e;
  e = error_of([] { device("CPU:1"); });
  EXPECT_NE(e.find("the CPU backend has one device, CPU"), std::string::npos) << e;
  e = error_of([] { device("TOY:100000"); });
  EXPECT_NE(e.find("the TOY backend has 100000 devices"), std::string::npos) << "the backend's own error: " << e;
}

TEST(BackendRegistry, RegisteringABadOrDuplicatePrefixIsAnError) {
  auto open = [](const DeviceName& n) -> std::unique_ptr<Device> { return std::make_unique<ToyDevice>(n.canonical()); };
  std::string e = error_of([&] { register_backend({.prefix = "TOY", .description = "", .renderers = {}, .open = open}); });
  EXPECT_NE(e.find("a backend named TOY is registered already"), std::string::npos) << e;
  e = error_of([&] { register_backend({.prefix = "lower", .description = "", .renderers = {}, .open = open}); });
  EXPECT_NE(e.find("expected upper-case letters and digits"), std::string::npos) << e;
  e = error_of([&] { register_backend({.prefix = "NOOPEN", .description = "", .renderers = {}, .open = nullptr}); });
  EXPECT_NE(e.find("has no open function"), std::string::npos) << e;
  std::vector<std::string> prefixes = backend_prefixes();
  for (const char* p : {"CPU", "NV", "REF", "TOY"})
    EXPECT_NE(std::find(prefixes.begin(), prefixes.end(), p), prefixes.end()) << p << " is registered";
}

TEST(BackendRegistry, AProgramCompiledForAnotherTargetIsRecompiledForTheDeviceThatRunsIt) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  const float k = 1000.f + static_cast<float>(fresh());  // a kernel no earlier run compiled
  Tensor y = x * k;
  UOp linear = y.schedule_linear();
  UOp cpu_program = compile_program(linear.src(0), device("CPU").target()).program;
  std::vector<UOp> src = linear.src(0).src();
  src[0] = cpu_program;
  const int compiled = g_toy_compiled;
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {linear.src(0).replace_src(src)}), on_device("TOY"));
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{k, 2 * k, 3 * k}));
  EXPECT_EQ(g_toy_compiled, compiled + 1) << "the C program's kernel was compiled for the toy target";
}

}  // namespace
}  // namespace doorbell
