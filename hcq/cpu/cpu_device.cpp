#include "hcq/cpu/cpu_device.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

// A blocked wait command re-checks for shutdown this often.
constexpr auto kWaitSlice = std::chrono::milliseconds(5);
// Spent submissions kept for reuse; enough for a deep queue of replays without holding memory unboundedly.
constexpr size_t kMaxSpare = 64;

uint32_t resolve_workers(uint32_t requested) {
  if (requested != 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

}  // namespace

CpuDevice::CpuDevice(CpuDeviceOptions options) : Device("CPU"), options_(options) {
  if (options_.spin_ns < 0) {
    throw std::invalid_argument("CpuDevice: spin_ns " + std::to_string(options_.spin_ns) + "; expected >= 0");
  }
  worker_count_ = resolve_workers(options_.workers);
  workers_.reserve(worker_count_ - 1);
  try {
    for (uint32_t i = 1; i < worker_count_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
    dispatcher_ = std::thread([this] { dispatcher_loop(); });
  } catch (...) {
    // A thread failed to start (std::system_error): end the ones that did, since a joinable std::thread's
    // destructor would terminate the process.
    stop_workers();
    throw;
  }
}

CpuDevice::~CpuDevice() {
  stopping_.store(true, std::memory_order_seq_cst);
  doorbell_.fetch_add(1, std::memory_order_seq_cst);
  notify_change(doorbell_, dispatcher_sleepers_);
  dispatcher_.join();
  stop_workers();
}

void CpuDevice::stop_workers() {
  // Called with no dispatcher running, so no exec is in flight: a quit job ends workers 1..n-1.
  job_quit_ = true;
  job_generation_.fetch_add(1, std::memory_order_seq_cst);
  notify_change(job_generation_, worker_sleepers_);
  for (std::thread& w : workers_) w.join();
}

void CpuDevice::submit(const HWQueue& queue) {
  {
    std::lock_guard lock(ring_mutex_);
    // Reuse a spent submission's vectors: their capacity makes the copy below allocation-free on replay.
    if (spare_.empty()) {
      ring_.emplace_back();
    } else {
      ring_.push_back(std::move(spare_.back()));
      spare_.pop_back();
    }
    Submission& s = ring_.back();
    s.bound.reset();
    s.owned.commands.assign(queue.commands().begin(), queue.commands().end());
    s.owned.buffers.assign(queue.buffers().begin(), queue.buffers().end());
    s.owned.scalars.assign(queue.scalars().begin(), queue.scalars().end());
  }
  doorbell_.fetch_add(1, std::memory_order_seq_cst);
  notify_change(doorbell_, dispatcher_sleepers_);
}

std::shared_ptr<BoundQueue> CpuDevice::bind(const HWQueue& queue) {
  // Host memory is the CPU device's memory: the bound copy is what the dispatcher reads on every submit.
  auto b = std::make_shared<BoundQueue>();
  b->commands.assign(queue.commands().begin(), queue.commands().end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  return b;
}

void CpuDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  {
    std::lock_guard lock(ring_mutex_);
    if (spare_.empty()) {
      ring_.emplace_back();
    } else {
      ring_.push_back(std::move(spare_.back()));
      spare_.pop_back();
    }
    ring_.back().bound = std::move(queue);
  }
  doorbell_.fetch_add(1, std::memory_order_seq_cst);
  notify_change(doorbell_, dispatcher_sleepers_);
}

void CpuDevice::dispatcher_loop() {
  Submission s;
  bool spent = false;
  while (true) {
    // Read the doorbell before looking at the ring: a submit after this read changes it, so await_change below
    // returns at once instead of sleeping past that submission.
    const uint32_t bell = doorbell_.load(std::memory_order_acquire);
    bool have = false;
    {
      std::lock_guard lock(ring_mutex_);
      s.bound.reset();  // a bound queue is referenced only while it runs
      if (spent && spare_.size() < kMaxSpare) spare_.push_back(std::move(s));
      spent = false;
      if (!ring_.empty()) {
        s = std::move(ring_.front());
        ring_.pop_front();
        have = true;
      }
    }
    if (have) {
      if (!run(s.body())) {
        std::lock_guard lock(ring_mutex_);
        ring_.clear();  // what follows an abandoned wait may depend on it: drop it
        return;
      }
      spent = true;
      continue;
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    await_change(doorbell_, bell, dispatcher_sleepers_, options_.spin_ns);
  }
}

bool CpuDevice::run(const BoundQueue& submission) {
  for (const Command& c : submission.commands) {
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
  }
  return true;
}

void CpuDevice::run_exec(const Command& c, const BoundQueue& submission) {
  const uint32_t n = worker_count();
  job_kernel_ = c.kernel;
  job_buffers_ = submission.buffers.data() + c.buffers_begin;
  job_scalars_ = submission.scalars.data() + c.scalars_begin;
  job_cores_ = c.core_count == 0 ? static_cast<int32_t>(n) : c.core_count;
  if (n == 1) {
    run_share(0);
    return;
  }
  job_remaining_.store(n - 1, std::memory_order_relaxed);
  const uint32_t done = job_done_.load(std::memory_order_acquire);
  job_generation_.fetch_add(1, std::memory_order_seq_cst);
  notify_change(job_generation_, worker_sleepers_);
  run_share(0);
  // The last worker to finish bumps job_done_; its acq_rel chain makes every worker's writes visible here.
  while (await_change(job_done_, done, done_sleepers_, options_.spin_ns) == done) {
  }
}

void CpuDevice::run_share(uint32_t index) {
  // With more cores than threads, thread i runs core ids i, i+n, i+2n, ...
  const auto n = static_cast<int32_t>(worker_count());
  for (int32_t core = static_cast<int32_t>(index); core < job_cores_; core += n) {
    job_kernel_(job_buffers_, job_scalars_, core, job_cores_);
  }
}

void CpuDevice::worker_loop(uint32_t index) {
  uint32_t seen = 0;
  while (true) {
    uint32_t gen = seen;
    while (gen == seen) gen = await_change(job_generation_, seen, worker_sleepers_, options_.spin_ns);
    seen = gen;
    if (job_quit_) return;
    run_share(index);
    if (job_remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      job_done_.fetch_add(1, std::memory_order_seq_cst);
      notify_change(job_done_, done_sleepers_);
    }
  }
}

}  // namespace doorbell
