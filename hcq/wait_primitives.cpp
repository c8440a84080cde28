#include "hcq/wait_primitives.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>

#include <climits>
#include <cstring>
#include <ctime>

namespace doorbell {

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void spin_pause(int64_t spun_ns, int64_t pure_spin_ns) {
  if (spun_ns >= pure_spin_ns) sched_yield();
}

void futex_wait(const void* word, uint32_t expected, int64_t timeout_ns) {
  if (timeout_ns <= 0) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
  // The result is ignored on purpose: EAGAIN (value already changed), EINTR and ETIMEDOUT all mean "re-check".
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}

void futex_wake_all(const void* word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0); }

uint32_t await_change(const std::atomic<uint32_t>& word, uint32_t old, std::atomic<uint32_t>& sleepers,
                      int64_t spin_ns, int64_t slice_ns, int64_t pure_spin_ns) {
  uint32_t now = word.load(std::memory_order_acquire);
  if (now != old) return now;
  const int64_t spin_start = monotonic_ns();
  // Reading the clock costs ~20 ns, so it is read once per 32 polls.
  while (true) {
    for (int i = 0; i < 32; ++i) {
      cpu_relax();
      now = word.load(std::memory_order_acquire);
      if (now != old) return now;
    }
    const int64_t spun = monotonic_ns() - spin_start;
    if (spun >= spin_ns) break;
    spin_pause(spun, pure_spin_ns);
  }
  // Announce the sleeper before the final check (both seq_cst): a waker that changed the word either sees the
  // announcement and wakes us, or we see its change here and do not sleep.
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  now = word.load(std::memory_order_seq_cst);
  if (now == old) futex_wait(&word, old, slice_ns > 0 ? slice_ns : int64_t{3'600'000'000'000});
  sleepers.fetch_sub(1, std::memory_order_seq_cst);
  return word.load(std::memory_order_acquire);
}

void notify_change(const std::atomic<uint32_t>& word, const std::atomic<uint32_t>& sleepers) {
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&word);
}

SpinEcho::SpinEcho(int partner_cpu)
    : partner_([this, partner_cpu] {
        ThreadPin pin(partner_cpu);
        uint64_t seen = 0;
        while (!stop_.load(std::memory_order_relaxed)) {
          const uint64_t p = ping_.load(std::memory_order_acquire);
          if (p != seen) {
            seen = p;
            pong_.store(p, std::memory_order_release);
          } else {
            cpu_relax();
          }
        }
      }) {}

SpinEcho::~SpinEcho() {
  stop_.store(true);
  partner_.join();
}

static_assert(sizeof(cpu_set_t) <= 128, "ThreadPin keeps a cpu_set_t in 128 bytes");

ThreadPin::ThreadPin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t old, set;
  if (pthread_getaffinity_np(pthread_self(), sizeof old, &old) != 0) return;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return;
  std::memcpy(old_, &old, sizeof old);
  pinned_ = true;
}

ThreadPin::~ThreadPin() {
  if (!pinned_) return;
  cpu_set_t old;
  std::memcpy(&old, old_, sizeof old);
  (void)pthread_setaffinity_np(pthread_self(), sizeof old, &old);
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

void SpinEcho::round_trip(uint64_t value) {
  ping_.store(value, std::memory_order_release);
  while (pong_.load(std::memory_order_acquire) != value) cpu_relax();
}

}  // namespace doorbell
