// Jit: capture (call 2), plan and bind; replay (calls 3+) by patching the bound queues (frontend/jit.h).
#include "frontend/jit.h"

#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "compiler/program.h"
#include "frontend/jit_capture.h"
#include "frontend/lazy_uops.h"
#include "frontend/shape.h"
#include "frontend/state.h"
#include "hcq/compile_linear.h"
#include "hcq/device.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "hcq/trace.h"
#include "hcq/wait_primitives.h"
#include "ir/debug.h"
#include "ir/printer.h"
#include "scheduler/memory_planner.h"
#include "scheduler/schedule.h"

namespace doorbell {

namespace frontend {
namespace {
thread_local JitCapture* t_capture = nullptr;
}  // namespace

JitCapture* active_jit_capture() { return t_capture; }
void set_active_jit_capture(JitCapture* capture) { t_capture = capture; }

void refuse_during_jit_capture(const char* what) {
  if (t_capture != nullptr)
    throw JitError(std::string("Jit: ") + what + " during capture would bake the values read now into every replay; expected the "
                   "function to return tensors and the caller to read them after the call");
}
}  // namespace frontend

namespace {

using frontend::plain_buffer;

std::string input_name(size_t i) { return "input " + std::to_string(i); }

// The storage a BUFFER arg names: itself, or the arena under a planned view BUFFER(arena, CONST offset).
bool is_view(const UOp& b) { return b.op() == Ops::BUFFER && !b.src().empty() && b.src(0).op() == Ops::BUFFER; }
bool is_root_buffer(const UOp& b) { return b.op() == Ops::BUFFER && b.src().size() > 1 && b.src(1).op() == Ops::DEVICE; }
std::string buffer_device_name(const UOp& b) {
  const UOp* r = &b;
  while (is_view(*r)) r = &r->src(0);
  return is_root_buffer(*r) ? r->src(1).arg_as<std::string>() : default_device_name();
}

// Where device `d` finds a buffer (as run_linear): a host device takes host pointers, any other its own addresses.
uint64_t address_on(const UOp& buffer, Device& d) {
  if (d.host_memory()) return reinterpret_cast<uintptr_t>(buffer_bytes(buffer).data());
  return buffer_device_address(buffer);
}

struct InputInfo {
  IntTuple shape;
  DType dtype;
  std::string device;
};

// The inputs, realized, as the buffers a replay patches in; every misuse is a JitError naming the input.
std::vector<UOp> input_buffers(std::span<const Tensor> inputs) {
  std::vector<Tensor> lazy;
  for (const Tensor& t : inputs)
    if (!t.is_realized()) lazy.push_back(t);
  Tensor::realize(lazy);  // tinygrad realizes unrealized inputs first too (_prepare_jit_inputs)
  std::vector<UOp> buffers;
  for (size_t i = 0; i < inputs.size(); i++) {
    const UOp u = inputs[i].uop();
    if (frontend::virtual_const_value(u))
      throw JitError("Jit: " + input_name(i) + " is a constant (no buffer to patch); expected a tensor with a buffer, e.g. "
                     "Tensor::full(...).contiguous().realize()");
    UOp b = plain_buffer(u);
    if (!b)
      throw JitError("Jit: " + input_name(i) + " is a view (" + std::string(op_name(u.op())) + ") of a buffer; expected a whole "
                     "buffer: pass t.contiguous().realize()");
    for (size_t j = 0; j < i; j++)
      if (buffers[j] == b)
        throw JitError("Jit: inputs " + std::to_string(j) + " and " + std::to_string(i) + " are the same buffer; expected "
                       "distinct inputs (pass the tensor once and use it twice inside)");
    buffers.push_back(b);
  }
  return buffers;
}

std::vector<InputInfo> input_infos(std::span<const Tensor> inputs) {
  std::vector<InputInfo> out;
  for (const Tensor& t : inputs) out.push_back({t.shape(), t.dtype(), t.device()});
  return out;
}

// Every storage BUFFER a graph reaches (through views).
void collect_storage(const UOp& root, std::unordered_set<const UOpNode*>& out) {
  for (const UOp& u : root.toposort())
    if (is_root_buffer(u)) out.insert(u.get());
}

class CaptureScope {
 public:
  explicit CaptureScope(frontend::JitCapture* c) { frontend::set_active_jit_capture(c); }
  ~CaptureScope() { frontend::set_active_jit_capture(nullptr); }
};

std::array<uint32_t, 3> dims(const std::array<int64_t, 3>& a) {
  return {static_cast<uint32_t>(a[0]), static_cast<uint32_t>(a[1]), static_cast<uint32_t>(a[2])};
}

}  // namespace

// One patch point of a bound queue and the value it holds now: a replay rewrites it only when the value changes.
struct JitPatch {
  size_t segment = 0, command = 0, slot = 0;  // a copy's slot: 0 its destination, 1 its source
  uint64_t current = 0;
  bool copy = false;
};

// A run of consecutive captured calls on one device (one channel): one HWQueue, bound once, that ends by signalling
// `done`; or a copy between two devices that only the host can make (run_linear's copy_across).
struct JitSegment {
  Device* device = nullptr;
  HWQueue queue;
  bool copies = false;        // a copy queue (a device whose copies take a queue of their own)
  Signal* done = nullptr;
  size_t signal_command = 0;
  uint64_t value = 0;         // the value `done` reaches when the last replay finished
  // The queue starts with a wait for the previous segment's `done` (its value patched each replay); or, when this
  // device cannot wait for any signal the previous one can write, the host waits before submitting it.
  bool waits = false;
  size_t wait_command = 0;
  bool host_waits = false;
  Signal* wait_passed = nullptr;  // traced capture: stamped when the wait passed
  // A cross-device copy instead of a queue: dst <- src, each an input index or -1 for the buffer itself.
  bool host_copy = false;
  UOp dst, src;
  int dst_input = -1, src_input = -1;
};

// A capture made while tracing recorded (trace.h) brackets each kernel and copy with timestamps, as run_linear does;
// its replays draw them. Other captures record none: an untraced replay stamps nothing.
struct JitTimed {
  size_t segment;
  std::string name;
  std::vector<trace::Arg> args;
  bool copy;
  Signal *start, *end;
};

// A host wait of a traced replay: for the queue `segment`, from start to end.
struct JitHostWait {
  size_t segment;
  int64_t start, end;
};

namespace {

// Whose signal the `done` of a queue on `writer` is, so that a queue on `waiter` can wait for it on the device; null
// when no signal works for both. A host device (CPU, REF) reads and writes any signal through host memory (its wait
// and signal commands use the Signal object, hcq/cpu/cpu_device.cpp run_command); a GPU waits on and releases only
// its own signals, which its queues address in its own memory (NvDevice::place_signal; a signal without a device
// address is refused by its encoder). Two GPUs share none: no peer mapping is set up (run_linear's copy_across).
Device* shared_signal_owner(Device& writer, Device& waiter) {
  if (&writer == &waiter || waiter.host_memory()) return &writer;
  if (writer.host_memory()) return &waiter;
  return nullptr;
}

// A traced replay, drawn once its queues are done, each queue's track in the order it ran: the host span, the
// queue -> queue waits, the kernels and copies a traced capture stamped, and the host's waits. Out of line and cold:
// the untraced replay only tests the flag.
[[gnu::cold, gnu::noinline]] void trace_replay(const std::vector<JitSegment>& segments, const std::vector<JitTimed>& timed_calls,
                                               const Jit::Stats& stats, int64_t replay_start, size_t words, size_t host_waits,
                                               const std::vector<JitHostWait>& waits) {
  trace::host_span("jit replay", "run", replay_start, monotonic_ns(),
                   {trace::arg("kernels", static_cast<int64_t>(stats.kernels)), trace::arg("queues", static_cast<int64_t>(stats.queues)),
                    trace::arg("patched words", static_cast<int64_t>(words)), trace::arg("host waits", static_cast<int64_t>(host_waits))});
  auto queue_name = [](const JitSegment& seg) { return seg.copies ? "copy" : "compute"; };
  size_t timed = 0, waited = 0;
  for (size_t i = 0; i < segments.size(); i++) {
    const JitSegment& seg = segments[i];
    if (seg.host_copy) continue;
    // A stamp is on the clock of the queue that wrote it (a GPU's own timer): each to the host's clock by its writer.
    Device& d = *seg.device;
    if (seg.waits) {  // the previous queue's signal ended this queue's wait, on the device
      const JitSegment& before = segments[i - 1];
      const int64_t signalled = before.device->host_time_ns(before.done->timestamp());
      const int64_t passed = seg.wait_passed != nullptr ? d.host_time_ns(seg.wait_passed->timestamp()) : signalled;
      trace::signal_to_queue_wait(before.device->name(), queue_name(before), before.done->name(), before.value, signalled,
                                  d.name(), queue_name(seg), std::min(signalled, passed), passed);
    }
    for (; timed < timed_calls.size() && timed_calls[timed].segment == i; timed++) {
      const JitTimed& t = timed_calls[timed];
      trace::device_span(d.name(), queue_name(seg), t.name, t.copy ? "copy" : "kernel", d.host_time_ns(t.start->timestamp()),
                         d.host_time_ns(t.end->timestamp()), t.args);
    }
    if (waited < waits.size() && waits[waited].segment == i) {
      const JitHostWait& w = waits[waited++];
      const int64_t signalled = d.host_time_ns(seg.done->timestamp());
      trace::signal_to_host_wait(d.name(), queue_name(seg), seg.done->name(), seg.value, signalled, signalled, w.start, w.end);
    }
  }
}

}  // namespace

struct Jit::Captured {
  std::vector<InputInfo> inputs;
  std::vector<UOp> last_inputs;             // the buffers the queues' input addresses point at now
  std::vector<Tensor> outputs;
  std::unordered_set<const UOpNode*> output_buffers;
  UOp linear;                               // planned; holds the arena and every buffer the queues point at
  std::vector<UOp> programs;                // the loaded programs stay valid while these are held
  std::vector<JitSegment> segments;
  std::vector<std::vector<JitPatch>> input_patches;  // per input: every slot that takes its address
  struct VarPatch {
    KernelVariable var;
    JitPatch at;
  };
  std::vector<VarPatch> var_patches;
  std::unordered_set<std::string> var_names;
  // Tensors the function read without taking them as inputs, and the value each held at capture.
  std::vector<std::pair<std::weak_ptr<Tensor::State>, UOp>> by_value;
  Stats stats;
  std::vector<JitTimed> timed;
};

Jit::Jit(Function fn) : fn_(std::move(fn)) {
  if (!fn_) throw JitError("Jit: the function is empty; expected a callable");
}
Jit::Jit(PlainFunction fn)
    : Jit(fn ? Function([f = std::move(fn)](std::span<const Tensor> in, const VarVals&) { return f(in); }) : Function()) {}
Jit::~Jit() = default;

void Jit::reset() {
  captured_.reset();
  calls_ = 0;
}

Jit::Stats Jit::stats() const {
  Stats s = captured_ ? captured_->stats : Stats{};
  s.calls = calls_;
  return s;
}

std::vector<Tensor> Jit::capture(std::span<const Tensor> inputs, const VarVals& vars) {
  std::vector<UOp> in_bufs = input_buffers(inputs);
  frontend::JitCapture cap;
  std::vector<Tensor> ret;
  {
    CaptureScope scope(&cap);
    ret = fn_(inputs, vars);
    Tensor::realize(ret);  // unrealized outputs are realized, and captured (tinygrad: test_unrealized_return_auto_realized)
  }
  if (cap.linears.empty())
    throw JitError("Jit: the function computed nothing (no kernel ran during capture); expected it to return computed tensors");

  auto c = std::make_unique<Captured>();
  c->inputs = input_infos(inputs);
  c->last_inputs = in_bufs;
  std::unordered_map<const UOpNode*, size_t> input_of;
  for (size_t i = 0; i < in_bufs.size(); i++) input_of[in_bufs[i].get()] = i;
  for (size_t j = 0; j < ret.size(); j++) {
    const UOp u = ret[j].uop();
    if (frontend::virtual_const_value(u)) continue;  // a constant is the same every call
    UOp b = plain_buffer(u);
    if (!b) throw JitError("Jit: output " + std::to_string(j) + " is a view of a buffer after realize; expected whole buffers: return .contiguous()");
    if (auto it = input_of.find(b.get()); it != input_of.end())
      throw JitError("Jit: output " + std::to_string(j) + " is " + input_name(it->second) + " (the same buffer); expected outputs "
                     "distinct from inputs: a replay would write the caller's tensor in place. Return (x + 0) or assign into "
                     "a tensor that is not an input");
    c->output_buffers.insert(b.get());
  }
  c->outputs = ret;

  // The captured calls, every kernel compiled for its device, each realize's own memory plan undone (its arena views
  // become buffers again) so that one plan covers them all.
  std::vector<UOp> calls;
  std::unordered_map<const UOpNode*, UOp> unplanned;
  for (const UOp& linear : cap.linears)
    for (const UOp& call : linear.src()) {
      std::vector<UOp> src = call.src();
      for (size_t i = 1; i < src.size(); i++) {
        if (!is_view(src[i])) continue;
        auto [it, fresh] = unplanned.emplace(src[i].get(), UOp());
        if (fresh) it->second = new_buffer(src[i].dtype(), src[i].arg_as<int64_t>(), buffer_device_name(src[i]));
        src[i] = it->second;
      }
      calls.push_back(call.replace_src(std::move(src)));
    }
  std::vector<UOp> programs(calls.size());
  std::vector<Device*> call_devices(calls.size(), nullptr);
  // A buffer may share an arena only when nothing outside the captured program can see it and its first use writes it
  // without reading it (its earlier contents never matter).
  std::unordered_set<const UOpNode*> outside;
  for (const std::shared_ptr<Tensor::State>& s : frontend::live_states())
    if (UOp u = s->get()) collect_storage(u, outside);
  std::unordered_set<const UOpNode*> seen, held;
  for (size_t k = 0; k < calls.size(); k++) {
    const UOp& call = calls[k];
    std::unordered_set<size_t> writes, reads;
    if (call.src(0).op() == Ops::SINK || call.src(0).op() == Ops::PROGRAM) {
      call_devices[k] = &call_device(call);
      programs[k] = compile_call(call, *call_devices[k]);
      const ProgramInfo& info = program_info(programs[k]);
      for (int64_t s : info.outs) writes.insert(static_cast<size_t>(s) + 1);
      for (int64_t s : info.ins) reads.insert(static_cast<size_t>(s) + 1);
    } else if (call.src(0).op() == Ops::COPY) {
      writes.insert(1);
      reads.insert(2);
    }
    for (size_t i = 1; i < call.src().size(); i++) {
      const UOp& b = call.src(i);
      if (b.op() != Ops::BUFFER || !seen.insert(b.get()).second) continue;
      if (!is_root_buffer(b) || outside.count(b.get()) || !writes.count(i) || reads.count(i)) held.insert(b.get());
    }
  }
  MemoryPlanStats plan;
  c->linear = memory_plan(UOp::make(Ops::LINEAR, dtypes::void_, std::move(calls)), held, &plan);
  verify_memory_plan(c->linear);
  for (auto& [dev, bytes] : plan.peak_bytes) c->stats.arena_bytes += bytes;
  for (auto& [dev, bytes] : plan.unplanned_bytes) c->stats.unplanned_bytes += bytes;
  c->programs = programs;

  // Tensors read by value: a live tensor (not an input or output) holding a buffer the program uses.
  std::unordered_set<const UOpNode*> used;
  for (const UOp& call : c->linear.src())
    for (size_t i = 1; i < call.src().size(); i++) used.insert(call.src(i).get());
  for (const std::shared_ptr<Tensor::State>& s : frontend::live_states()) {
    UOp u = s->get();
    UOp b = u ? plain_buffer(u) : UOp();
    if (b && used.count(b.get()) && !input_of.count(b.get()) && !c->output_buffers.count(b.get())) c->by_value.emplace_back(s, u);
  }

  // The queues: consecutive calls on one device (and channel) share one; each ends by signalling its own signal.
  c->input_patches.resize(in_bufs.size());
  auto input_index = [&](const UOp& b) -> int {
    auto it = input_of.find(b.get());
    return it == input_of.end() ? -1 : static_cast<int>(it->second);
  };
  // A new queue waits on the device for the queue before it when it can (shared_signal_owner), so that a replay
  // submits every queue back to back; the `done` signal of the queue before is made here, where its waiter is known.
  const bool traced = trace::recording();
  auto segment_for = [&](Device& d, bool copies) -> JitSegment& {
    if (!c->segments.empty() && !c->segments.back().host_copy && c->segments.back().device == &d && c->segments.back().copies == copies)
      return c->segments.back();
    const bool after_queue = !c->segments.empty() && !c->segments.back().host_copy;
    c->segments.emplace_back();
    JitSegment& seg = c->segments.back();
    JitSegment* before = after_queue ? &c->segments[c->segments.size() - 2] : nullptr;
    seg.device = &d;
    seg.copies = copies;
    if (before != nullptr) {
      Device* owner = shared_signal_owner(*before->device, d);
      before->done = &(owner != nullptr ? *owner : *before->device).new_signal("jit");
      if (owner != nullptr) {
        seg.waits = true;
        seg.wait_command = seg.queue.size();
        seg.queue.wait(*before->done, 0);
        c->stats.queue_waits++;
        if (traced) {
          seg.wait_passed = &d.new_signal("jit wait passed");
          seg.queue.timestamp(*seg.wait_passed);
        }
      } else {
        seg.host_waits = true;
      }
    }
    return seg;
  };
  for (size_t k = 0; k < c->linear.src().size(); k++) {
    const UOp& call = c->linear.src(k);
    if (programs[k]) {
      Device& d = *call_devices[k];
      const ProgramInfo& info = program_info(programs[k]);
      const LoadedProgram& loaded = d.program(programs[k]);
      JitSegment& seg = segment_for(d, false);
      const size_t segment = static_cast<size_t>(&seg - c->segments.data());
      if (traced) {
        c->timed.push_back({segment, info.name,
                            {trace::arg("launch", info.launch_string()), trace::arg("grid", dims(info.global_size)),
                             trace::arg("block", dims(info.local_size)), trace::arg("ops", info.ops), trace::arg("bytes", info.bytes)},
                            false, &d.new_signal("jit timestamp"), &d.new_signal("jit timestamp")});
        seg.queue.timestamp(*c->timed.back().start);
      }
      const size_t command = seg.queue.size();
      std::vector<uint64_t> addresses;
      for (int64_t s = 0; s < info.buffers; s++) {
        const UOp& b = call.src(static_cast<size_t>(s) + 1);
        addresses.push_back(address_on(b, d));
        if (int in = input_index(b); in >= 0) c->input_patches[in].push_back({segment, command, static_cast<size_t>(s), addresses.back()});
      }
      std::vector<int64_t> values;
      for (size_t v = 0; v < info.vars.size(); v++) {
        const KernelVariable& var = info.vars[v];
        std::optional<int64_t> value;
        for (size_t i = static_cast<size_t>(info.buffers) + 1; !value && i < call.src().size(); i++)
          if (call.src(i).is_bound_variable() && call.src(i).src(0).arg_as<ParamArg>().name == var.name)
            value = std::get<int64_t>(call.src(i).src(1).src(1).const_value());
        if (auto it = vars.find(var.name); it != vars.end()) value = it->second;
        if (!value) throw JitError("Jit: kernel " + info.name + " takes variable '" + var.name + "', which has no value; bind it or pass it in VarVals");
        values.push_back(*value);
        c->var_patches.push_back({var, {segment, command, v, static_cast<uint64_t>(*value)}});
        c->var_names.insert(var.name);
      }
      seg.queue.exec(loaded, addresses, values, dims(info.global_size), dims(info.local_size));
      if (traced) seg.queue.timestamp(*c->timed.back().end);
      c->stats.kernels++;
      continue;
    }
    if (call.src(0).op() != Ops::COPY || call.src().size() != 3)
      throw JitError("Jit: cannot capture " + print_node(call) + "; expected kernel or copy calls");
    const UOp &dst = call.src(1), &src = call.src(2);
    Device& to = device(buffer_device_name(dst));
    Device& from = device(buffer_device_name(src));
    // A copy between two devices runs on a host device's queue when one side is one (its copy command is a memmove
    // of host pointers, and a GPU buffer's bytes are mapped for the host, host_buffers.h): the source's, which has
    // just written it, else the destination's. Between two GPUs it goes through the host, as run_linear's copy_across.
    Device* runs = &to == &from ? &to : from.host_memory() ? &from : to.host_memory() ? &to : nullptr;
    if (runs == nullptr) {
      JitSegment seg;
      seg.host_copy = true;
      seg.dst = dst, seg.src = src;
      seg.dst_input = input_index(dst), seg.src_input = input_index(src);
      c->segments.push_back(std::move(seg));
      continue;
    }
    JitSegment& seg = segment_for(*runs, runs->separate_copy_queue());
    const size_t segment = static_cast<size_t>(&seg - c->segments.data());
    if (traced) {
      c->timed.push_back({segment, "copy " + from.name() + " -> " + to.name(), {trace::arg("bytes", static_cast<int64_t>(buffer_size(src)))},
                          true, &runs->new_signal("jit timestamp"), &runs->new_signal("jit timestamp")});
      seg.queue.timestamp(*c->timed.back().start);
    }
    const uint64_t to_address = address_on(dst, *runs), from_address = address_on(src, *runs);
    if (int in = input_index(dst); in >= 0) c->input_patches[in].push_back({segment, seg.queue.size(), 0, to_address, true});
    if (int in = input_index(src); in >= 0) c->input_patches[in].push_back({segment, seg.queue.size(), 1, from_address, true});
    seg.queue.copy(reinterpret_cast<void*>(to_address), reinterpret_cast<const void*>(from_address), buffer_size(src));
    if (traced) seg.queue.timestamp(*c->timed.back().end);
    // A host device writing a GPU's mapped memory: the fence orders those writes before the signal the GPU waits on
    // (a write-combined mapping is drained only by a full fence).
    if (&to != runs && !to.host_memory()) seg.queue.memory_barrier();
  }
  for (JitSegment& seg : c->segments) {
    if (seg.host_copy) continue;
    if (seg.done == nullptr) seg.done = &seg.device->new_signal("jit");
    seg.signal_command = seg.queue.size();
    seg.queue.signal(*seg.done, 0);
    seg.queue.bind(*seg.device);
    c->stats.queues++;
    c->stats.patch_points += seg.waits ? 2 : 1;
  }
  for (const auto& p : c->input_patches) c->stats.patch_points += p.size();
  c->stats.patch_points += c->var_patches.size();
  if (debug_level() >= 1)
    std::fprintf(stderr, "Jit: captured %zu linears, %zu kernels in %zu queues, %zu inputs, arena %lld bytes\n", cap.linears.size(),
                 c->stats.kernels, c->stats.queues, inputs.size(), static_cast<long long>(c->stats.arena_bytes));
  captured_ = std::move(c);
  return ret;
}

std::vector<Tensor> Jit::operator()(std::span<const Tensor> inputs, const VarVals& vars) {
  if (frontend::active_jit_capture() != nullptr)
    throw JitError("Jit: called while another Jit captures on this thread; expected Jits not to nest (call the inner function directly)");
  if (calls_ == 0) {  // call 1 runs the function as written (tinygrad: the first call is not captured)
    input_buffers(inputs);
    std::vector<Tensor> ret = fn_(inputs, vars);
    Tensor::realize(ret);
    calls_++;
    return ret;
  }
  if (!captured_) {
    std::vector<Tensor> ret = capture(inputs, vars);
    calls_++;
    return ret;
  }
  Captured& c = *captured_;
  if (inputs.size() != c.inputs.size())
    throw JitError("Jit: called with " + std::to_string(inputs.size()) + " inputs; the capture took " + std::to_string(c.inputs.size()));
  std::vector<UOp> bufs = input_buffers(inputs);
  for (size_t i = 0; i < inputs.size(); i++) {
    const InputInfo& want = c.inputs[i];
    // The device from the buffer's DEVICE node: Tensor::device() walks the graph, and a replay is a few microseconds.
    const std::string& dev = buffer_device_name(bufs[i]);
    if (inputs[i].shape() != want.shape || inputs[i].dtype() != want.dtype || dev != want.device)
      throw JitError("Jit: " + input_name(i) + " is " + inputs[i].dtype().name() + " " + frontend::shape_str(inputs[i].shape()) + " on " +
                     dev + "; the capture took " + want.dtype.name() + " " + frontend::shape_str(want.shape) + " on " + want.device +
                     " (a new shape, dtype or device needs a new Jit)");
  }
  for (size_t i = 0; i < bufs.size(); i++)
    if (c.output_buffers.count(bufs[i].get()))
      throw JitError("Jit: " + input_name(i) + " is an output of this Jit, whose buffer the replay overwrites while reading it; expected a "
                     "distinct tensor: pass (y + 0).realize()");
  for (const auto& [state, held] : c.by_value)
    if (std::shared_ptr<Tensor::State> s = state.lock(); s && !(s->get() == held))
      throw JitError("Jit: a tensor the function read without taking it as an input (captured by value) holds another value than at "
                     "capture (a pending assign or a new buffer); expected it realized in place before the call, or passed as an input");
  for (const auto& [name, value] : vars)
    if (!c.var_names.count(name)) throw JitError("Jit: variable '" + name + "' is not taken by any captured kernel");

  const bool tracing = trace::recording();
  const int64_t replay_start = tracing ? monotonic_ns() : 0;
  size_t patches = 0, words = 0;
  c.last_inputs.resize(bufs.size());
  for (size_t i = 0; i < bufs.size(); i++) {
    if (bufs[i] == c.last_inputs[i]) continue;  // the same buffer as last time: every address it patched still holds
    c.last_inputs[i] = bufs[i];
    for (JitPatch& p : c.input_patches[i]) {
      JitSegment& seg = c.segments[p.segment];
      const uint64_t a = address_on(bufs[i], *seg.device);
      if (a == p.current) continue;
      void* address = reinterpret_cast<void*>(static_cast<uintptr_t>(a));
      if (!p.copy) {
        words += seg.queue.patch_buffer(p.command, p.slot, address);
      } else {
        const Command& copy = seg.queue.commands()[p.command];
        words += seg.queue.patch_copy(p.command, p.slot == 0 ? address : copy.dst, p.slot == 1 ? address : copy.src);
      }
      p.current = a;
      patches++;
    }
  }
  for (Captured::VarPatch& v : c.var_patches) {
    auto it = vars.find(v.var.name);
    if (it == vars.end())
      throw JitError("Jit: the capture's kernels take variable '" + v.var.name + "'; expected its value in every call's VarVals");
    if (it->second < v.var.vmin || it->second > v.var.vmax)
      throw JitError("Jit: variable '" + v.var.name + "' = " + std::to_string(it->second) + " is outside its bounds [" +
                     std::to_string(v.var.vmin) + ", " + std::to_string(v.var.vmax) + "]");
    if (static_cast<uint64_t>(it->second) == v.at.current) continue;
    words += c.segments[v.at.segment].queue.patch_scalar(v.at.command, v.at.slot, it->second);
    v.at.current = static_cast<uint64_t>(it->second);
    patches++;
  }
  // The queues back to back, each waiting on the device for the one before (JitSegment::waits); the host waits only
  // before a step of its own (a copy between two GPUs), before a queue whose device cannot wait for the one before,
  // and at the end. Every queue ran once the last finished: each started after the one before it had.
  JitSegment* unwaited = nullptr;  // the last queue submitted that the host has not waited for
  size_t host_waits = 0;
  std::vector<JitHostWait> traced_waits;  // only while tracing
  auto host_wait = [&]() {
    if (unwaited == nullptr) return;
    const int64_t start = tracing ? monotonic_ns() : 0;
    unwaited->done->wait(unwaited->value);
    if (tracing) traced_waits.push_back({static_cast<size_t>(unwaited - c.segments.data()), start, monotonic_ns()});
    unwaited = nullptr;
    host_waits++;
  };
  for (size_t i = 0; i < c.segments.size(); i++) {
    JitSegment& seg = c.segments[i];
    if (seg.host_copy) {
      host_wait();
      const UOp& dst = seg.dst_input >= 0 ? bufs[static_cast<size_t>(seg.dst_input)] : seg.dst;
      const UOp& src = seg.src_input >= 0 ? bufs[static_cast<size_t>(seg.src_input)] : seg.src;
      std::vector<std::byte> through(buffer_size(src));
      read_buffer(src, through);
      write_buffer(dst, through);
      continue;
    }
    words += seg.queue.patch_value(seg.signal_command, ++seg.value);
    patches++;
    if (seg.waits) {
      words += seg.queue.patch_value(seg.wait_command, c.segments[i - 1].value);
      patches++;
    }
    if (seg.host_waits) host_wait();
    seg.queue.submit(*seg.device);
    unwaited = &seg;
  }
  host_wait();
  c.stats.host_waits = host_waits;
  c.stats.last_words = words;
  if (tracing) trace_replay(c.segments, c.timed, c.stats, replay_start, words, host_waits, traced_waits);
  c.stats.last_patches = patches;
  calls_++;
  return c.outputs;
}

}  // namespace doorbell
