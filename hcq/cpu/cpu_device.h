// The CPU as an HCQ device: one thread per core. Thread 0 is the dispatcher: it consumes the command ring in order;
// threads 1..n-1 are workers. An exec's core ids (0..core_count-1) are claimed one at a time from a shared word by
// whichever thread is free, the dispatcher included, and the exec completes when all of them returned. Folding the
// dispatcher into worker 0 keeps the device at n spinning threads on n cores and saves a cross-thread handoff per
// dispatch. Threads spin for a bounded time before sleeping, so back-to-back dispatches stay hot and an idle device
// burns nothing. Commands run strictly in ring order, which gives the HCQ contract: nothing after a wait starts
// before the wait passes, and a signal or timestamp is written after every earlier command finished.
//
// A host thread waiting on one of the device's signals is the (n+1)th thread on n cores: spinning beside the device
// threads, it took the core one of them needed, and an empty dispatch on all cores of a 2-core machine took 6 us
// (each handoff waited for a yield). So the waiter works instead of spinning (waiters_help): it claims core ids of
// the exec in flight, and when no thread consumes the ring it takes the ring itself and runs the submissions whose
// waits have all passed (it never runs one that could block: it may be the thread that would pass the wait). The
// dispatcher sleeps while a waiter holds the ring and takes over when it lets go. With pinned threads, what the waiter
// does depends on the CPU it is on, so that no core computes two shares at once: off the device's CPUs it claims core
// ids; on the dispatcher's CPU it may take the ring; on a worker's CPU it leaves the work to the device (help()).
//
// A command that throws (a kernel's exception, a signal set below its value) fails its submission: the device
// reports the message through Device::report_queue_error (the next synchronize() throws it), skips the rest of that
// submission's exec, copy and timestamp commands (their inputs may be wrong), and still runs its waits and signals,
// so that nobody waiting on them hangs. The device stays usable.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hcq/device.h"
#include "hcq/hw_queue.h"

namespace doorbell {

class Target;

struct CpuDeviceOptions {
  // What compiles the device's kernels: a CPU target whose binaries are ELF objects with the CPU kernel ABI
  // (compiler/cpu/cpu_target.h's C target, compiler/x86/x86_target.h's X86 target). nullptr: the C target.
  const Target* target = nullptr;
  uint32_t workers = 0;      // threads, the dispatcher included; 0: std::thread::hardware_concurrency()
  int64_t spin_ns = 50'000;  // how long dispatcher and workers poll for new work before sleeping
  // How long of that they poll without yielding the core. -1: all of spin_ns when the device's threads and one
  // host thread fit on the machine's cores (a yield costs a syscall, ~0.3 us, at the moment the doorbell rings),
  // else kPureSpinNs (a thread that does not yield would hold the core the thread it waits for needs).
  int64_t pure_spin_ns = -1;
  // Worker i (the dispatcher is 0) runs on the i-th CPU the process may use, when there are as many. Unpinned, the
  // scheduler wakes a sleeping worker next to the thread that woke it and two halves of a kernel then share one core
  // until it balances them again, milliseconds later (a 4096 x 1024 softmax measured at 1.6 ms, or 3.3 ms in such
  // runs, on this 2-core machine).
  bool pin_threads = true;
  // Whether a host thread waiting on one of the device's signals runs the device's work meanwhile (see above). -1:
  // when the device's threads and that host thread do not fit on the machine's cores (as pure_spin_ns), which is the
  // oversubscription helping cures; with a core of its own the waiter only races the dispatcher for the ring right
  // after the submit (one worker on 2 cores: submit -> start 1.8x the ping-pong one way without, 2.2-2.5x with,
  // bench_hcq BM_BoundQueueDispatch/1/0 vs /1/1). 0: never; 1: always.
  int waiters_help = -1;
  // How long a submit may wait for room in a full ring without the device finishing anything before it throws,
  // naming the wait the ring is stuck behind (one that only the submitting thread may be able to satisfy).
  std::chrono::milliseconds submit_timeout = kDefaultWaitTimeout;
};

// A kernel of a CPU target loaded into this process: its ELF object's code.
class CpuProgram;

class CpuDevice final : public Device {
 public:
  // `name`: the canonical device name ("CPU", "CPU:X86"); the target is options.target.
  explicit CpuDevice(CpuDeviceOptions options = {}, std::string name = "CPU");
  // Finishes what was submitted, except that a wait still blocked is abandoned (with what follows it), then joins
  // the threads: destruction never hangs.
  ~CpuDevice() override;

  void submit(const HWQueue& queue) override;
  std::shared_ptr<BoundQueue> bind(const HWQueue& queue) override;
  void submit_bound(std::shared_ptr<const BoundQueue> queue) override;
  uint32_t worker_count() const { return worker_count_; }
  // Whether a host thread waiting on this device's signals runs its work (CpuDeviceOptions::waiters_help, resolved).
  bool waiters_help() const { return options_.waiters_help != 0; }
  // The CPU thread `index` (0: the dispatcher) is pinned to, or -1 when the threads are not pinned.
  int thread_cpu(uint32_t index) const;
  // A CPU the calling thread may run on that none of the device's threads is pinned to, or -1 (none free, or the
  // threads are not pinned): where a benchmark puts the host thread to time the device from a core of its own.
  int free_cpu() const;
  bool host_memory() const override { return true; }
  // The first wait of the oldest unfinished submission that has not passed, named with its signal and values.
  std::string blockage() override;

 protected:
  // The device's signals offer their waiters its work (help_waiter).
  SignalPlacement place_signal() override;
  // Loads the PROGRAM's ELF object (compiler/cpu/elf_loader.h) and finds its function.
  std::shared_ptr<const LoadedProgram> load(const UOp& program) override;

 private:
  // A ring slot: a copy of an unbound queue, or a reference to a bound one.
  // `body` (what the dispatcher reads: &owned or the bound queue) starts the slot's first cache line; the slot's
  // reference to a bound queue is only touched by producers.
  struct alignas(64) Slot {
    const BoundQueue* body = nullptr;
    BoundQueue owned;
    std::shared_ptr<const BoundQueue> bound;
  };
  static constexpr uint32_t kRingSlots = 64;

  // Every thread of the device waits for a word to change this way: spin (pure, then yielding), then sleep.
  uint32_t await(const std::atomic<uint32_t>& word, uint32_t old, std::atomic<uint32_t>& sleepers) const;
  void dispatcher_loop();
  // What a host thread waiting on one of the device's signals does between polls: runs unclaimed core ids of the
  // exec in flight, and, when no thread consumes the ring, takes the consumer role and runs the submissions that
  // can run without blocking (every wait already passed). It never blocks on the device.
  static void help_waiter(const void* device);
  void help();
  // Under the consumer role: runs the oldest unconsumed submission and counts it consumed; false when shutdown
  // abandoned one of its waits.
  bool consume_one();
  // Producer side, under producer_.mu: waits for a free slot, then makes the filled slot visible.
  Slot& claim_slot();
  void publish_slot(const BoundQueue* body);
  // The body of submission `number` (not yet consumed, already published): from the doorbell's line when it is the
  // last one published, else from its slot.
  const BoundQueue& body_of(uint32_t number) const;
  // Returns false when shutdown abandoned a blocked wait.
  bool run(const BoundQueue& submission);
  // Returns false when shutdown abandoned it; throws what the command threw.
  bool run_command(const Command& command, const BoundQueue& submission);
  void run_exec(const Command& command, const BoundQueue& submission);
  // blockage() with producer_.mu held.
  std::string blockage_locked() const;
  // Claims core ids of the current job from job_claim_ and runs them until none is left unclaimed.
  void run_claimed_cores();
  // Runs one core id of the current job; an exception is kept in job_error_.
  void run_core(int32_t core);
  void worker_loop(uint32_t index);
  void stop_workers();

  CpuDeviceOptions options_;
  uint32_t worker_count_ = 0;  // fixed before any thread starts, so threads read it race-free

  // The ring: a fixed array of slots that submitters fill in order (one at a time, under producer_.mu) and the
  // dispatcher runs in order. The doorbell word is 2 * submissions published + the stop bit; `consumed` counts
  // submissions the dispatcher finished. Each word shares its cache line only with its sleeper count, so a
  // dispatch moves the doorbell line, the slot and the signal between cores, and nothing else.
  struct alignas(64) RingWords {
    alignas(64) std::atomic<uint32_t> doorbell{0};
    std::atomic<uint32_t> dispatcher_sleepers{0};
    // The body of the submission published last, with its number's low 16 bits (body << 16 | number): on the
    // doorbell's line, so the line transfer that tells the dispatcher of a submission also tells it where the body
    // is, and its slot's line stays with the producer (see publish_slot). 16 bits tell submissions apart since
    // the producer is never more than kRingSlots ahead.
    std::atomic<uint64_t> last_published{0};
    alignas(64) std::atomic<uint32_t> consumed{0};
    std::atomic<uint32_t> consumer_sleepers{0};
  };
  // Producer state on a line of its own: the dispatcher never reads it.
  struct alignas(64) Producer {
    std::mutex mu;
    uint32_t produced = 0;       // submissions published
    uint32_t consumed_seen = 0;  // the last value of ring_.consumed the producer read
  };
  Producer producer_;
  std::vector<Slot> slots_;  // never resized: the dispatcher reads its header race-free
  RingWords ring_;
  std::atomic<bool> stopping_{false};
  // The consumer role: bit 0 is set while a thread (the dispatcher, or a waiting host thread in help()) runs
  // submissions from the ring; each release adds 2, so the dispatcher can sleep until a helper lets go.
  alignas(64) std::atomic<uint32_t> consumer_{0};
  std::atomic<uint32_t> consumer_role_sleepers_{0};

  // The exec in flight, on one line with the words that publish it, so that a worker polling job_generation_
  // gets the whole job in one line transfer. The dispatcher writes these before bumping job_generation_ and only
  // after the previous job's job_finished_ count, so workers read them race-free.
  alignas(64) CpuKernelFn job_kernel_ = nullptr;
  void* const* job_buffers_ = nullptr;
  const int64_t* job_scalars_ = nullptr;
  int32_t job_cores_ = 0;
  std::atomic<uint32_t> job_generation_{0};
  // The next core id to run (low 32 bits) and the job's core count (high 32 bits): every thread of the device
  // claims core ids by bumping it, so each runs exactly once and on whichever thread is on a core.
  std::atomic<uint64_t> job_claim_{0};
  // Workers announce sleep here (rarely): a line of its own, so the dispatcher reads it without waiting for the
  // job's line.
  alignas(64) std::atomic<uint32_t> worker_sleepers_{0};
  // Atomic: a worker may still be looking at the last job (whose core ids others ran) when the destructor sets it.
  std::atomic<bool> job_quit_{false};
  std::mutex job_error_mutex_;
  std::string job_error_;  // the first exception of the current job's shares ("" when none threw)
  alignas(64) std::atomic<uint32_t> job_finished_{0};  // core ids of the current job that returned
  std::atomic<uint32_t> done_sleepers_{0};

  std::vector<int> thread_cpus_;  // the CPU each thread is pinned to (dispatcher first); empty when not pinned
  std::thread dispatcher_;           // worker 0
  std::vector<std::thread> workers_;  // workers 1..n-1
};

}  // namespace doorbell
