// The LLVM IR renderer's semantics, checked on the CPU: no AMD GPU is needed to know whether the IR computes what
// the reference interpreter computes. The same renderer is pointed at x86-64 (LlvmIrTarget: default address
// spaces, thread indices from functions the harness defines), clang-19 compiles the IR with a small C harness that
// runs every block and thread of the launch, and the outputs must equal the interpreter's (run_linear on the
// scheduler's kernel) byte for byte; programs with transcendentals within a relative tolerance.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/common/random_tensors.h"
#include "compiler/c_renderer.h"
#include "compiler/cpu/clang_compiler.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"

namespace doorbell {
namespace {

// The grid on the CPU: the thread-index functions the x86 IR calls, and per kernel a db_run_<name> that walks the
// grid. One harness and every kernel of a program compile in one clang run.
constexpr const char* kHarnessPrelude = R"C(
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>
static int32_t db_g[3], db_l[3];
int32_t db_gx(void) __asm__("doorbell.gid.x"); int32_t db_gx(void) { return db_g[0]; }
int32_t db_gy(void) __asm__("doorbell.gid.y"); int32_t db_gy(void) { return db_g[1]; }
int32_t db_gz(void) __asm__("doorbell.gid.z"); int32_t db_gz(void) { return db_g[2]; }
int32_t db_lx(void) __asm__("doorbell.lid.x"); int32_t db_lx(void) { return db_l[0]; }
int32_t db_ly(void) __asm__("doorbell.lid.y"); int32_t db_ly(void) { return db_l[1]; }
int32_t db_lz(void) __asm__("doorbell.lid.z"); int32_t db_lz(void) { return db_l[2]; }
static void** db_b;
static int db_n;
#define DB_CALL(KERNEL)                                                                                             \
  switch (db_n) {                                                                                                   \
    case 1: KERNEL(db_b[0]); break;                                                                                 \
    case 2: KERNEL(db_b[0], db_b[1]); break;                                                                        \
    case 3: KERNEL(db_b[0], db_b[1], db_b[2]); break;                                                               \
    case 4: KERNEL(db_b[0], db_b[1], db_b[2], db_b[3]); break;                                                      \
    case 5: KERNEL(db_b[0], db_b[1], db_b[2], db_b[3], db_b[4]); break;                                             \
    case 6: KERNEL(db_b[0], db_b[1], db_b[2], db_b[3], db_b[4], db_b[5]); break;                                    \
  }
static void db_set_ids(int64_t gx, int64_t gy, int64_t gz, int64_t t, const int64_t* ls) {
  db_g[0] = gx; db_g[1] = gy; db_g[2] = gz;
  db_l[0] = t % ls[0]; db_l[1] = t / ls[0] % ls[1]; db_l[2] = t / (ls[0] * ls[1]);
}
/* Kernels without barriers: every thread of the grid in turn. */
#define DB_RUN(KERNEL)                                                                                              \
  void KERNEL();                                                                                                    \
  int db_run_##KERNEL(void** b, int n, const int64_t* gs, const int64_t* ls) {                                      \
    if (n < 1 || n > 6) return -1;                                                                                  \
    db_b = b; db_n = n;                                                                                             \
    for (int64_t gz = 0; gz < gs[2]; gz++) for (int64_t gy = 0; gy < gs[1]; gy++) for (int64_t gx = 0; gx < gs[0]; gx++) \
    for (int64_t t = 0; t < ls[0] * ls[1] * ls[2]; t++) { db_set_ids(gx, gy, gz, t, ls); DB_CALL(KERNEL) }          \
    return 0;                                                                                                       \
  }
/* Kernels with barriers: each thread of a block is a ucontext fiber; doorbell.barrier switches back to the block's
   scheduler, which resumes the threads in turn once all of them wait. A thread that returns while others wait at a
   barrier would hang a GPU: the run fails with -2. */
enum { kDbMaxThreads = 1024, kDbStack = 64 * 1024 };
static ucontext_t db_sched, db_ctx[kDbMaxThreads];
static int db_state[kDbMaxThreads];  /* 0 runnable, 1 waiting at the barrier, 2 returned */
static int db_cur;
static char* db_stacks;
__attribute__((destructor)) static void db_free_stacks(void) { free(db_stacks); }  /* at dlclose */
void db_barrier(void) __asm__("doorbell.barrier");
void db_barrier(void) { db_state[db_cur] = 1; swapcontext(&db_ctx[db_cur], &db_sched); }
static int db_run_blocks(void (*entry)(void), void** b, int n, const int64_t* gs, const int64_t* ls) {
  int64_t threads = ls[0] * ls[1] * ls[2];
  if (n < 1 || n > 6 || threads > kDbMaxThreads) return -1;
  if (!db_stacks && !(db_stacks = malloc((size_t)kDbMaxThreads * kDbStack))) return -3;
  db_b = b; db_n = n;
  for (int64_t gz = 0; gz < gs[2]; gz++) for (int64_t gy = 0; gy < gs[1]; gy++) for (int64_t gx = 0; gx < gs[0]; gx++) {
    for (int64_t t = 0; t < threads; t++) {
      db_state[t] = 0;
      getcontext(&db_ctx[t]);
      db_ctx[t].uc_stack.ss_sp = db_stacks + t * kDbStack;
      db_ctx[t].uc_stack.ss_size = kDbStack;
      db_ctx[t].uc_link = &db_sched;
      makecontext(&db_ctx[t], entry, 0);
    }
    for (;;) {
      int waiting = 0, returned = 0;
      for (int64_t t = 0; t < threads; t++) {
        if (db_state[t] == 2) { returned++; continue; }
        db_state[t] = 0;
        db_cur = (int)t;
        db_set_ids(gx, gy, gz, t, ls);
        swapcontext(&db_sched, &db_ctx[t]);
        if (db_state[t] == 1) waiting++; else returned++;
      }
      if (!waiting) break;
      if (returned) return -2;
    }
  }
  return 0;
}
#define DB_RUN_WITH_BARRIERS(KERNEL)                                                                                 \
  void KERNEL();                                                                                                    \
  static void db_entry_##KERNEL(void) { DB_CALL(KERNEL) db_state[db_cur] = 2; }                                     \
  int db_run_##KERNEL(void** b, int n, const int64_t* gs, const int64_t* ls) {                                      \
    return db_run_blocks(db_entry_##KERNEL, b, n, gs, ls);                                                          \
  }
)C";

LlvmIrTarget x86_target() {
  LlvmIrTarget t;
  t.triple = "x86_64-pc-linux-gnu";
  t.datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128";
  t.group_id_intrinsic = "doorbell.gid";
  t.local_id_intrinsic = "doorbell.lid";
  t.barrier_function = "doorbell.barrier";  // the harness's fiber switch
  return t;
}

using RunGrid = int (*)(void**, int, const int64_t*, const int64_t*);

// A shared library of kernels compiled from their x86 IR (one clang run for all), with a grid runner per kernel.
class CpuKernels {
 public:
  // `kernels`: (name, IR) pairs.
  explicit CpuKernels(const std::vector<std::pair<std::string, std::string>>& kernels) {
    std::optional<std::string> cc = find_c_compiler();
    if (!cc) throw std::runtime_error("no C compiler on PATH");
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("doorbell-llcpu-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    std::string harness = kHarnessPrelude, inputs;
    for (size_t i = 0; i < kernels.size(); i++) {
      bool barriers = kernels[i].second.find("@doorbell.barrier") != std::string::npos;
      harness += (barriers ? "DB_RUN_WITH_BARRIERS(" : "DB_RUN(") + kernels[i].first + ")\n";
      std::filesystem::path ll = dir_ / ("k" + std::to_string(i) + ".ll");
      std::ofstream(ll) << kernels[i].second;
      inputs += " " + ll.string();
    }
    std::ofstream(dir_ / "harness.c") << harness;
    std::filesystem::path so = dir_ / "kernels.so";
    std::string cmd = *cc + " -O2 -shared -fPIC -w -std=gnu17 " + (dir_ / "harness.c").string() + inputs + " -o " +
                      so.string() + " 2>" + (dir_ / "err.txt").string();
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream e(dir_ / "err.txt");
      std::string err((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
      throw std::runtime_error("clang failed on the x86 IR: " + err);
    }
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  }
  ~CpuKernels() {
    if (handle_) dlclose(handle_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  CpuKernels(const CpuKernels&) = delete;
  CpuKernels& operator=(const CpuKernels&) = delete;

  int run(const std::string& name, const GpuKernel& k, std::vector<void*> bufs) const {
    auto run = reinterpret_cast<RunGrid>(dlsym(handle_, ("db_run_" + name).c_str()));
    if (!run) throw std::runtime_error("no runner for " + name);
    return run(bufs.data(), static_cast<int>(bufs.size()), k.global_size.data(), k.local_size.data());
  }

 private:
  std::filesystem::path dir_;
  void* handle_ = nullptr;
};

// Every kernel of the program: the interpreter's result, then the rendered IR's on the same inputs. All kernels are
// rendered and compiled first (one clang run), then run in schedule order, each on the reference's inputs.
// With `optimized`, kernels go through the GPU optimizer (grouped reductions, upcasts) instead of lower_for_gpu alone.
void expect_same_as_interpreter(const std::vector<Tensor>& outs, bool exact, const char* arch = "gfx1100",
                                bool optimized = false) {
  UOp linear = Tensor::schedule_linear(outs);
  std::vector<std::pair<std::string, std::string>> irs;
  std::vector<GpuKernel> lowered;
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() != Ops::SINK) continue;
    lowered.push_back(optimized ? optimize_for_gpu(call.src(0), gpu_target(arch)) : lower_for_gpu(call.src(0), gpu_target(arch)));
    std::string name = c_kernel_name(call.src(0));
    irs.emplace_back(name, render_llvm_ir(name, lowered.back(), x86_target()));
  }
  std::unique_ptr<CpuKernels> lib;
  try {
    lib = std::make_unique<CpuKernels>(irs);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  size_t next = 0;
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() != Ops::SINK) {
      run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
      continue;
    }
    const UOp& sink = call.src(0);
    const GpuKernel& k = lowered[next];
    const std::string& name = irs[next].first;
    const std::string& ir = irs[next].second;
    next++;
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
    std::vector<std::vector<std::byte>> want;
    std::vector<void*> bufs;
    std::vector<DType> dts;
    for (size_t i = 1; i < call.src().size(); i++) {
      std::span<std::byte> b = buffer_bytes(call.src(i));
      want.emplace_back(b.begin(), b.end());
      bufs.push_back(b.data());
    }
    std::vector<bool> stored(bufs.size(), false);
    for (const UOp& u : sink.toposort())
      if (u.op() == Ops::STORE) {
        const ParamArg& p = u.src(0).src(0).arg_as<ParamArg>();
        stored.at(p.slot) = true;
        dts.resize(bufs.size());
        dts[p.slot] = u.src(0).src(0).dtype();
      }
    for (size_t i = 0; i < bufs.size(); i++)
      if (stored[i]) std::memset(bufs[i], 0xAB, want[i].size());
    EXPECT_EQ(lib->run(name, k, bufs), 0) << name;
    for (size_t i = 0; i < bufs.size(); i++) {
      if (!stored[i]) continue;
      std::span<std::byte> got = buffer_bytes(call.src(i + 1));
      if (exact || !dts[i].is_float() || dts[i].itemsize() != 4) {
        EXPECT_EQ(std::memcmp(got.data(), want[i].data(), want[i].size()), 0) << "buffer " << i << " of " << name << " differs\n" << ir;
      } else {
        const float* g = reinterpret_cast<const float*>(got.data());
        const float* w = reinterpret_cast<const float*>(want[i].data());
        for (size_t j = 0; j < want[i].size() / 4; j++)
          EXPECT_NEAR(g[j], w[j], 1e-5 * std::max(1.0f, std::fabs(w[j]))) << "element " << j;
      }
      std::memcpy(got.data(), want[i].data(), want[i].size());  // the next kernel reads the reference's values
    }
  }
}

using testing::kIntDtypes;
using testing::random_ints;
using testing::random_nonzero;

TEST(AmdgpuLlvmIrOnCpu, IntegerArithmeticWrapsAndDividesLikeTheInterpreter) {
  Tensor::manual_seed(1);
  for (DType d : kIntDtypes) {
    SCOPED_TRACE(d.name());
    Tensor a = random_ints(d, 301, -120, 120), b = random_nonzero(d, 301);
    expect_same_as_interpreter({a * b + a, a - b, a.maximum(b), a.lt(b).where(a, b), a.floordiv(b), a.mod(b),
                                a.bitwise_xor(b), a.rshift(1), a.lshift(2)}, true);
  }
}

// What C leaves undefined (shifts out of range, division by zero, INT_MIN / -1, float -> int of NaN, inf and
// out-of-range values) computes the interpreter's defined values (ir/exec_alu.h): LLVM IR's shl / fptosi would be
// poison there without lower_late's guards.
TEST(AmdgpuLlvmIrOnCpu, OpsUndefinedInCGiveTheInterpretersDefinedValues) {
  for (DType d : {dtypes::int8, dtypes::int32, dtypes::uint32, dtypes::int64}) {
    SCOPED_TRACE(d.name());
    Tensor a = Tensor(std::vector<int64_t>{1, -8, INT32_MIN, 7, -7, 255, INT64_MIN, 3}, {8}, d);
    Tensor s = Tensor(std::vector<int64_t>{33, 1, 31, -1, 64, 8, 65, 0}, {8}, d);
    Tensor b = Tensor(std::vector<int64_t>{0, -1, -1, 0, 2, 0, -1, 3}, {8}, d);
    expect_same_as_interpreter({a.lshift(s), a.rshift(s), a.floordiv(b), a.mod(b)}, true);
  }
  Tensor f = Tensor(std::vector<double>{NAN, INFINITY, -INFINITY, 1e20, -1e20, 300.75, -1.5, 65535.9}, {8}, dtypes::float32);
  std::vector<Tensor> outs;
  for (DType d : {dtypes::int8, dtypes::uint8, dtypes::int16, dtypes::int32, dtypes::uint32, dtypes::int64, dtypes::uint64})
    outs.push_back(f.cast(d)), outs.push_back(f.cast(dtypes::float64).cast(d));
  expect_same_as_interpreter(outs, true);
}

TEST(AmdgpuLlvmIrOnCpu, HalfAndBfloat16RoundAfterEveryOpLikeTheInterpreter) {
  Tensor::manual_seed(2);
  for (DType d : {dtypes::float16, dtypes::bfloat16}) {
    SCOPED_TRACE(d.name());
    Tensor a = (Tensor::randn({257}) * 40).cast(d).realize(), b = (Tensor::randn({257}) * 3).cast(d).realize();
    expect_same_as_interpreter({a * b + a, a / b, a.maximum(b), a.abs().sqrt(), -a, a.reciprocal()}, true);
    expect_same_as_interpreter({a.reshape({257, 1}).expand({257, 3}).sum(0)}, true);
  }
}

TEST(AmdgpuLlvmIrOnCpu, Float32ToHalfRoundingEdgeCasesMatchTheInterpreterBitForBit) {
  // Ties to even in normal and subnormal float16 ranges, underflow to zero, overflow to inf, NaN, signed zeros.
  const float t = std::ldexp(1.0f, -25);  // half of the smallest float16 subnormal
  std::vector<float> v{0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, 65519.99f, 1e-8f, t, t * 1.0001f, 2 * t, 3 * t, 5 * t,
                       std::ldexp(1.0f, -14), std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25), 1 + std::ldexp(1.0f, -11),
                       1 + 3 * std::ldexp(1.0f, -11), INFINITY, -INFINITY, NAN, -NAN, 1e10f, -1e-30f, -3 * t,
                       1 + std::ldexp(1.0f, -8), 1 + 3 * std::ldexp(1.0f, -8), 3.3895314e38f};
  Tensor x = Tensor::from_data(v, {static_cast<int64_t>(v.size())}).realize();
  expect_same_as_interpreter({x.cast(dtypes::float16)}, true);
  expect_same_as_interpreter({x.cast(dtypes::bfloat16)}, true);
  expect_same_as_interpreter({x.cast(dtypes::float16).cast(dtypes::float32)}, true);
}

TEST(AmdgpuLlvmIrOnCpu, CastsBetweenEveryPairMatchTheInterpreter) {
  Tensor::manual_seed(3);
  std::vector<DType> all{dtypes::bool_, dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64};
  for (DType d : kIntDtypes) all.push_back(d);
  for (DType from : all) {
    Tensor x = (Tensor::rand({67}) * 100).cast(from).realize();  // in [0, 100): every cast is defined
    std::vector<Tensor> outs;
    for (DType to : all)
      if (!(to == from)) outs.push_back(x.cast(to));
    SCOPED_TRACE(from.name());
    expect_same_as_interpreter(outs, true);  // one schedule, one clang run for the 12 casts
  }
}

TEST(AmdgpuLlvmIrOnCpu, ReductionsMovementAndMatmulMatchTheInterpreter) {
  Tensor::manual_seed(4);
  Tensor x = Tensor::randn({6, 7, 8}).realize();
  for (int64_t axis = 0; axis < 3; axis++) expect_same_as_interpreter({x.sum(axis), x.max(axis)}, true);
  expect_same_as_interpreter({x.pad({{1, 1}, {0, 2}, {3, 0}}).flip({0, 2}) + 1}, true);
  expect_same_as_interpreter({x.shrink({{1, 5}, {2, 7}, {0, 8}}) * 2}, true);
  Tensor a = Tensor::randn({17, 33}).realize(), b = Tensor::randn({33, 9}).realize();
  expect_same_as_interpreter({a.matmul(b)}, false);
  Tensor c = Tensor::randint({300}, -5, 5).realize();
  expect_same_as_interpreter({c.gt(0).any(), c.lt(3).all(), c.sum(), c.cast(dtypes::int64).prod()}, true);
}

TEST(AmdgpuLlvmIrOnCpu, TranscendentalsSoftmaxAndPowAreWithinTolerance) {
  Tensor::manual_seed(5);
  Tensor x = Tensor::randn({7, 33}).realize();
  expect_same_as_interpreter({x.softmax(-1)}, false);
  expect_same_as_interpreter({x.exp(), x.sin(), x.abs().log()}, false);
  Tensor base = (Tensor::rand({64}) * 4 + 0.1).realize(), e = (Tensor::rand({64}) * 4 - 2).realize();
  expect_same_as_interpreter({base.pow(e)}, false);
  Tensor neg = (Tensor::rand({64}) * -3 - 0.5).realize();
  expect_same_as_interpreter({neg.pow(3.0), neg.pow(2.0)}, false);
}

// Grouped reductions (compiler/gpu/group_reduce.h): lanes of a block, a local buffer and a barrier. Integer-valued
// floats sum exactly in any order, so those compare bit for bit like the integer, bool and max reductions.
TEST(AmdgpuLlvmIrOnCpu, GroupedReductionsThroughLocalMemoryAndBarriersMatchTheInterpreter) {
  Tensor::manual_seed(6);
  Tensor f = Tensor::randint({1000}, -50, 50).cast(dtypes::float32).realize();
  Tensor odd = Tensor::randn({70001}).realize();  // 70001 = 273 * 256 + 113: the last lanes combine the identity
  Tensor rows = Tensor::randint({13, 1000}, -9, 9).realize();
  Tensor b = Tensor::randint({300}, -5, 5).realize();
  expect_same_as_interpreter({f.sum(), f.max(), (-f).max()}, true, "gfx1100", true);
  expect_same_as_interpreter({odd.max(), (-odd).max()}, true, "gfx1100", true);
  expect_same_as_interpreter({rows.sum(1), rows.max(1), rows.sum(0)}, true, "gfx1100", true);
  expect_same_as_interpreter({rows.reshape({13, 50, 20}).sum()}, true, "gfx1100", true);  // two ranges flattened
  expect_same_as_interpreter({b.gt(0).any(), b.lt(3).all(), b.cast(dtypes::int64).prod()}, true, "gfx1100", true);
  expect_same_as_interpreter({f.cast(dtypes::float16).sum(), f.cast(dtypes::int8).sum()}, true, "gfx942", true);
}

TEST(AmdgpuLlvmIrOnCpu, GroupedFloatSumsSoftmaxAndMeanAreWithinTolerance) {
  Tensor::manual_seed(7);
  Tensor x = Tensor::randn({70001}).realize(), m = Tensor::randn({7, 333}).realize();
  expect_same_as_interpreter({x.sum(), x.mean()}, false, "gfx1100", true);
  expect_same_as_interpreter({m.softmax(-1), m.sum(1), m.sum(0)}, false, "gfx1100", true);
  expect_same_as_interpreter({m.matmul(m.transpose()), (m * m).sum(1).sqrt()}, false, "gfx942", true);
}

}  // namespace
}  // namespace doorbell
