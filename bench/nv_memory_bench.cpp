// NV memory on the emulated driver and GPU (mockgpu/nv), each figure against its baseline measured in the same run:
// - BM_NvAllocation: an allocate_storage + release_storage pair through the sub-allocator (hcq/suballocator.h),
//   against the old path (one RM allocation per buffer: NvDevice::set_suballocation(false), DOORBELL_NV_SUBALLOC=0)
//   on a second emulated GPU. Counters: ns per pair for both, and rm_over_suballoc, how many times faster the
//   sub-allocator is. The emulated RM answers an ioctl with a function call, so the real driver's gap is larger.
// - BM_NvCopyIn / BM_NvCopyOut: host <-> buffer transfers through the staged copy engine (NvDevice::copy_in/out)
//   against a plain memcpy through the buffer's mapping (Device::copy_in/out). Counters: GB/s of both and
//   staged_over_memcpy. On the emulator the copy engine is a host thread doing memcpy, so the staged path pays an
//   extra copy and cannot win here: the figure is the emulator's, not the hardware's.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "hcq/nv/nv_device.h"
#include "hcq/wait_primitives.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::nv {
namespace {

std::unique_ptr<NvDevice> open_emulated(bool suballocate) {
  auto d = NvDevice::open(std::make_unique<mockgpu::nv::MockNvSeam>());
  d->set_suballocation(suballocate);
  return d;
}

// Until the bring-up's submissions ran, freed memory is retired (released later): wait, so that every pair below
// really frees.
void settle(NvDevice& d) {
  const int64_t give_up = monotonic_ns() + int64_t{20'000'000'000};
  while (d.retired_count() != 0 && monotonic_ns() < give_up) std::this_thread::yield();
}

// `count` buffers of mixed sizes (256 B to 64 KiB) allocated, then released; ns per allocate + release pair.
double allocation_round(NvDevice& d, std::vector<Device::Storage>& held, size_t count) {
  const int64_t t0 = monotonic_ns();
  for (size_t i = 0; i < count; i++) held.push_back(d.allocate_storage(size_t{256} << (i % 9)));
  for (const Device::Storage& s : held) d.release_storage(s);
  const int64_t t1 = monotonic_ns();
  held.clear();
  return static_cast<double>(t1 - t0) / static_cast<double>(count);
}

void BM_NvAllocation(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  std::unique_ptr<NvDevice> sub = open_emulated(true), rm = open_emulated(false);
  // A buffer so that the sub-allocator's chunk stays (as in a running program) and the first pairs pay no growth.
  Device::Storage resident = sub->allocate_storage(64);
  settle(*sub);
  settle(*rm);
  std::vector<Device::Storage> held;
  held.reserve(count);
  double sub_ns = 0, rm_ns = 0;
  for (auto _ : state) {
    const double s = allocation_round(*sub, held, count);
    const double r = allocation_round(*rm, held, count);
    sub_ns += s;
    rm_ns += r;
    state.SetIterationTime(s * static_cast<double>(count) * 1e-9);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["suballoc_ns_per_pair"] = sub_ns / n;
  state.counters["rm_ns_per_pair"] = rm_ns / n;
  state.counters["rm_over_suballoc"] = rm_ns / sub_ns;
  sub->release_storage(resident);
}
BENCHMARK(BM_NvAllocation)->Arg(64)->UseManualTime()->Unit(benchmark::kMicrosecond);

// ns to move `bytes` once with `move`.
template <class Move>
double time_ns(Move&& move) {
  const int64_t t0 = monotonic_ns();
  move();
  return static_cast<double>(monotonic_ns() - t0);
}

void transfer(benchmark::State& state, bool in) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::unique_ptr<NvDevice> d = open_emulated(true);
  Device::Storage s = d->allocate_storage(bytes);
  std::vector<uint8_t> host(bytes, 0x5a);
  auto staged = [&] { in ? d->copy_in(s, 0, host.data(), bytes) : d->copy_out(host.data(), s, 0, bytes); };
  auto mapped = [&] { in ? d->Device::copy_in(s, 0, host.data(), bytes) : d->Device::copy_out(host.data(), s, 0, bytes); };
  staged();  // the staging ring is allocated on first use; pages touched once
  mapped();
  double staged_ns = 0, memcpy_ns = 0;
  for (auto _ : state) {
    const double a = time_ns(staged), b = time_ns(mapped);
    staged_ns += a;
    memcpy_ns += b;
    state.SetIterationTime(a * 1e-9);
  }
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["staged_GBps"] = total / staged_ns;
  state.counters["memcpy_GBps"] = total / memcpy_ns;
  state.counters["staged_over_memcpy"] = memcpy_ns / staged_ns;  // > 1: the staged path is faster
  d->release_storage(s);
}
void BM_NvCopyIn(benchmark::State& state) { transfer(state, true); }
void BM_NvCopyOut(benchmark::State& state) { transfer(state, false); }
BENCHMARK(BM_NvCopyIn)->Arg(1 << 20)->Arg(16 << 20)->Arg(64 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NvCopyOut)->Arg(1 << 20)->Arg(16 << 20)->Arg(64 << 20)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace doorbell::nv
