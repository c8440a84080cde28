#include "hcq_fuzz.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>

#include "hcq/cpu/cpu_device.h"

namespace doorbell::hcq_fuzz {
namespace {

constexpr uint64_t kNeverReached = ~uint64_t{0};  // what kWaitTooFar waits for

int64_t mix(int64_t a, int64_t b, int64_t k, int lane) {
  // In unsigned arithmetic: it wraps where int64 would overflow.
  const uint64_t v = static_cast<uint64_t>(a) * 3 + static_cast<uint64_t>(b) * 5 + static_cast<uint64_t>(k) +
                     static_cast<uint64_t>(lane);
  return static_cast<int64_t>(v);
}

// buffers: out, in1, in2 and the exec's trace slot (its own record of what it wrote: the cell may be overwritten
// later); scalars: k. Core i computes lanes i, i + cores, ...; each lane is read before it is written, so out may
// alias an input.
void exec_kernel(void* const* buffers, const int64_t* scalars, int32_t core, int32_t cores) {
  auto* out = static_cast<int64_t*>(buffers[0]);
  const auto* a = static_cast<const int64_t*>(buffers[1]);
  const auto* b = static_cast<const int64_t*>(buffers[2]);
  auto* trace = static_cast<int64_t*>(buffers[3]);
  for (int lane = core; lane < kLanes; lane += cores) {
    const int64_t v = mix(a[lane], b[lane], scalars[0], lane);
    out[lane] = v;
    trace[lane] = v;
  }
}

}  // namespace

Cell initial_cell(int cell) {
  Cell c{};
  for (int lane = 0; lane < kLanes; ++lane) c[lane] = (cell + 1) * 1'000'003 + lane * 7;
  return c;
}

namespace {

Cell mix_cells(const Cell& a, const Cell& b, int64_t k) {
  Cell r{};
  for (int lane = 0; lane < kLanes; ++lane) r[lane] = mix(a[lane], b[lane], k, lane);
  return r;
}

std::string cell_text(const Cell& c) {
  std::string s = "[";
  for (int lane = 0; lane < kLanes; ++lane) s += (lane ? ", " : "") + std::to_string(c[lane]);
  return s + "]";
}

std::string device_name(const Program& p, int device) {
  static constexpr std::array<const char*, 2> kNames{"CPU", "CPU:1"};
  return device == kGpuDevice ? p.gpu : kNames[device];
}

std::string signal_name(const Plan& plan, int signal) {
  return signal == plan.signals - 1 ? "gate" : "s" + std::to_string(signal);
}

// Lowers the abstract ops in their reference order, tracking per stream a vector clock (how far each other stream
// is known to be done before this stream's current end) to add only the waits that dependencies need.
class Lowering {
 public:
  Lowering(const Program& p, Sabotage sabotage)
      : p_(p), sabotage_(sabotage), streams_(static_cast<int>(p.stream_device.size())), st_(streams_),
        writer_(p.cells), readers_(p.cells) {
    for (int c = 0; c < p.cells; ++c) model_.push_back(initial_cell(c));
    plan_.signals = streams_ + 1;
    plan_.exec_results.assign(p.ops.size(), Cell{});
    for (Stream& s : st_) s.clock.assign(streams_, 0);
  }

  Plan lower() {
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      const Op& op = p_.ops[i];
      const int q = op.stream;
      switch (op.kind) {
        case OpKind::kExec: exec(static_cast<int>(i)); break;
        case OpKind::kCopy: copy(static_cast<int>(i)); break;
        case OpKind::kSync: wait_for_stream(q, op.other, st_[op.other].done); break;
        case OpKind::kFlush: flush(q, op.bind); break;
        case OpKind::kGate:
          if (gate_requested_ == gate_opened_) since_gate_ = 0;
          st_[q].open.commands.push_back({CommandKind::kWait, -1, gate(), ++gate_requested_});
          break;
        case OpKind::kHostRead: host_read(op.in1); break;
      }
    }
    for (int q = 0; q < streams_; ++q) {
      if (st_[q].done > 0) signal_covering(q, st_[q].done);
      flush(q, false);
    }
    open_gate();
    plan_.final_values.resize(plan_.signals);
    for (int q = 0; q < streams_; ++q) plan_.final_values[q] = st_[q].value;
    plan_.final_values[gate()] = gate_requested_;
    plan_.final_cells = model_;
    return std::move(plan_);
  }

 private:
  struct Stream {
    Submission open;               // recorded, not yet handed over
    int done = 0;                  // exec and copy ops so far: the stream's position
    uint64_t value = 0;            // its signal's last value
    uint64_t submitted_value = 0;  // the last value in a submission handed over
    std::vector<uint64_t> values;  // the values it signalled, in order
    std::vector<int> covers;       // per value: the position it was signalled at
    std::vector<std::vector<int>> clock_at;  // per value: the stream's clock then
    std::vector<int> clock;                  // per stream: the position known to be done before this one's end
  };
  struct Access {
    int stream = 0;
    int pos = 0;
  };

  int gate() const { return streams_; }

  // Returns the index (into values) of the first signal of stream p after its op at `pos`, adding one if needed.
  size_t signal_covering(int p, int pos) {
    Stream& s = st_[p];
    for (size_t i = 0; i < s.covers.size(); ++i)
      if (s.covers[i] >= pos) return i;
    s.value += p_.signal_stride[p];
    s.open.commands.push_back({CommandKind::kSignal, -1, p, s.value});
    s.values.push_back(s.value);
    s.covers.push_back(s.done);
    s.clock_at.push_back(s.clock);
    return s.values.size() - 1;
  }

  void flush(int q, bool bind) {
    Stream& s = st_[q];
    if (s.open.commands.empty()) return;
    s.open.stream = q;
    s.open.bind = bind;
    plan_.steps.push_back({HostStep::kSubmit, static_cast<int>(plan_.submissions.size())});
    plan_.submissions.push_back(std::move(s.open));
    s.open = Submission{};
    s.submitted_value = s.value;
    // Work queued behind a closed gate fills the rings; the host opens it well before a ring (64 slots) is full.
    if (gate_requested_ != gate_opened_ && ++since_gate_ >= 48) open_gate();
  }

  void open_gate() {
    if (gate_opened_ == gate_requested_) return;
    plan_.steps.push_back({HostStep::kOpenGate, 0, gate(), gate_requested_});
    gate_opened_ = gate_requested_;
  }

  // Makes stream q wait until stream p has done `pos` ops, unless it already must.
  void wait_for_stream(int q, int p, int pos) {
    if (p == q || pos <= 0 || st_[q].clock[p] >= pos) return;
    const size_t i = signal_covering(p, pos);
    const uint64_t v = st_[p].values[i];
    if (v > st_[p].submitted_value) flush(p, false);  // a wait only waits for what was handed over before it
    uint64_t wait_value = v;
    if (sabotage_ == Sabotage::kWaitTooFar && !sabotaged_) {
      wait_value = kNeverReached;
      sabotaged_ = true;
    }
    st_[q].open.commands.push_back({CommandKind::kWait, -1, p, wait_value});
    ++plan_.cross_waits;
    const std::vector<int>& theirs = st_[p].clock_at[i];
    for (int r = 0; r < streams_; ++r) st_[q].clock[r] = std::max(st_[q].clock[r], theirs[r]);
  }

  void depend(int q, int cell, bool write) {
    if (writer_[cell]) wait_for_stream(q, writer_[cell]->stream, writer_[cell]->pos);
    if (write)
      for (const Access& r : readers_[cell]) wait_for_stream(q, r.stream, r.pos);
  }

  void accessed(int q, std::initializer_list<int> reads, int written) {
    Stream& s = st_[q];
    s.clock[q] = ++s.done;
    for (int c : reads) readers_[c].push_back({q, s.done});
    writer_[written] = Access{q, s.done};
    readers_[written].clear();
  }

  void exec(int i) {
    const Op& op = p_.ops[i];
    depend(op.stream, op.in1, false);
    depend(op.stream, op.in2, false);
    depend(op.stream, op.out, true);
    LoweredCommand c{CommandKind::kExec, i};
    c.k = op.k;
    if (sabotage_ == Sabotage::kWrongConstant && !sabotaged_) {
      c.k += 1;
      sabotaged_ = true;
    }
    st_[op.stream].open.commands.push_back(c);
    model_[op.out] = plan_.exec_results[i] = mix_cells(model_[op.in1], model_[op.in2], op.k);
    accessed(op.stream, {op.in1, op.in2}, op.out);
  }

  void copy(int i) {
    const Op& op = p_.ops[i];
    depend(op.stream, op.in1, false);
    depend(op.stream, op.out, true);
    st_[op.stream].open.commands.push_back({CommandKind::kCopy, i});
    model_[op.out] = model_[op.in1];
    accessed(op.stream, {op.in1}, op.out);
  }

  void host_read(int cell) {
    open_gate();
    HostStep step{HostStep::kRead, 0, -1, 0, cell, model_[cell]};
    if (writer_[cell]) {
      const int p = writer_[cell]->stream;
      step.signal = p;
      step.value = st_[p].values[signal_covering(p, writer_[cell]->pos)];
      if (step.value > st_[p].submitted_value) flush(p, false);
    }
    plan_.steps.push_back(step);
  }

  const Program& p_;
  Sabotage sabotage_;
  bool sabotaged_ = false;
  int streams_;
  std::vector<Stream> st_;
  std::vector<std::optional<Access>> writer_;
  std::vector<std::vector<Access>> readers_;
  std::vector<Cell> model_;
  uint64_t gate_requested_ = 0;
  uint64_t gate_opened_ = 0;
  int since_gate_ = 0;
  Plan plan_;
};

std::string command_text(const Program& p, const Plan& plan, const LoweredCommand& c) {
  switch (c.kind) {
    case CommandKind::kExec: {
      const Op& op = p.ops[c.op];
      return "exec c" + std::to_string(op.out) + " = mix(c" + std::to_string(op.in1) + ", c" + std::to_string(op.in2) +
             ", k=" + std::to_string(c.k) + ") on " + (op.cores ? std::to_string(op.cores) : std::string("all")) +
             " cores [op " + std::to_string(c.op) + "]";
    }
    case CommandKind::kCopy: {
      const Op& op = p.ops[c.op];
      return "copy c" + std::to_string(op.out) + " = c" + std::to_string(op.in1) + " [op " + std::to_string(c.op) + "]";
    }
    case CommandKind::kSignal: return "signal " + signal_name(plan, c.signal) + " = " + std::to_string(c.value);
    case CommandKind::kWait: return "wait " + signal_name(plan, c.signal) + " >= " + std::to_string(c.value);
    default: return command_kind_name(c.kind);
  }
}

}  // namespace

Program generate(uint64_t seed, const std::string& gpu) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Program p;
  p.seed = seed;
  p.gpu = gpu;
  const bool with_gpu = !gpu.empty();
  constexpr std::array<int64_t, 3> kSpins{0, 2'000, 50'000};
  for (int d = 0; d < 2; ++d) {
    p.workers[d] = static_cast<uint32_t>(pick(1, 3));
    p.spin_ns[d] = kSpins[pick(0, 2)];
  }
  const int streams = pick(2, 4);
  for (int s = 0; s < streams; ++s) {
    p.stream_device.push_back(pick(0, with_gpu ? 2 : 1));
    // A stride of 2^32 changes only the high half of the 64-bit value (a missed wake-up once, see signal.h).
    p.signal_stride.push_back(pick(0, 2) == 0 ? uint64_t{1} << 32 : 1);
  }
  p.cells = pick(2, 6);
  // One program in 16 is long enough to fill the devices' 64-slot rings.
  const int n = pick(0, 15) == 0 ? pick(100, 400) : pick(4, 40);
  for (int i = 0; i < n; ++i) {
    Op op;
    op.stream = pick(0, streams - 1);
    const int r = pick(0, 99);
    if (r < 45 && p.stream_device[op.stream] != kGpuDevice) {
      op.kind = OpKind::kExec;
      op.out = pick(0, p.cells - 1);
      op.in1 = pick(0, p.cells - 1);
      op.in2 = pick(0, p.cells - 1);
      op.k = pick(-1000, 1000);
      op.cores = pick(0, 4);
    } else if (r < 60 || (r < 45 && p.stream_device[op.stream] == kGpuDevice)) {  // GPU streams copy only
      op.kind = OpKind::kCopy;
      op.out = pick(0, p.cells - 1);
      op.in1 = (op.out + pick(1, p.cells - 1)) % p.cells;
    } else if (r < 72) {
      op.kind = OpKind::kSync;
      op.other = (op.stream + pick(1, streams - 1)) % streams;
    } else if (r < 87) {
      op.kind = OpKind::kFlush;
      op.bind = pick(0, 3) == 0;
    } else if (r < 92) {
      op.kind = OpKind::kGate;
    } else {
      op.kind = OpKind::kHostRead;
      op.in1 = pick(0, p.cells - 1);
    }
    p.ops.push_back(op);
  }
  return p;
}

Plan lower(const Program& program, Sabotage sabotage) { return Lowering(program, sabotage).lower(); }

std::string run(const Program& p, const RunOptions& o) {
  const bool with_gpu = !p.gpu.empty();
  if (with_gpu && !o.open_gpu)
    throw std::invalid_argument("hcq_fuzz::run: the program has " + p.gpu + " streams; expected open_gpu");
  const Plan plan = lower(p, o.sabotage);
  std::string failure;
  std::array<std::unique_ptr<Device>, 3> devices;  // CPU, CPU:1 and, for a GPU program, the GPU
  // Cells, then each op's trace slot, then two scratch cells: in host memory, or the GPU's storage (mapped for the
  // host) when GPU streams copy them.
  const size_t slots = static_cast<size_t>(p.cells) + p.ops.size() + 2;
  std::vector<Cell> host_memory;
  Device::Storage storage{};
  std::deque<Signal> host_signals;  // outlive the devices, which are destroyed before run() returns
  std::vector<Signal*> signals;     // GPU waits and signals need the GPU's signals; the CPU uses those too
  auto blockages = [&] {
    std::string text;
    for (const auto& d : devices)
      if (d != nullptr)
        if (const std::string b = d->blockage(); !b.empty()) text += "; " + d->name() + ": " + b;
    return text;
  };
  try {
    for (int d = 0; d < 2; ++d)
      devices[d] = std::make_unique<CpuDevice>(CpuDeviceOptions{.workers = p.workers[d], .spin_ns = p.spin_ns[d],
                                                                .pin_threads = false, .submit_timeout = o.watchdog},
                                               device_name(p, d));
    if (with_gpu) {
      devices[kGpuDevice] = o.open_gpu();
      storage = devices[kGpuDevice]->allocate_storage(slots * sizeof(Cell));
      // A GPU without host-visible memory (a discrete GPU's Vulkan device-local heap alone) cannot share the cells
      // with the CPU devices' execs: refuse rather than run them on memory the host cannot reach.
      if (storage.host == nullptr)
        throw std::invalid_argument("hcq_fuzz::run: " + devices[kGpuDevice]->name() +
                                    "'s storage has no host mapping; expected memory the CPU devices can reach");
    } else {
      host_memory.resize(slots);
      storage.host = host_memory.data();
      storage.address = reinterpret_cast<uintptr_t>(host_memory.data());
    }
    Cell* const cells = static_cast<Cell*>(storage.host);
    for (int c = 0; c < p.cells; ++c) cells[c] = initial_cell(c);
    Cell* const trace = cells + p.cells;
    // Where a command on `device` finds slot i: the host address, or the GPU's address for it.
    auto at = [&](int device, size_t slot) -> void* {
      if (device != kGpuDevice) return cells + slot;
      return reinterpret_cast<void*>(static_cast<uintptr_t>(storage.address + slot * sizeof(Cell)));
    };
    for (int s = 0; s < plan.signals; ++s)
      signals.push_back(with_gpu ? &devices[kGpuDevice]->new_signal(signal_name(plan, s))
                             : &host_signals.emplace_back("host", signal_name(plan, s)));
    for (size_t step_index = 0; step_index < plan.steps.size() && failure.empty(); ++step_index) {
      const HostStep& step = plan.steps[step_index];
      const std::string where = "host step " + std::to_string(step_index) + ": ";
      switch (step.kind) {
        case HostStep::kSubmit: {
          const Submission& sub = plan.submissions[step.submission];
          const int device = p.stream_device[sub.stream];
          HWQueue q;
          bool copies = false;
          for (const LoweredCommand& c : sub.commands) {
            if (c.kind == CommandKind::kExec) {
              const Op& op = p.ops[c.op];
              const std::array<void*, 4> buffers{at(device, op.out), at(device, op.in1), at(device, op.in2),
                                                 trace + c.op};
              const std::array<int64_t, 1> k{c.k};
              q.exec(exec_kernel, buffers, k, op.cores);
            } else if (c.kind == CommandKind::kCopy) {
              q.copy(at(device, p.ops[c.op].out), at(device, p.ops[c.op].in1), sizeof(Cell));
              copies = true;
            } else if (c.kind == CommandKind::kSignal) {
              q.signal(*signals[c.signal], c.value);
            } else {
              q.wait(*signals[c.signal], c.value);
            }
          }
          // NV and AMD run copies on their copy engine's ring and the rest on the compute ring, two rings with no
          // order between them: a scratch copy keeps every submission of a GPU stream on the copy ring. (VK records
          // copies in line with the rest: separate_copy_queue() is false, and no scratch copy is needed.)
          if (device == kGpuDevice && !copies && devices[device]->separate_copy_queue())
            q.copy(at(device, slots - 1), at(device, slots - 2), sizeof(Cell));
          if (sub.bind) q.bind(*devices[device]);
          q.submit(*devices[device]);
          break;
        }
        case HostStep::kOpenGate: signals[step.signal]->set(step.value); break;
        case HostStep::kRead:
          if (step.signal >= 0 && !signals[step.signal]->wait_for(step.value, o.watchdog)) {
            failure = where + "deadlock: signal " + signal_name(plan, step.signal) + " did not reach " +
                      std::to_string(step.value) + " within the watchdog's " + std::to_string(o.watchdog.count()) +
                      " ms (value " + std::to_string(signals[step.signal]->value()) + ")" + blockages();
          } else if (cells[step.cell] != step.expect) {
            failure = where + "order: cell c" + std::to_string(step.cell) + " reads " + cell_text(cells[step.cell]) +
                      "; the model has " + cell_text(step.expect);
          }
          break;
      }
    }
    // Completion: every stream's signal reaches its final value (an NV or AMD stream's work is on its copy ring,
    // which the device's timeline does not cover), then each device's timeline, which also reports a failed queue.
    for (int s = 0; s < plan.signals && failure.empty(); ++s)
      if (!signals[s]->wait_for(plan.final_values[s], o.watchdog))
        failure = "deadlock: signal " + signal_name(plan, s) + " did not reach " +
                  std::to_string(plan.final_values[s]) + " within the watchdog's " +
                  std::to_string(o.watchdog.count()) + " ms (value " + std::to_string(signals[s]->value()) + ")" +
                  blockages();
    if (failure.empty()) {
      for (const auto& d : devices)
        if (d != nullptr) HWQueue().signal(d->timeline_signal(), d->next_timeline()).submit(*d);
      for (const auto& d : devices)
        if (d != nullptr) d->synchronize(o.watchdog);  // its timeout names what the device waits for
      for (int s = 0; s < plan.signals && failure.empty(); ++s) {
        if (signals[s]->value() != plan.final_values[s])
          failure = "completion: signal " + signal_name(plan, s) + " ends at " + std::to_string(signals[s]->value()) +
                    "; expected " + std::to_string(plan.final_values[s]);
      }
      for (size_t i = 0; i < p.ops.size() && failure.empty(); ++i)
        if (p.ops[i].kind == OpKind::kExec && trace[i] != plan.exec_results[i])
          failure = "order: exec op " + std::to_string(i) + " on s" + std::to_string(p.ops[i].stream) + " wrote " +
                    cell_text(trace[i]) + "; the model has " + cell_text(plan.exec_results[i]) +
                    " (it saw other inputs than its place in the order gives it)";
      for (int c = 0; c < p.cells && failure.empty(); ++c)
        if (cells[c] != plan.final_cells[c])
          failure = "completion: cell c" + std::to_string(c) + " ends as " + cell_text(cells[c]) + "; the model has " +
                    cell_text(plan.final_cells[c]);
    }
  } catch (const std::exception& e) {
    failure = std::string("threw: ") + e.what();
  }
  // After a failure devices may still wait: destroying them abandons those waits (CpuDevice's destructor). The CPU
  // devices go first: they may be polling the GPU's signals.
  devices[0].reset();
  devices[1].reset();
  if (devices[kGpuDevice] != nullptr && storage.host != nullptr) devices[kGpuDevice]->release_storage(storage);
  devices[kGpuDevice].reset();
  return failure;
}

Program shrink(Program p, const RunOptions& o, int* runs) {
  int count = 0;
  constexpr int kMaxRuns = 400;
  for (size_t chunk = std::max<size_t>(p.ops.size() / 2, 1);; chunk = std::max<size_t>(chunk / 2, 1)) {
    for (size_t start = 0; start < p.ops.size() && count < kMaxRuns;) {
      Program candidate = p;
      candidate.ops.erase(candidate.ops.begin() + static_cast<std::ptrdiff_t>(start),
                          candidate.ops.begin() + static_cast<std::ptrdiff_t>(std::min(start + chunk, p.ops.size())));
      ++count;
      if (!run(candidate, o).empty()) {
        p = std::move(candidate);  // the next piece moved into `start`
      } else {
        start += chunk;
      }
    }
    if (chunk == 1 || count >= kMaxRuns) break;
  }
  if (runs != nullptr) *runs = count;
  return p;
}

std::string describe(const Program& p, Sabotage sabotage) {
  const Plan plan = lower(p, sabotage);
  std::string s = "program (seed " + std::to_string(p.seed) + "), " + std::to_string(p.ops.size()) + " ops;";
  for (int d = 0; d < 2; ++d)
    s += " " + device_name(p, d) + ": " + std::to_string(p.workers[d]) + " workers, spin " +
         std::to_string(p.spin_ns[d]) + " ns;";
  if (!p.gpu.empty()) s += " " + p.gpu + ";";
  s += " cells c0..c" + std::to_string(p.cells - 1) + " (c0 = " + cell_text(initial_cell(0)) + ", ...);";
  for (size_t q = 0; q < p.stream_device.size(); ++q)
    s += " s" + std::to_string(q) + " on " + device_name(p, p.stream_device[q]) +
         (p.signal_stride[q] == 1 ? "" : " (signal stride " + std::to_string(p.signal_stride[q]) + ")") +
         (q + 1 < p.stream_device.size() ? "," : "\n");
  for (const HostStep& step : plan.steps) {
    switch (step.kind) {
      case HostStep::kSubmit: {
        const Submission& sub = plan.submissions[step.submission];
        s += "  submit s" + std::to_string(sub.stream) + " to " + device_name(p, p.stream_device[sub.stream]) +
             (sub.bind ? " (bound):" : ":");
        for (size_t i = 0; i < sub.commands.size(); ++i)
          s += (i ? "; " : " ") + command_text(p, plan, sub.commands[i]);
        s += "\n";
        break;
      }
      case HostStep::kOpenGate: s += "  host: signal gate = " + std::to_string(step.value) + "\n"; break;
      case HostStep::kRead:
        s += "  host: read c" + std::to_string(step.cell) +
             (step.signal >= 0 ? " after " + signal_name(plan, step.signal) + " >= " + std::to_string(step.value) : "") +
             ", expect " + cell_text(step.expect) + "\n";
        break;
    }
  }
  s += "  end: synchronize both devices; expect";
  for (int sig = 0; sig < plan.signals; ++sig)
    s += " " + signal_name(plan, sig) + " = " + std::to_string(plan.final_values[sig]);
  return s + "\n";
}

}  // namespace doorbell::hcq_fuzz
