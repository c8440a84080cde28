// The timeline trace (hcq/trace.h) of a run on the CPU device, read back from the file: tracks per device queue and
// host thread, kernels with names and launch dims, a copy with its bytes, signal -> wait flows, schedule and compile
// spans; and nothing recorded while tracing is off.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <cstring>
#include <string>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "hcq/trace.h"
#include "scheduler/schedule.h"
#include "tests/hcq/trace_file.h"

// Counts allocations on every thread, for the check that a trace hook costs none while tracing is off. (GCC cannot
// see that the replaced new and delete pair malloc with free.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
std::atomic<uint64_t> g_allocations{0};
void* operator new(std::size_t bytes) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace doorbell {
namespace {

using testing::TraceEvent;
using testing::TraceFile;

std::string temp_path(const char* name) { return ::testing::TempDir() + "doorbell_trace_" + name + ".json"; }

UOp copy_call(const UOp& dst, const UOp& src) {
  return UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dtypes::void_, {}), dst, src});
}

TEST(Trace, ACpuRunHasKernelsWithNamesAndDimsACopyWithBytesFlowsAndHostSpans) {
  DOORBELL_SKIP_UNDER_PROFILE();
  const std::string path = temp_path("cpu_run");
  trace::start();
  Tensor x = Tensor({1.f, 2.f, 3.f, 4.f}).realize();
  Tensor y = (x * 3 + 7).sqrt();
  UOp linear = y.schedule_linear();
  UOp compiled = compile_linear(linear);
  run_linear(compiled);
  UOp a = new_buffer(dtypes::int32, 5), b = new_buffer(dtypes::int32, 5);
  std::memset(buffer_bytes(a).data(), 3, 20);
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {copy_call(b, a)}));
  trace::stop(path);
  ASSERT_FALSE(trace::recording());

  const TraceFile t = TraceFile::load(path);
  // The kernel: on the CPU device's compute queue, with the name and dims of its program.
  std::string kernel_name;
  for (const UOp& call : compiled.src())
    if (call.src(0).op() == Ops::PROGRAM) kernel_name = program_info(call.src(0)).name;
  ASSERT_FALSE(kernel_name.empty());
  const TraceEvent* kernel = nullptr;
  for (const TraceEvent* e : t.find("X", "kernel", "CPU", "compute"))
    if (e->name == kernel_name) kernel = e;
  ASSERT_NE(kernel, nullptr) << "no kernel " << kernel_name << " on CPU/compute";
  const testing::JsonValue& args = kernel->json->at("args");
  ASSERT_EQ(args.at("grid").array.size(), 3u);
  ASSERT_EQ(args.at("block").array.size(), 3u);
  EXPECT_GE(args.at("grid").array[0].number, 1);
  EXPECT_FALSE(args.at("launch").string.empty());
  EXPECT_GT(kernel->dur, 0) << "kernel-only time from the queue's timestamps";

  // The copy: its bytes, on the queue copies share with kernels on the CPU device.
  std::vector<const TraceEvent*> copies = t.find("X", "copy", "CPU", "compute");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]->json->at("args").at("bytes").number, 20);

  // Each submission's timeline signal ends a host wait: two runs, two flows at least.
  EXPECT_GE(testing::count_signal_to_wait_flows(t, "CPU", "compute"), 2);
  testing::expect_queue_tracks_in_order(t);

  // Host spans: the schedule of y, the compile of its kernel, both run_linear calls.
  EXPECT_FALSE(t.find("X", "schedule", "host").empty());
  bool compiled_span = false;
  for (const TraceEvent* e : t.find("X", "compile", "host")) compiled_span |= e->name == "compile " + kernel_name;
  EXPECT_TRUE(compiled_span) << "no span 'compile " << kernel_name << "'";
  EXPECT_EQ(t.find("X", "run", "host").size(), 2u);
  // The host's spans enclose the device's work they caused: the kernel ran within a run_linear span.
  bool within_run = false;
  for (const TraceEvent* r : t.find("X", "run", "host")) within_run |= r->ts <= kernel->ts && kernel->ts + kernel->dur <= r->ts + r->dur;
  EXPECT_TRUE(within_run) << "device times are on the host's clock";
  std::remove(path.c_str());
}

TEST(Trace, NothingIsRecordedWhileTracingIsOff) {
  DOORBELL_SKIP_UNDER_PROFILE();
  const std::string path = temp_path("off");
  trace::start();
  trace::stop(temp_path("before"));
  ASSERT_FALSE(trace::recording());
  Tensor x = Tensor({5.f, 6.f}).realize();
  (x - 1).realize();
  EXPECT_EQ(trace::write(path), 0u);
  const TraceFile t = TraceFile::load(path);
  EXPECT_TRUE(t.events.empty());
  std::remove(path.c_str());
  std::remove(temp_path("before").c_str());
}

TEST(Trace, AHostSpanCostsNoAllocationWhileTracingIsOff) {
  DOORBELL_SKIP_UNDER_PROFILE();
  trace::start();
  trace::stop(temp_path("off_alloc"));
  std::remove(temp_path("off_alloc").c_str());
  const std::string name = "a kernel name long enough to need the heap";
  const uint64_t before = g_allocations.load();
  {
    trace::Scope span("compile", "compile");
    if (span.active()) span.set_name("compile " + name);
    span.add("device", name);
    span.add("calls", 3);
    EXPECT_FALSE(span.active());
  }
  EXPECT_EQ(g_allocations.load(), before);
  // While recording, the same span allocates (its name and arguments): the counter sees a hook's allocations.
  trace::start();
  {
    trace::Scope span("compile", "compile");
    if (span.active()) span.set_name("compile " + name);
    span.add("device", name);
  }
  EXPECT_GT(g_allocations.load(), before);
  trace::stop(temp_path("on_alloc"));
  std::remove(temp_path("on_alloc").c_str());
}

TEST(Trace, AnUnwritablePathIsAnErrorNamingIt) {
  DOORBELL_SKIP_UNDER_PROFILE();
  trace::start();
  try {
    trace::stop("/nonexistent/folder/trace.json");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '/nonexistent/folder/trace.json'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(trace::recording());
}

TEST(Trace, TheJsonReaderRefusesBrokenText) {
  EXPECT_THROW(testing::parse_json("{\"traceEvents\":[{\"ph\":\"X\",}]}"), std::runtime_error);
  EXPECT_THROW(testing::parse_json("[1, 2"), std::runtime_error);
  const testing::JsonValue v = testing::parse_json(R"({"a":[1.5,-2e3,"x\"y\u0041"],"b":true,"c":null})");
  EXPECT_EQ(v.at("a").array[1].number, -2000);
  EXPECT_EQ(v.at("a").array[2].string, "x\"yA");
  EXPECT_TRUE(v.at("b").boolean);
}

}  // namespace
}  // namespace doorbell
