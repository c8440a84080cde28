// NV dispatch on the emulated GPU (mockgpu/nv): a queue of 100 chained kernels and a signal, dispatched again with a
// new signal value and a new output buffer. Measured in the same run, alternating each iteration:
//   bound:     the queue bound once; patch_value + patch_buffer rewrite 2 + 2 words in GPU memory and submit rings the
//              doorbell for the bound pushbuffer (no encoding);
//   re-encode: the same queue unbound, patched on the host and submitted: every submit encodes its 100 QMDs, cbufs
//              and methods into the rings again (what a bound queue did before it was patched in place).
// The figure is the host time of patch + submit (the kernels' run on the emulator is waited for after it, and
// reported separately); the ratio median(re-encode) / median(bound) is reported. No assertion on time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/nv/nv_device.h"
#include "hcq/wait_primitives.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

constexpr int kKernels = 100;

double median(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

void BM_NvPatchResubmitVsReencode(benchmark::State& state) {
  std::unique_ptr<NvDevice> d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  UOp call = (Tensor::empty({1}) + 1).schedule_linear().src(0);
  UOp program = compile_program(call, d->target()).program;
  const LoadedProgram& k = d->program(program);
  NvMemory in = d->alloc(4), out_a = d->alloc(4), out_b = d->alloc(4);
  std::memset(in.cpu, 0, 4);
  Signal& bound_done = d->new_signal("bound done");
  Signal& unbound_done = d->new_signal("unbound done");
  auto record = [&](HWQueue& q, Signal& done) {
    const std::vector<uint64_t> args{out_a.va, in.va};
    for (int i = 0; i < kKernels; i++) q.exec(k, args, {1, 1, 1}, {1, 1, 1});
    q.signal(done, 0);
  };
  HWQueue bound, unbound;
  record(bound, bound_done);
  record(unbound, unbound_done);
  bound.bind(*d);
  std::vector<int64_t> bound_ns, reencode_ns, bound_done_ns, reencode_done_ns;
  uint64_t value = 0;
  for (auto _ : state) {
    ++value;
    void* out = reinterpret_cast<void*>(value % 2 ? out_b.va : out_a.va);
    for (HWQueue* q : {&bound, &unbound}) {
      const int64_t t0 = monotonic_ns();
      q->patch_value(kKernels, value);
      q->patch_buffer(kKernels - 1, 0, out);
      q->submit(*d);
      const int64_t t1 = monotonic_ns();
      (q == &bound ? bound_ns : reencode_ns).push_back(t1 - t0);
      (q == &bound ? bound_done : unbound_done).wait(value);
      (q == &bound ? bound_done_ns : reencode_done_ns).push_back(monotonic_ns() - t0);
    }
  }
  const double b = median(bound_ns), r = median(reencode_ns);
  state.counters["kernels"] = kKernels;
  state.counters["median_bound_patch_submit_ns"] = b;
  state.counters["median_reencode_submit_ns"] = r;
  state.counters["reencode_over_bound"] = b > 0 ? r / b : 0;
  // Patch + submit until the host sees the signal: mostly the emulator running the 100 kernels.
  state.counters["median_bound_to_done_ns"] = median(bound_done_ns);
  state.counters["median_reencode_to_done_ns"] = median(reencode_done_ns);
}
BENCHMARK(BM_NvPatchResubmitVsReencode)->Iterations(300)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace doorbell::nv
