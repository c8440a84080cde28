#include "hcq/run_linear.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "compiler/program.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "hcq/trace.h"
#include "hcq/wait_primitives.h"
#include "ir/debug.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

std::atomic<uint64_t> g_kernels{0};

// Timestamp signals are the device's and live as long as it; a thread reuses its own across runs, per device.
Signal& timing_signal(Device& d, size_t i) {
  thread_local std::unordered_map<Device*, std::vector<Signal*>> pools;
  std::vector<Signal*>& pool = pools[&d];
  while (pool.size() <= i) pool.push_back(&d.new_signal("timestamp " + std::to_string(pool.size())));
  return *pool[i];
}

std::array<uint32_t, 3> dims(const std::array<int64_t, 3>& a) {
  return {static_cast<uint32_t>(a[0]), static_cast<uint32_t>(a[1]), static_cast<uint32_t>(a[2])};
}

// The calls of one LINEAR, handled by kind, recorded into one HWQueue per device and submitted once: the device runs
// them in order, so no host wait separates two kernels. At DEBUG=2 every exec and copy is bracketed by timestamps the
// queue writes, and one line each gives its name, launch, buffers, time, GFLOP/s and GB/s.
class LinearRunner {
 public:
  LinearRunner(const RunOptions& options, bool timed)
      : options_(options), tracing_(trace::recording()), timed_mode_(timed || debug_level() >= 2 || tracing_),
        override_(options.device.empty() ? nullptr : &device(options.device)) {}

  void call(const UOp& call) {
    switch (call.src(0).op()) {
      case Ops::SINK: case Ops::PROGRAM: return kernel(call);
      case Ops::COPY: return copy(call);
      default: throw std::invalid_argument("run_linear: no handler for a CALL of " + print_node(call.src(0)));
    }
  }

  // Submits what is recorded and waits for it: results are readable when this returns.
  void flush() {
    if (queue_.size() == 0) return;
    submit_and_wait(*dev_, queue_, "compute");
    queue_ = HWQueue();
  }

  std::vector<KernelTiming> take_timings() { return std::move(timings_); }

 private:
  struct Timed {
    KernelTiming timing;
    uint64_t count = 0;  // the running kernel count when it was recorded
    size_t buffers = 0;
    Signal* start;
    Signal* end;
    const char* queue;  // the track it is drawn on (trace.h)
    std::array<uint32_t, 3> grid{0, 0, 0}, block{0, 0, 0};
    int64_t copy_bytes = -1;  // a copy's; -1 for a kernel
  };

  // Submits `q` on the device's timeline and waits for it; when tracing, the host's submit and wait become spans and
  // the timeline signal that ended the wait a flow from `queue`'s track.
  void submit_and_wait(Device& d, HWQueue& q, const char* queue) {
    if (!tracing_) {
      d.submit_on_timeline(q);
      d.synchronize();
      report();
      return;
    }
    const int64_t t0 = monotonic_ns();
    d.submit_on_timeline(q);
    const uint64_t value = q.commands().back().value;  // submit_on_timeline appended signal(timeline, value)
    const int64_t t1 = monotonic_ns();
    d.synchronize();
    const int64_t t2 = monotonic_ns();
    // The device's stamps on the host's clock (a GPU stamps with its own timer: Device::host_time_ns).
    const int64_t work_end = timed_.empty() ? t1 : d.host_time_ns(timed_.back().end->timestamp());
    report();  // the kernels' spans first: each track's slices are recorded in the order they ran
    trace::host_span("submit " + d.name(), "submit", t0, t1, {trace::arg("commands", static_cast<int64_t>(q.size()))});
    Signal& timeline = d.timeline_signal();
    // Another thread's later submission may have signalled since: then its time is not ours, and the work's end is
    // the nearest we know.
    const int64_t signalled = timeline.value() == value ? d.host_time_ns(timeline.timestamp()) : work_end;
    trace::signal_to_host_wait(d.name(), queue, timeline.name(), value, work_end, signalled, t1, t2);
  }

  // The device a call runs on; switching devices submits and waits for what the previous one was given.
  Device& use(const UOp& call) {
    Device& d = override_ != nullptr ? *override_ : call_device(call);
    // Another device than the buffers' can run the call only when it takes host pointers (REF, CPU on host buffers).
    if (override_ != nullptr && !d.host_memory() && &call_device(call) != &d)
      throw std::invalid_argument("run_linear: " + d.name() + " cannot run a call whose buffers are on " + call_device(call).name() +
                                  "; expected a host device (REF, CPU) or the buffers' own device");
    if (dev_ != &d) {
      if (dev_ != nullptr) flush();
      dev_ = &d;
    }
    return d;
  }

  // Where device `d` finds a buffer: a host device takes host pointers; any other its own memory's addresses.
  uint64_t address(const UOp& buffer, Device& d) {
    if (d.host_memory()) return reinterpret_cast<uintptr_t>(buffer_bytes(buffer).data());
    return buffer_device_address(buffer);
  }

  void kernel(const UOp& call) {
    Device& d = use(call);
    UOp program = compile_call(call, d);
    const LoadedProgram& loaded = d.program(program);
    const ProgramInfo& info = program_info(program);
    if (static_cast<int64_t>(call.src().size()) - 1 < info.buffers)
      throw std::invalid_argument("run_linear: kernel " + info.name + " takes " + std::to_string(info.buffers) + " buffers, the call gives " +
                                  std::to_string(call.src().size() - 1));
    // The CALL's arguments: its buffers, then (from the schedule) its variables, bound or not.
    addresses_.clear();
    for (int64_t i = 1; i <= info.buffers; i++) addresses_.push_back(address(call.src(static_cast<size_t>(i)), d));
    vars_.clear();
    for (const KernelVariable& v : info.vars) vars_.push_back(value_of(v, call, info));
    const uint64_t count = g_kernels.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!timed_mode_) {
      queue_.exec(loaded, addresses_, vars_, dims(info.global_size), dims(info.local_size));
      return;
    }
    Timed t{KernelTiming{info.name, info.launch_string(), 0, info.ops, info.bytes}, count, static_cast<size_t>(info.buffers),
            &timing_signal(d, 2 * timed_.size()), &timing_signal(d, 2 * timed_.size() + 1), "compute",
            dims(info.global_size), dims(info.local_size)};
    queue_.timestamp(*t.start).exec(loaded, addresses_, vars_, dims(info.global_size), dims(info.local_size)).timestamp(*t.end);
    timed_.push_back(std::move(t));
  }

  // A variable's value for this launch: RunOptions::var_vals, else its binding among the CALL's arguments.
  int64_t value_of(const KernelVariable& v, const UOp& call, const ProgramInfo& info) const {
    std::optional<int64_t> value;
    if (auto it = options_.var_vals.find(v.name); it != options_.var_vals.end()) value = it->second;
    for (size_t i = static_cast<size_t>(info.buffers) + 1; !value && i < call.src().size(); i++) {
      const UOp& a = call.src(i);
      if (a.is_bound_variable() && a.src(0).arg_as<ParamArg>().name == v.name) value = std::get<int64_t>(a.src(1).src(1).const_value());
    }
    if (!value) throw std::invalid_argument("run_linear: kernel " + info.name + " takes variable '" + v.name + "', which has no value; bind it");
    if (*value < v.vmin || *value > v.vmax)
      throw std::invalid_argument("run_linear: variable '" + v.name + "' = " + std::to_string(*value) + " is outside its bounds [" +
                                  std::to_string(v.vmin) + ", " + std::to_string(v.vmax) + "]");
    return *value;
  }

  // CALL(COPY, dst, src): the bytes of one buffer into another of the same size, in queue order (on a device whose
  // copies take a queue of their own, after everything recorded before it finished).
  void copy(const UOp& call) {
    if (call.src().size() != 3)
      throw std::invalid_argument("run_linear: expected CALL(COPY, destination, source), got " + print_node(call));
    // Sizes only: either side may be device storage the host cannot map (VK staging).
    const size_t dst_size = buffer_size(call.src(1)), src_size = buffer_size(call.src(2));
    if (dst_size != src_size)
      throw std::invalid_argument("run_linear: COPY of " + std::to_string(src_size) + " bytes into a buffer of " +
                                  std::to_string(dst_size) + " bytes; expected equal sizes");
    Device* to_device = buffer_device(call.src(1));
    Device* from_device = buffer_device(call.src(2));
    if (override_ == nullptr && to_device != nullptr && from_device != nullptr && to_device != from_device)
      return copy_across(*to_device, *from_device, call, src_size);
    Device& d = use(call);
    const bool own_queue = d.separate_copy_queue();
    if (own_queue) flush();
    HWQueue copy_queue;
    HWQueue& q = own_queue ? copy_queue : queue_;
    void* to = reinterpret_cast<void*>(address(call.src(1), d));
    const void* from = reinterpret_cast<const void*>(address(call.src(2), d));
    if (timed_mode_) {
      Timed t{KernelTiming{"copy", std::to_string(src_size) + " bytes", 0, 0, static_cast<int64_t>(2 * src_size)},
              g_kernels.load(std::memory_order_relaxed), 2,
              &timing_signal(d, 2 * timed_.size()), &timing_signal(d, 2 * timed_.size() + 1), own_queue ? "copy" : "compute"};
      t.copy_bytes = static_cast<int64_t>(src_size);
      q.timestamp(*t.start).copy(to, from, src_size).timestamp(*t.end);
      timed_.push_back(std::move(t));
    } else {
      q.copy(to, from, src_size);
    }
    if (own_queue) submit_and_wait(d, q, "copy");
  }

  // The device a buffer names (through views into an arena), or null when it names none.
  static Device* buffer_device(const UOp& buffer) {
    const UOp* b = &buffer;
    while (b->op() == Ops::BUFFER && !b->src().empty() && b->src(0).op() == Ops::BUFFER) b = &b->src(0);
    if (b->op() != Ops::BUFFER || b->src().size() < 2 || b->src(1).op() != Ops::DEVICE) return nullptr;
    return &device(b->src(1).arg_as<std::string>());
  }

  // CALL(COPY) between two devices (CPU <-> NV, NV <-> NV:1): through the host once both finished what was recorded
  // before it, each side through its device's transfer hook (write_buffer/read_buffer: NV's copy engine and staging
  // ring for large buffers), a host buffer's bytes read or written in place.
  void copy_across(Device& to, Device& from, const UOp& call, size_t bytes) {
    flush();
    from.synchronize();
    to.synchronize();
    // No device reads another's memory: peer access (UVM_ENABLE_PEER_ACCESS on NV) is not set up.
    if (debug_level() >= 1)
      std::fprintf(stderr, "copy: %zu bytes %s -> %s through host memory (no peer access)\n", bytes, from.name().c_str(),
                   to.name().c_str());
    const int64_t t0 = monotonic_ns();
    trace::Scope span("transfer", "copy");
    if (span.active()) span.set_name("copy " + from.name() + " -> " + to.name());
    span.add("bytes", static_cast<int64_t>(bytes));
    const UOp &dst = call.src(1), &src = call.src(2);
    if (from.host_memory()) {
      write_buffer(dst, buffer_bytes(src));
    } else if (to.host_memory()) {
      read_buffer(src, buffer_bytes(dst));
    } else {
      std::vector<std::byte> through(bytes);
      read_buffer(src, through);
      write_buffer(dst, through);
    }
    if (!timed_mode_) return;
    // Host-timed: no queue of one device brackets a copy between two.
    KernelTiming t{"copy", std::to_string(bytes) + " bytes " + from.name() + " -> " + to.name(), static_cast<double>(monotonic_ns() - t0),
                   0, static_cast<int64_t>(2 * bytes)};
    if (debug_level() >= 2)
      std::fprintf(stderr, "*** %-5s %6llu %-24s %-22s %2d bufs  mem %9.3f MB  tm %10.2f us\n", to.name().c_str(),
                   static_cast<unsigned long long>(g_kernels.load(std::memory_order_relaxed)), t.name.c_str(), t.launch.c_str(), 2,
                   static_cast<double>(host_storage_bytes()) / 1e6, t.ns / 1e3);
    timings_.push_back(std::move(t));
  }

  // The timings of what just finished, printed at DEBUG=2.
  void report() {
    for (Timed& t : timed_) {
      t.timing.ns = static_cast<double>(t.end->timestamp() - t.start->timestamp());
      if (tracing_) trace_device_span(t);
      if (debug_level() >= 2) print(t);
      timings_.push_back(std::move(t.timing));
    }
    timed_.clear();
  }

  // A kernel or copy on its queue's track, at the times its queue stamped, on the host's clock (trace.h).
  void trace_device_span(const Timed& t) const {
    const int64_t start = dev_->host_time_ns(t.start->timestamp()), end = dev_->host_time_ns(t.end->timestamp());
    if (t.copy_bytes >= 0) {
      trace::device_span(dev_->name(), t.queue, "copy", "copy", start, end, {trace::arg("bytes", t.copy_bytes)});
      return;
    }
    trace::device_span(dev_->name(), t.queue, t.timing.name, "kernel", start, end,
                       {trace::arg("launch", t.timing.launch), trace::arg("grid", t.grid), trace::arg("block", t.block),
                        trace::arg("ops", t.timing.ops), trace::arg("bytes", t.timing.bytes), trace::arg("kernel", static_cast<int64_t>(t.count))});
  }

  void print(const Timed& t) const {
    const KernelTiming& k = t.timing;
    const double safe_ns = k.ns > 0 ? k.ns : 1;
    std::fprintf(stderr, "*** %-5s %6llu %-24s %-22s %2zu bufs  mem %9.3f MB  tm %10.2f us  %9.2f GFLOP/s  %8.2f GB/s\n",
                 dev_->name().c_str(), static_cast<unsigned long long>(t.count), k.name.c_str(),
                 k.launch.c_str(), t.buffers, static_cast<double>(host_storage_bytes()) / 1e6, k.ns / 1e3,
                 static_cast<double>(k.ops) / safe_ns, static_cast<double>(k.bytes) / safe_ns);
  }

  const RunOptions& options_;
  bool tracing_;  // trace::recording() when the run began: timed, and drawn on the trace
  bool timed_mode_;
  Device* override_;
  Device* dev_ = nullptr;  // the device the queue is being recorded for
  HWQueue queue_;
  std::vector<uint64_t> addresses_;
  std::vector<int64_t> vars_;
  std::vector<Timed> timed_;
  std::vector<KernelTiming> timings_;
};

std::vector<KernelTiming> run(const UOp& linear, const RunOptions& options, bool timed) {
  if (!linear || linear.op() != Ops::LINEAR)
    throw std::invalid_argument("run_linear: expected a LINEAR, got " + (linear ? print_node(linear) : std::string("a null UOp")));
  for (const UOp& call : linear.src())
    if (call.op() != Ops::CALL || call.src().empty())
      throw std::invalid_argument("run_linear: expected CALL(SINK, PROGRAM or COPY, buffers...), got " + print_node(call));
  trace::Scope span("run", "run_linear");
  span.add("calls", static_cast<int64_t>(linear.src().size()));
  LinearRunner runner(options, timed);
  for (const UOp& call : linear.src()) runner.call(call);
  runner.flush();
  return runner.take_timings();
}

}  // namespace

void run_linear(const UOp& linear, const RunOptions& options) { run(linear, options, false); }

std::vector<KernelTiming> run_linear_timed(const UOp& linear, const RunOptions& options) { return run(linear, options, true); }

uint64_t kernels_launched() { return g_kernels.load(std::memory_order_relaxed); }

}  // namespace doorbell
