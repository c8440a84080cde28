#include "hcq/cpu/cpu_device.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/program.h"
#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

// Set on the device's own threads: they never help a waited signal's device (a dispatcher waiting in a wait
// command holds its own consumer role, and running another device's ring inside a command would tie the two rings).
thread_local bool t_device_thread = false;

// A blocked wait command re-checks for shutdown this often.
constexpr auto kWaitSlice = std::chrono::milliseconds(5);

// Pins the calling thread to one CPU; advice only (a failure leaves it where the scheduler puts it).
void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

uint32_t resolve_workers(uint32_t requested) {
  if (requested != 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

}  // namespace

class CpuProgram final : public HostProgram {
 public:
  CpuProgram(std::string name, std::string device, std::shared_ptr<LoadedObject> code, CpuKernelFn fn)
      : HostProgram(std::move(name), std::move(device)), code_(std::move(code)), fn_(fn) {}
  void run(void* const* buffers, const int64_t* vars, int32_t core_id, int32_t core_count) const override {
    fn_(buffers, vars, core_id, core_count);
  }
  CpuKernelFn fn() const { return fn_; }

 private:
  std::shared_ptr<LoadedObject> code_;  // keeps fn_ mapped
  CpuKernelFn fn_;
};

std::shared_ptr<const LoadedProgram> CpuDevice::load(const UOp& program) {
  const ProgramInfo& info = program_info(program);
  if (info.target != target().name())
    throw std::invalid_argument("CPU: program " + info.name + " was compiled for " + info.target + "; expected " + target().name());
  std::shared_ptr<LoadedObject> code = LoadedObject::load(program_binary(program));
  auto fn = reinterpret_cast<CpuKernelFn>(code->symbol(info.name));
  return std::make_shared<CpuProgram>(info.name, name(), std::move(code), fn);
}

CpuDevice::CpuDevice(CpuDeviceOptions options, std::string name) : Device(std::move(name)), options_(options), slots_(kRingSlots) {
  set_target(options_.target != nullptr ? *options_.target : cpu_c_target());
  if (options_.spin_ns < 0) {
    throw std::invalid_argument("CpuDevice: spin_ns " + std::to_string(options_.spin_ns) + "; expected >= 0");
  }
  if (options_.waiters_help < -1 || options_.waiters_help > 1) {
    throw std::invalid_argument("CpuDevice: waiters_help " + std::to_string(options_.waiters_help) +
                                "; expected -1 (when the device's threads leave the waiter no core), 0 or 1");
  }
  worker_count_ = resolve_workers(options_.workers);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const bool waiter_has_a_core = worker_count_ + 1 <= cores;
  if (options_.pure_spin_ns < 0) options_.pure_spin_ns = waiter_has_a_core ? options_.spin_ns : kPureSpinNs;
  if (options_.waiters_help < 0) options_.waiters_help = waiter_has_a_core ? 0 : 1;
  // Made by Device's constructor, before this device could place it.
  if (options_.waiters_help != 0) timeline_signal().set_help_waiter(&CpuDevice::help_waiter, this);
  workers_.reserve(worker_count_ - 1);
  std::vector<int> cpus = options_.pin_threads ? allowed_cpus() : std::vector<int>{};
  const bool pin = cpus.size() >= worker_count_;
  auto cpu_of = [cpus, pin](uint32_t i) { return pin ? cpus[i] : -1; };
  if (pin) thread_cpus_.assign(cpus.begin(), cpus.begin() + worker_count_);
  try {
    for (uint32_t i = 1; i < worker_count_; ++i)
      workers_.emplace_back([this, i, cpu = cpu_of(i)] {
        t_device_thread = true;
        if (cpu >= 0) pin_to(cpu);
        worker_loop(i);
      });
    dispatcher_ = std::thread([this, cpu = cpu_of(0)] {
      if (cpu >= 0) pin_to(cpu);
      dispatcher_loop();
    });
  } catch (...) {
    // A thread failed to start (std::system_error): end the ones that did, since a joinable std::thread's
    // destructor would terminate the process.
    stop_workers();
    throw;
  }
}

int CpuDevice::thread_cpu(uint32_t index) const { return index < thread_cpus_.size() ? thread_cpus_[index] : -1; }

int CpuDevice::free_cpu() const {
  if (thread_cpus_.empty()) return -1;
  for (int cpu : allowed_cpus())
    if (std::find(thread_cpus_.begin(), thread_cpus_.end(), cpu) == thread_cpus_.end()) return cpu;
  return -1;
}

uint32_t CpuDevice::await(const std::atomic<uint32_t>& word, uint32_t old, std::atomic<uint32_t>& sleepers) const {
  return await_change(word, old, sleepers, options_.spin_ns, 0, options_.pure_spin_ns);
}

CpuDevice::~CpuDevice() {
  stopping_.store(true, std::memory_order_seq_cst);
  {
    // The odd doorbell bit says "stop": a change of the word, so a dispatcher about to sleep cannot miss it.
    std::lock_guard lock(producer_.mu);
    ring_.doorbell.fetch_or(1, std::memory_order_seq_cst);
  }
  notify_change(ring_.doorbell, ring_.dispatcher_sleepers);
  dispatcher_.join();
  stop_workers();
}

void CpuDevice::stop_workers() {
  // Called with no dispatcher running, so no exec is in flight: a quit job ends workers 1..n-1.
  job_quit_.store(true, std::memory_order_relaxed);  // ordered by the seq_cst generation bump below
  job_generation_.fetch_add(1, std::memory_order_seq_cst);
  notify_change(job_generation_, worker_sleepers_);
  for (std::thread& w : workers_) w.join();
}

CpuDevice::Slot& CpuDevice::claim_slot() {
  // A slot is free once the dispatcher finished the submission that used it kRingSlots submissions ago. The
  // producer re-reads `consumed` only when its cached copy says the ring is full, so a submit normally touches no
  // cache line the dispatcher writes. A full ring that does not move may wait for something only this thread would
  // do after the submit returns (set a signal): it waits in slices and gives up after submit_timeout without progress.
  Producer& p = producer_;
  int64_t last_progress = 0;
  while (p.produced - p.consumed_seen >= kRingSlots) {
    uint32_t now = ring_.consumed.load(std::memory_order_acquire);
    if (now == p.consumed_seen)
      now = await_change(ring_.consumed, p.consumed_seen, ring_.consumer_sleepers, options_.spin_ns,
                         std::chrono::nanoseconds(kWaitSlice).count(), options_.pure_spin_ns);
    const int64_t t = monotonic_ns();
    if (now != p.consumed_seen || last_progress == 0) {
      p.consumed_seen = now;
      last_progress = t;
      continue;
    }
    if (t - last_progress >= std::chrono::nanoseconds(options_.submit_timeout).count()) {
      const std::string blocked = blockage_locked();
      throw std::runtime_error(name() + ": submit: the ring's " + std::to_string(kRingSlots) +
                               " slots stayed full for " + std::to_string(options_.submit_timeout.count()) +
                               " ms" + (blocked.empty() ? std::string() : "; " + blocked));
    }
  }
  return slots_[p.produced % kRingSlots];
}

// What a dispatch costs is line transfers between the submitting core and the dispatcher's. Figures (medians of 5;
// 2-core AMD EPYC VM shared with builds, so a transfer is ~55 ns or ~190 ns depending on where the host puts the two
// vCPUs): bench_hcq BM_BoundQueueDispatch/1/1 submit -> start 321 ns before bound queues got lines of their own
// (hw_queue.cpp), 100 ns after; the body's hint on the doorbell's line and the exec published with plain stores
// (run_exec) brought `doorbell bench --latency` submit -> start, load ~2, CPU 1 worker from 370 to 145 ns (2.4x its
// ping-pong one way) and CPU all cores from 161 to 101 ns (1.8x); at a load of 6-8, all cores 821 -> 255 ns. What is
// left on the one-worker path: the doorbell's transfer, the waiting host thread racing the dispatcher for the role in
// help() (1.8x with waiters_help off), and for a recorded queue the commands the submit copies into the slot.
void CpuDevice::publish_slot(const BoundQueue* body) {
  const uint32_t number = producer_.produced++;
  // Relaxed: the doorbell's release below publishes it. A pointer above 48 bits (5-level paging) goes without a hint.
  const auto address = reinterpret_cast<uintptr_t>(body);
  ring_.last_published.store(address >> 48 == 0 ? uint64_t{address} << 16 | (number & 0xffffu) : 0,
                             std::memory_order_relaxed);
  ring_.doorbell.fetch_add(2, std::memory_order_seq_cst);  // the count lives in bits 1..31, the stop bit in bit 0
  notify_change(ring_.doorbell, ring_.dispatcher_sleepers);
}

// A program loaded by another device in a queue submitted here is the caller's mistake; say which program.
void check_cpu_commands(std::span<const Command> commands, const std::string& device) {
  for (const Command& c : commands)
    if (c.kind == CommandKind::kExec && c.program != nullptr && c.program->device() != device)
      throw std::invalid_argument(device + ": exec of program '" + c.program->name() + "' loaded on " + c.program->device() +
                                  " cannot run on the " + device + " device");
}

void CpuDevice::submit(const HWQueue& queue) {
  check_cpu_commands(queue.commands(), name());
  std::lock_guard lock(producer_.mu);
  Slot& s = claim_slot();
  // The slot's vectors keep their capacity from earlier laps: copying a replayed queue allocates nothing.
  s.bound.reset();
  s.body = &s.owned;
  s.owned.commands.assign(queue.commands().begin(), queue.commands().end());
  s.owned.buffers.assign(queue.buffers().begin(), queue.buffers().end());
  s.owned.scalars.assign(queue.scalars().begin(), queue.scalars().end());
  publish_slot(s.body);
}

std::shared_ptr<BoundQueue> CpuDevice::bind(const HWQueue& queue) {
  check_cpu_commands(queue.commands(), name());
  // Host memory is the CPU device's memory: the bound copy is what the dispatcher reads on every submit.
  return host_bound_copy(queue);
}

void CpuDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  std::lock_guard lock(producer_.mu);
  // The slot holds the reference until the producer reuses it, so the count is only touched on this side.
  Slot& s = claim_slot();
  s.body = queue.get();
  // A swap, not an assignment: the reference this slot held from kRingSlots submissions ago is released when
  // `queue` goes, after the doorbell rang.
  s.bound.swap(queue);
  publish_slot(s.body);
}

const BoundQueue& CpuDevice::body_of(uint32_t number) const {
  // The hint is at least as new as the doorbell value that published `number` (same line, read after it), and the
  // producer is at most kRingSlots ahead: a match of the low 16 bits is `number`'s own hint.
  const uint64_t hint = ring_.last_published.load(std::memory_order_relaxed);
  if (hint != 0 && (hint & 0xffffu) == (number & 0xffffu)) return *reinterpret_cast<const BoundQueue*>(hint >> 16);
  return *slots_[number % kRingSlots].body;
}

bool CpuDevice::consume_one() {
  const uint32_t taken = ring_.consumed.load(std::memory_order_relaxed);  // only the role's holder writes it
  if (!run(body_of(taken))) return false;  // shutdown abandoned a wait: what follows may depend on it
  ring_.consumed.store(taken + 1, std::memory_order_seq_cst);
  notify_change(ring_.consumed, ring_.consumer_sleepers);
  return true;
}

void CpuDevice::dispatcher_loop() {
  t_device_thread = true;
  while (true) {
    uint32_t role = consumer_.load(std::memory_order_acquire);
    if (role & 1) {  // a waiting host thread runs the ring: sleep until it lets go, then look again
      await(consumer_, role, consumer_role_sleepers_);
      continue;
    }
    const uint32_t bell = ring_.doorbell.load(std::memory_order_acquire);
    const uint32_t taken = ring_.consumed.load(std::memory_order_acquire);
    if ((bell >> 1) != (taken & 0x7fff'ffffu)) {  // the doorbell's count wraps at 2^31
      if (!consumer_.compare_exchange_strong(role, role | 1, std::memory_order_acquire)) continue;
      bool abandoned = false;
      while (!abandoned && (ring_.doorbell.load(std::memory_order_acquire) >> 1) !=
                               (ring_.consumed.load(std::memory_order_relaxed) & 0x7fff'ffffu))
        abandoned = !consume_one();
      consumer_.store(role + 2, std::memory_order_seq_cst);
      if (abandoned) return;
      continue;
    }
    if (bell & 1) return;  // stopping, and everything submitted ran
    await(ring_.doorbell, bell, ring_.dispatcher_sleepers);
  }
}

SignalPlacement CpuDevice::place_signal() {
  SignalPlacement p;
  if (options_.waiters_help == 0) return p;
  p.help_waiter = &CpuDevice::help_waiter;
  p.help_context = this;
  return p;
}

void CpuDevice::help_waiter(const void* device) { const_cast<CpuDevice*>(static_cast<const CpuDevice*>(device))->help(); }

void CpuDevice::help() {
  if (t_device_thread || stopping_.load(std::memory_order_relaxed)) return;
  // Where this thread runs decides what it may do without making two threads compute on one core (measured: a
  // 1024^3 matmul took 2x as long when the waiter ran core ids next to a computing device thread). On a CPU of
  // no device thread (or when they are not pinned) it claims core ids of the exec in flight. On the dispatcher's
  // CPU it may take the ring, since the dispatcher then sleeps; on a worker's CPU it leaves everything to the
  // device (that worker computes there), and the dispatcher, on its own core, runs what the worker does not claim.
  const int cpu = thread_cpus_.empty() ? -1 : sched_getcpu();
  const auto at = std::find(thread_cpus_.begin(), thread_cpus_.end(), cpu);
  if (at == thread_cpus_.end()) run_claimed_cores();
  else if (at != thread_cpus_.begin()) return;
  // Right after a submit, the dispatcher is usually running it already, and reading the role's line here makes
  // its next compare-exchange on that line wait for a transfer (bench_hcq BM_BoundQueueDispatch/1/1, submit ->
  // start, idle machine: 110 ns helping, 91 ns not). Skipping the first look after each doorbell won those 20 ns
  // but cost 1.1 us at a load of 8 on 2 cores, where the dispatcher is often off its core and the waiter then ran
  // the submission one poll round late (`doorbell bench --latency`, 1 worker, p50: 1.11-1.27 us against
  // 311-961 ns), so the waiter looks at once.
  const uint32_t bell = ring_.doorbell.load(std::memory_order_acquire);
  if ((bell >> 1) == (ring_.consumed.load(std::memory_order_acquire) & 0x7fff'ffffu)) return;
  uint32_t role = consumer_.load(std::memory_order_acquire);
  if (role & 1) return;
  if (!consumer_.compare_exchange_strong(role, role | 1, std::memory_order_acquire)) return;
  // Runs submissions in ring order until the ring is empty or the next one has a wait that has not passed (it could
  // block this thread, which may be the one that would pass it); the dispatcher takes over from there. A passed wait
  // stays passed (values only grow), so a submission checked here runs without blocking.
  while ((ring_.doorbell.load(std::memory_order_acquire) >> 1) != (ring_.consumed.load(std::memory_order_relaxed) & 0x7fff'ffffu)) {
    const BoundQueue& next = body_of(ring_.consumed.load(std::memory_order_relaxed));
    const bool can_block = std::any_of(next.commands.begin(), next.commands.end(), [](const Command& c) {
      return c.kind == CommandKind::kWait && c.signal->value() < c.value;
    });
    if (can_block) break;
    consume_one();
  }
  consumer_.store(role + 2, std::memory_order_seq_cst);
  notify_change(consumer_, consumer_role_sleepers_);
}

namespace {

std::string exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

std::string describe_command(const Command& c, size_t index) {
  std::string what = std::string(command_kind_name(c.kind));
  if (c.kind == CommandKind::kExec && c.program != nullptr) what += " of program '" + c.program->name() + "'";
  if (c.signal != nullptr) what += " on signal '" + c.signal->name() + "'";
  return what + " (command " + std::to_string(index) + " of its submission)";
}

}  // namespace

bool CpuDevice::run(const BoundQueue& submission) {
  bool failed = false;
  for (size_t i = 0; i < submission.commands.size(); ++i) {
    const Command& c = submission.commands[i];
    // After a failure the data may be wrong: only the waits and signals still run, so that nobody hangs on them.
    if (failed && c.kind != CommandKind::kWait && c.kind != CommandKind::kSignal) continue;
    try {
      if (!run_command(c, submission)) return false;
    } catch (...) {
      std::string message = name() + ": " + describe_command(c, i) + " failed: " + exception_text();
      if (!failed) message += "; the rest of the submission's exec, copy and timestamp commands were skipped";
      report_queue_error(std::move(message));
      failed = true;
    }
  }
  return true;
}

bool CpuDevice::run_command(const Command& c, const BoundQueue& submission) {
  switch (c.kind) {
    case CommandKind::kExec:
      run_exec(c, submission);
      break;
    case CommandKind::kCopy:
      if (c.bytes != 0) std::memmove(c.dst, c.src, c.bytes);
      break;
    case CommandKind::kSignal:
      c.signal->set(c.value);
      break;
    case CommandKind::kWait:
      // A device wait has no deadline of its own (the host's synchronize has one), but shutdown ends it.
      while (!c.signal->wait_for(c.value, kWaitSlice)) {
        if (stopping_.load(std::memory_order_acquire)) return false;
      }
      break;
    case CommandKind::kTimestamp:
      c.signal->write_timestamp(static_cast<uint64_t>(monotonic_ns()));
      break;
    case CommandKind::kMemoryBarrier:
      // Caches are coherent on the CPU; what remains is ordering the compiler and core may not reorder across.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      break;
  }
  return true;
}

std::string CpuDevice::blockage() {
  std::unique_lock lock(producer_.mu, std::try_to_lock);
  // A submit holds the lock while it waits for room in a full ring (at most submit_timeout); do not wait behind it.
  if (!lock.owns_lock()) return "its ring is full and a submit waits for room";
  return blockage_locked();
}

std::string CpuDevice::blockage_locked() const {
  // The oldest unfinished submission's slot is not rewritten while we hold producer_.mu, and the dispatcher only
  // reads it; its signals are alive while it is queued (the caller's promise for every queued command).
  const uint32_t consumed = ring_.consumed.load(std::memory_order_acquire);
  if (consumed == producer_.produced) return "";
  const BoundQueue& oldest = *slots_[consumed % kRingSlots].body;
  for (size_t i = 0; i < oldest.commands.size(); ++i) {
    const Command& c = oldest.commands[i];
    if (c.kind != CommandKind::kWait) continue;
    const uint64_t value = c.signal->value();
    if (value >= c.value) continue;
    return "its queue waits for signal '" + c.signal->name() + "' (" + c.signal->device() + ") to reach " +
           std::to_string(c.value) + " (value " + std::to_string(value) + "), command " + std::to_string(i) +
           " of its oldest unfinished submission";
  }
  return "its oldest unfinished submission (" + std::to_string(oldest.commands.size()) +
         " commands) waits for no signal: it is still running";
}

void CpuDevice::run_exec(const Command& c, const BoundQueue& submission) {
  const uint32_t n = worker_count();
  job_kernel_ = c.kernel;
  if (c.program != nullptr) job_kernel_ = static_cast<const CpuProgram*>(c.program)->fn();  // checked at submit
  job_buffers_ = submission.buffers.data() + c.buffers_begin;
  job_scalars_ = submission.scalars.data() + c.scalars_begin;
  job_cores_ = c.program != nullptr ? std::clamp(static_cast<int32_t>(c.grid[0]), 1, static_cast<int32_t>(n))
              : c.core_count == 0 ? static_cast<int32_t>(n) : c.core_count;
  const auto cores = static_cast<uint32_t>(job_cores_);
  if (n == 1 || cores == 1) {  // one thread, or one core id: this thread runs them, the other workers stay asleep
    for (int32_t core = 0; core < job_cores_; ++core) run_core(core);
  } else {
    job_finished_.store(0, std::memory_order_relaxed);
    // The claim word publishes the job (release): whoever claims a core id through it sees the fields above. Core
    // id 0 is the dispatcher's, claimed in the same store. Plain stores, no fence: the dispatcher starts its core
    // id while the job's line travels to the workers. A seq_cst store and a fetch_add here waited for the job's
    // and the count's lines first (the workers poll them), before the kernel could start (bench_hcq
    // BM_BoundQueueDispatch/2/1, see the figures at publish_slot).
    job_claim_.store(static_cast<uint64_t>(cores) << 32 | 1, std::memory_order_release);
    job_generation_.store(job_generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    // A worker that announced sleep is woken now, one that announces it meanwhile after core id 0 (the fence and
    // its seq_cst announcement then order: it sees the new generation, or the dispatcher sees it asleep). Until
    // then the dispatcher runs what no worker claims, so a late wake costs no correctness.
    bool woken = false;
    if (worker_sleepers_.load(std::memory_order_relaxed) != 0) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      futex_wake_all(&job_generation_);
      woken = true;
    }
    run_core(0);
    if (job_finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == cores) notify_change(job_finished_, done_sleepers_);
    if (!woken) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (worker_sleepers_.load(std::memory_order_relaxed) != 0) futex_wake_all(&job_generation_);
    }
    // The dispatcher claims core ids like any worker, and keeps claiming until none is left: a worker that is not
    // on a core right now (its core runs the host thread) then costs nothing, where a fixed share per thread made
    // the exec wait for the scheduler to run that worker again (6 us per empty dispatch on 2 cores).
    run_claimed_cores();
    // The last core id to finish bumps job_finished_ to `cores`; the acq_rel chain makes every share's writes
    // visible here.
    uint32_t finished = job_finished_.load(std::memory_order_acquire);
    while (finished != cores) finished = await(job_finished_, finished, done_sleepers_);
  }
  // Every share has returned, so no worker writes job_error_ now.
  if (!job_error_.empty()) {
    std::string error = std::move(job_error_);
    job_error_.clear();
    throw std::runtime_error(error);
  }
}

void CpuDevice::run_claimed_cores() {
  uint64_t word = job_claim_.load(std::memory_order_acquire);
  while (true) {
    const auto next = static_cast<uint32_t>(word);
    const auto cores = static_cast<uint32_t>(word >> 32);
    if (next >= cores) return;
    // A successful claim reads the current job's word (the store that published it or a claim after it), so the
    // core id belongs to the job in flight even when this thread last looked at an older job: that job cannot be
    // replaced before this core id is counted finished.
    if (!job_claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      continue;
    run_core(static_cast<int32_t>(next));
    if (job_finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == cores) notify_change(job_finished_, done_sleepers_);
    word = job_claim_.load(std::memory_order_acquire);
  }
}

void CpuDevice::run_core(int32_t core) {
  try {
    job_kernel_(job_buffers_, job_scalars_, core, job_cores_);
  } catch (...) {
    // Kept, not rethrown: a worker thread must survive, and the exec fails once all shares returned.
    std::string error = "the kernel threw: " + exception_text();
    std::lock_guard lock(job_error_mutex_);
    if (job_error_.empty()) job_error_ = std::move(error);
  }
}

void CpuDevice::worker_loop(uint32_t) {
  uint32_t seen = 0;
  while (true) {
    uint32_t gen = seen;
    while (gen == seen) gen = await(job_generation_, seen, worker_sleepers_);
    seen = gen;
    if (job_quit_.load(std::memory_order_relaxed)) return;
    run_claimed_cores();
  }
}

}  // namespace doorbell
