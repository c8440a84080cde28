#include "hcq/run_linear.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "compiler/kernel_estimates.h"
#include "compiler/program.h"
#include "hcq/cpu/cpu_device.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "hcq/nv/nv_device.h"
#include "ir/debug.h"
#include "ir/element_storage.h"
#include "ir/exec_alu.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

// A stored value must fit its dtype: convert it first (integers wrap, floats round).
void write_element(DType dt, std::byte* p, const ConstValue& v) {
  std::optional<ConstValue> c = convert_value(dt, v);
  if (!c) throw std::runtime_error("run_linear: a value out of range for " + dt.name() + " was stored");
  store_element(dt, *c, p);
}

int64_t as_index(const ConstValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  throw std::runtime_error("run_linear: a float value used as an index");
}

// One kernel: the body is walked per element; RANGE values live in `env`, and values computed for the current
// range values are memoized until a range changes.
class KernelInterpreter {
 public:
  KernelInterpreter(const UOp& call) : call_(call) {
    for (size_t i = 1; i < call.src().size(); i++) buffers_.push_back(buffer_bytes(call.src(i)));
  }

  void run() { exec(call_.src(0)); }

 private:
  void exec(const UOp& u) {
    switch (u.op()) {
      case Ops::SINK: case Ops::GROUP: for (const UOp& s : u.src()) exec(s); return;
      case Ops::END: loop(u, 1, [&] { exec(u.src(0)); }); return;
      case Ops::STORE: {
        auto [dt, p] = element(u.src(0));
        if (p) write_element(dt, p, eval(u.src(1)));
        return;
      }
      default: throw std::runtime_error("run_linear: cannot execute " + print_node(u));
    }
  }

  template <class F> void loop(const UOp& u, size_t first, const F& body) {
    if (first == u.src().size()) { body(); return; }
    const UOp& r = u.src(first);
    int64_t end = as_index(eval(r.src(0)));
    for (int64_t i = 0; i < end; i++) {
      env_[r.get()] = i;
      generation_++;
      loop(u, first + 1, body);
    }
    env_.erase(r.get());
    generation_++;
  }

  // The element an INDEX names, or a null pointer when its validity is false.
  std::pair<DType, std::byte*> element(const UOp& index) {
    const ParamArg& p = std::get<ParamArg>(index.src(0).arg());
    DType dt = index.src(0).dtype();
    if (index.src().size() > 2 && !std::get<bool>(eval(index.src(2)))) return {dt, nullptr};
    int64_t i = as_index(eval(index.src(1)));
    std::span<std::byte> bytes = buffers_.at(p.slot);
    int64_t count = static_cast<int64_t>(bytes.size()) / dt.itemsize();
    if (i < 0 || i >= count)
      throw std::runtime_error("run_linear: kernel index " + std::to_string(i) + " is outside buffer slot " + std::to_string(p.slot) +
                               " of " + std::to_string(count) + " elements");
    return {dt, bytes.data() + i * dt.itemsize()};
  }

  ConstValue eval(const UOp& u) {
    if (u.op() == Ops::CONST) return u.const_value();
    if (u.op() == Ops::RANGE) return env_.at(u.get());
    auto it = memo_.find(u.get());
    if (it != memo_.end() && it->second.first == generation_) return it->second.second;
    ConstValue v = compute(u);
    memo_[u.get()] = {generation_, v};
    return v;
  }

  ConstValue compute(const UOp& u) {
    switch (u.op()) {
      case Ops::LOAD: {
        auto [dt, p] = element(u.src(0));
        return p ? load_element(dt, p) : *convert_value(dt, int64_t{0});
      }
      case Ops::REDUCE: {
        Ops op = u.arg_as<ReduceArg>().op;
        std::optional<ConstValue> acc;
        DType dts[2] = {u.dtype(), u.dtype()};
        loop(u, 1, [&] {
          ConstValue x = eval(u.src(0));
          if (!acc) { acc = x; return; }
          ConstValue vals[2] = {*acc, x};
          acc = exec_alu(op, u.dtype(), vals, dts);
        });
        if (acc) return *acc;
        return reduce_identity(op, u.dtype());  // an empty range, as the compiled kernels' accumulators start
      }
      default: break;
    }
    if (!group::Elementwise.contains(u.op())) throw std::runtime_error("run_linear: cannot evaluate " + print_node(u));
    std::vector<ConstValue> vals;
    std::vector<DType> dts;
    for (const UOp& s : u.src()) { vals.push_back(eval(s)); dts.push_back(s.dtype()); }
    std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), vals, dts);
    if (!r) throw std::runtime_error("run_linear: " + std::string(op_name(u.op())) + " is undefined for its operands (division by zero or a shift out of range)");
    return *r;
  }

  UOp call_;
  std::vector<std::span<std::byte>> buffers_;
  std::unordered_map<const UOpNode*, int64_t> env_;
  std::unordered_map<const UOpNode*, std::pair<uint64_t, ConstValue>> memo_;
  uint64_t generation_ = 0;
};

// The calls of one LINEAR, handled by kind, recorded into one HWQueue for the CPU device and submitted once:
// the device's ring runs them in order, so no host wait separates two kernels. A reference-interpreted kernel
// (CALL(SINK)) runs on this thread, so what was recorded before it is submitted and waited for first.
// At DEBUG=2 every exec is bracketed by timestamps the queue writes, and one line per kernel gives its name, its
// launch (cores x outermost iterations), buffers, kernel-only time, GFLOP/s and GB/s (tinygrad's DEBUG=2 line).
// Elementary operations (ALU ops plus 4-byte words moved) below which another core does not pay for its wake-up.
constexpr int64_t kMinWorkPerCore = 8192;

class LinearRunner {
 public:
  explicit LinearRunner(bool timed) : timed_mode_(timed || debug_level() >= 2) {}

  void call(const UOp& call) {
    switch (call.src(0).op()) {
      case Ops::SINK:  // the reference, element by element on this thread: after what the device still runs
        flush();
        KernelInterpreter(call).run();
        return;
      case Ops::PROGRAM: return kernel(call);
      case Ops::COPY: return copy(call);
      default: throw std::invalid_argument("run_linear: no handler for a CALL of " + print_node(call.src(0)));
    }
  }

  // Submits what is recorded and waits for it: results are readable when this returns.
  void flush() {
    if (queue_.size() == 0) return;
    queue_.signal(dev_->timeline_signal(), dev_->next_timeline()).submit(*dev_);
    dev_->synchronize();
    for (const Timed& t : timed_) {
      if (debug_level() >= 2) print_timed(t);
      timings_.push_back(KernelTiming{t.name, t.launch, static_cast<double>(t.end->timestamp() - t.start->timestamp()), t.estimates});
    }
    queue_ = HWQueue();
    timed_.clear();
  }

 private:
  struct Timed {
    std::string name;
    std::string launch;  // "[cores x iterations]" on the CPU, "[grid x block]" on a GPU
    UOp call;
    KernelEstimates estimates;
    Signal* start;
    Signal* end;
  };

  // The device of a call is its buffers' device (a view's arena's); one LINEAR runs on one device.
  Device& dev(const UOp& call) {
    for (size_t i = 1; i < call.src().size(); i++) {
      UOp b = call.src(i);
      while (b.op() == Ops::BUFFER && b.src(0).op() == Ops::BUFFER) b = b.src(0);
      if (b.op() != Ops::BUFFER || b.src().size() < 2 || b.src(1).op() != Ops::DEVICE) continue;
      const std::string& name = b.src(1).arg_as<std::string>();
      if (dev_ && dev_->name() == name) continue;
      Device& d = device(name);  // throws for a device that does not exist
      if (!dev_) set_device(d);
      else
        throw std::invalid_argument("run_linear: a call on " + name + " in a LINEAR that runs on " + dev_->name() +
                                    "; expected one device (copies between devices arrive with the GPU devices)");
    }
    if (!dev_) set_device(device("CPU"));
    return *dev_;
  }

  void kernel(const UOp& call) {
    Device& d = dev(call);
    if (nv_ != nullptr) return nv_kernel(*nv_, call);
    const Launch& l = launch_of(call.src(0));
    buffers_.clear();
    for (size_t i = 1; i < call.src().size(); i++) buffers_.push_back(buffer_bytes(call.src(i)).data());
    int32_t cores = std::min(l.cores, static_cast<int32_t>(workers_));
    if (!timed_mode_) {
      queue_.exec(l.kernel.fn, std::span<void* const>(buffers_.data(), buffers_.size()), {}, cores);
      return;
    }
    size_t i = timed_.size();
    char launch[48];
    std::snprintf(launch, sizeof launch, "[%d x %lld]", cores, static_cast<long long>(l.estimates.global_size));
    Timed t{l.kernel.name, launch, call, l.estimates, &timing_signal(d, 2 * i), &timing_signal(d, 2 * i + 1)};
    queue_.timestamp(*t.start).exec(l.kernel.fn, std::span<void* const>(buffers_.data(), buffers_.size()), {}, cores);
    queue_.timestamp(*t.end);
    timed_.push_back(std::move(t));
  }

  // A kernel on the NV device: rendered as PTX for its architecture (the GPU optimizer and launch dims of
  // compiler/gpu), loaded once per program, launched with the buffers' device addresses.
  struct NvLaunch {
    UOp program;
    std::unique_ptr<nv::NvProgram> loaded;
    std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
    KernelEstimates estimates;
  };
  static const NvLaunch& nv_launch_of(nv::NvDevice& d, const UOp& program) {
    static std::mutex mu;
    static auto* launches = new std::unordered_map<const UOpNode*, NvLaunch>();  // never destroyed, as the device
    std::lock_guard lock(mu);
    auto it = launches->find(program.get());
    if (it != launches->end()) return it->second;
    nv::NvDevice::LoadedKernel k = d.load_kernel(program.src(0));
    NvLaunch l{program, std::move(k.program), k.grid, k.block, estimate_kernel(program.src(0))};
    return launches->emplace(program.get(), std::move(l)).first->second;
  }

  void nv_kernel(nv::NvDevice& d, const UOp& call) {
    const NvLaunch& l = nv_launch_of(d, call.src(0));
    args_.clear();
    for (size_t i = 1; i < call.src().size(); i++) args_.push_back(buffer_device_address(call.src(i)));
    if (!timed_mode_) {
      queue_.exec(*l.loaded, args_, l.grid, l.block);
      return;
    }
    size_t i = timed_.size();
    char launch[64];
    std::snprintf(launch, sizeof launch, "[%u,%u,%u x %u,%u,%u]", l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2]);
    Timed t{l.loaded->name(), launch, call, l.estimates, &timing_signal(d, 2 * i), &timing_signal(d, 2 * i + 1)};
    queue_.timestamp(*t.start).exec(*l.loaded, args_, l.grid, l.block).timestamp(*t.end);
    timed_.push_back(std::move(t));
  }

  // What launching a PROGRAM needs, worked out once per program: its function, its estimates, and how many cores
  // its work is worth. A fan-out to the workers costs about a microsecond, so a kernel with little work runs on
  // one core (the warm tiny realize), and a big one on every core.
  struct Launch {
    UOp program;  // keeps the key's node alive
    CompiledKernel kernel;
    KernelEstimates estimates;
    int32_t cores = 1;
  };
  static const Launch& launch_of(const UOp& program) {
    static std::mutex mu;
    static auto* launches = new std::unordered_map<const UOpNode*, Launch>();  // never destroyed, as the code
    std::lock_guard lock(mu);
    auto it = launches->find(program.get());
    if (it != launches->end()) return it->second;
    Launch l{program, compile_kernel(program.src(0)), estimate_kernel(program.src(0)), 1};
    int64_t work = l.estimates.ops + (l.estimates.bytes_read + l.estimates.bytes_written) / 4;
    l.cores = static_cast<int32_t>(std::clamp<int64_t>(std::min(work / kMinWorkPerCore, l.estimates.global_size), 1, 1 << 20));
    return launches->emplace(program.get(), std::move(l)).first->second;
  }

  // CALL(COPY, dst, src): the bytes of one buffer into another of the same size, in queue order.
  void copy(const UOp& call) {
    if (call.src().size() != 3)
      throw std::invalid_argument("run_linear: expected CALL(COPY, destination, source), got " + print_node(call));
    Device& d = dev(call);
    std::span<std::byte> dst = buffer_bytes(call.src(1)), src = buffer_bytes(call.src(2));
    if (dst.size() != src.size())
      throw std::invalid_argument("run_linear: COPY of " + std::to_string(src.size()) + " bytes into a buffer of " +
                                  std::to_string(dst.size()) + " bytes; expected equal sizes");
    if (nv_ != nullptr) {  // the copy engine's own channel, between the kernels
      flush();
      HWQueue()
          .copy(reinterpret_cast<void*>(buffer_device_address(call.src(1))), reinterpret_cast<const void*>(buffer_device_address(call.src(2))), src.size())
          .signal(d.timeline_signal(), d.next_timeline())
          .submit(d);
      d.synchronize();
      return;
    }
    queue_.copy(dst.data(), src.data(), src.size());
  }

  // Timing signals are the device's and live as long as it; a thread reuses its own across runs.
  static Signal& timing_signal(Device& d, size_t i) {
    thread_local std::vector<Signal*> pool;
    while (pool.size() <= i) pool.push_back(&d.new_signal("kernel timestamp " + std::to_string(pool.size())));
    return *pool[i];
  }

  void print_timed(const Timed& t) const {
    const KernelEstimates& e = t.estimates;
    double ns = static_cast<double>(t.end->timestamp() - t.start->timestamp());
    double safe_ns = ns > 0 ? ns : 1;
    std::fprintf(stderr, "*** %-4s %-24s %-18s %2zu bufs  %10.2f us  %9.2f GFLOP/s  %9.2f GB/s\n", dev_->name().c_str(),
                 t.name.c_str(), t.launch.c_str(), t.call.src().size() - 1, ns / 1e3,
                 static_cast<double>(e.ops) / safe_ns, static_cast<double>(e.bytes_read + e.bytes_written) / safe_ns);
  }


  // The device and its worker count (looked up once: kernel() needs it for every launch).
  void set_device(Device& d) {
    dev_ = &d;
    nv_ = dynamic_cast<nv::NvDevice*>(dev_);
    auto* cpu = dynamic_cast<CpuDevice*>(dev_);
    workers_ = cpu ? cpu->worker_count() : 1;
  }

 public:
  std::vector<KernelTiming> take_timings() { return std::move(timings_); }

 private:
  bool timed_mode_;
  std::vector<KernelTiming> timings_;
  Device* dev_ = nullptr;  // created on the first call that needs it
  nv::NvDevice* nv_ = nullptr;  // dev_ when it is the NV device: its kernels and copies take the GPU path
  uint32_t workers_ = 1;
  HWQueue queue_;
  std::vector<void*> buffers_;
  std::vector<uint64_t> args_;
  std::vector<Timed> timed_;
};

}  // namespace

namespace {
std::vector<KernelTiming> run(const UOp& linear, bool timed) {
  if (!linear || linear.op() != Ops::LINEAR)
    throw std::invalid_argument("run_linear: expected a LINEAR, got " + (linear ? print_node(linear) : std::string("a null UOp")));
  for (const UOp& call : linear.src())
    if (call.op() != Ops::CALL || call.src().empty())
      throw std::invalid_argument("run_linear: expected CALL(SINK, PROGRAM or COPY, buffers...), got " + print_node(call));
  LinearRunner runner(timed);
  for (const UOp& call : linear.src()) runner.call(call);
  runner.flush();
  return runner.take_timings();
}
}  // namespace

void run_linear(const UOp& linear) { run(linear, false); }

std::vector<KernelTiming> run_linear_timed(const UOp& linear) { return run(linear, true); }

}  // namespace doorbell
