// The two ways an HCQ agent (host thread, CPU dispatcher, CPU worker) waits for a 32-bit word to change: spin for a
// bounded time, so that back-to-back work stays hot (a spinning handoff costs ~0.1 us, a sleeping one ~60 us), then
// sleep in the kernel on a futex so that an idle device burns no CPU. Wakers pay for the futex syscall only when a
// sleeper has announced itself in a counter.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace doorbell {

// A spinner polls without yielding for this long, then yields the core between polls until its spin budget ends.
// When the machine has fewer free cores than spinning threads (the host thread counts), a pure spinner holds the
// core that the thread it waits for needs (measured on 2 cores busy with compiles: 28 us median per one-thread
// dispatch when pure-spinning, 6 us when yielding); on an idle machine a handoff completes within this window.
inline constexpr int64_t kPureSpinNs = 1'000;

// Nanoseconds on CLOCK_MONOTONIC: the clock of every HCQ timestamp on the CPU device.
int64_t monotonic_ns();

// Tells the core that this is a spin loop (x86 PAUSE), which saves power and frees the sibling hyperthread.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Between spin polls: nothing during the first pure_spin_ns of a spin, then sched_yield.
void spin_pause(int64_t spun_ns, int64_t pure_spin_ns = kPureSpinNs);

// Sleeps while the 32-bit word at `word` equals `expected`, for at most timeout_ns. May return early (wake,
// mismatch, signal); callers re-check their condition.
void futex_wait(const void* word, uint32_t expected, int64_t timeout_ns);
void futex_wake_all(const void* word);

// Returns the word's value once it differs from `old`: spins for spin_ns (yielding the core after pure_spin_ns),
// then sleeps (in slices of at most slice_ns so a caller can also poll something else; 0 = no limit). Returns
// `old` when a slice ends unchanged.
uint32_t await_change(const std::atomic<uint32_t>& word, uint32_t old, std::atomic<uint32_t>& sleepers,
                      int64_t spin_ns, int64_t slice_ns = 0, int64_t pure_spin_ns = kPureSpinNs);
// Call after changing `word` (with a seq_cst store or read-modify-write): wakes the sleepers of await_change.
void notify_change(const std::atomic<uint32_t>& word, const std::atomic<uint32_t>& sleepers);

// A partner thread that echoes every value written to it: one round trip between two spinning threads, the floor of
// any handoff (the baseline the CPU device's dispatch latency is measured against in bench_hcq and doorbell bench).
class SpinEcho {
 public:
  // partner_cpu >= 0: the partner runs on that CPU only (a benchmark then pairs the same CPUs as the device's
  // threads it compares with); -1: wherever the scheduler puts it.
  explicit SpinEcho(int partner_cpu = -1);
  ~SpinEcho();
  SpinEcho(const SpinEcho&) = delete;
  SpinEcho& operator=(const SpinEcho&) = delete;
  // Hands `value` (non-zero, different from the last) to the partner and spins until it comes back.
  void round_trip(uint64_t value);

 private:
  // ping and pong share a cache line: each handoff then moves one line (measured: 64 ns against about 100 ns with
  // a line each on this machine)
  alignas(64) std::atomic<uint64_t> ping_{0};
  std::atomic<uint64_t> pong_{0};
  alignas(64) std::atomic<bool> stop_{false};
  std::thread partner_;
};

// Keeps the calling thread on one CPU while it lives, then gives back the CPUs it had (cpu < 0: changes nothing).
// Benchmarks use it to put the host thread where the floor they compare with was measured.
class ThreadPin {
 public:
  explicit ThreadPin(int cpu);
  ~ThreadPin();
  ThreadPin(const ThreadPin&) = delete;
  ThreadPin& operator=(const ThreadPin&) = delete;

 private:
  bool pinned_ = false;
  alignas(8) unsigned char old_[128];  // the previous cpu_set_t (1024 CPUs), kept opaque to spare the header <sched.h>
};

// The CPUs the calling thread may run on, in order.
std::vector<int> allowed_cpus();

}  // namespace doorbell
