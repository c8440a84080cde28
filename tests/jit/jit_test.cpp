// Jit (frontend/jit.h): every replay gives what a fresh realize of the same function on the same inputs gives (the
// fusion corpus's programs, random inputs, new input buffers each call); the misuses tinygrad's JIT footgun list
// names are errors; a replay rewrites only the patch points whose values changed; the captured calls share one
// memory plan. Runs on DEV's device: the CPU by default, the emulated NV GPU under the nv. prefix.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "../scheduler/fusion_corpus_cases.h"
#include "frontend/jit.h"
#include "frontend/lazy_uops.h"
#include "hcq/host_buffers.h"
#include "hcq/trace.h"
#include "tests/hcq/trace_file.h"
#include "ir/graph_rewrite.h"

namespace doorbell {
namespace {

using fusion_corpus::Case;

std::vector<double> values(const Tensor& t) { return t.tolist<double>(); }

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); k++) EXPECT_NEAR(got[k], want[k], 1e-4 * (1 + std::abs(want[k]))) << what << " element " << k;
}

// A corpus program as a function of its data: the storage leaves of the outputs it builds become the inputs.
struct CorpusFunction {
  std::vector<UOp> outputs, leaves;
  std::vector<Tensor> operator()(std::span<const Tensor> in) const {
    std::unordered_map<const UOpNode*, UOp> to;
    for (size_t i = 0; i < leaves.size(); i++) to[leaves[i].get()] = in[i].uop();
    std::vector<Tensor> out;
    for (const UOp& o : outputs) out.emplace_back(substitute(o, to));
    return out;
  }
};

CorpusFunction corpus_function(const Case& c) {
  CorpusFunction f;
  for (const Tensor& t : c.build()) f.outputs.push_back(t.uop());
  for (const UOp& u : UOp::sink(f.outputs).toposort())
    if (u.op() == Ops::BUFFER && u.src().size() > 1 && u.src(1).op() == Ops::DEVICE) f.leaves.push_back(u);
  return f;
}

// Fresh random data for each leaf: a new buffer each call, so a replay must patch every input's address.
std::vector<Tensor> random_inputs(const CorpusFunction& f) {
  std::vector<Tensor> in;
  for (const UOp& leaf : f.leaves) in.push_back(Tensor::randn({leaf.arg_as<int64_t>()}).cast(leaf.dtype()).contiguous().realize());
  return in;
}

class JitCorpus : public ::testing::TestWithParam<Case> {};

TEST_P(JitCorpus, EveryReplayEqualsAFreshRealizeOnNewRandomInputs) {
  Tensor::manual_seed(99);
  const CorpusFunction f = corpus_function(GetParam());
  bool assigns_input = false;
  for (const UOp& o : f.outputs) assigns_input |= o.op() == Ops::AFTER;
  Jit jit{Jit::PlainFunction(f)};
  for (int call = 0; call < 5; call++) {
    std::vector<Tensor> in = random_inputs(f);
    std::vector<std::vector<double>> want;
    if (assigns_input) {  // the program writes its input in place and returns it: an input that is an output
      if (call == 0) {
        jit(in);
        continue;
      }
      EXPECT_THROW(jit(in), JitError);
      return;
    }
    for (const Tensor& t : f(in)) want.push_back(values(t));
    std::vector<Tensor> got = jit(in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); j++) expect_close(values(got[j]), want[j], "call " + std::to_string(call) + " output " + std::to_string(j));
  }
  EXPECT_EQ(jit.stats().calls, 5u);
  EXPECT_GE(jit.stats().kernels, 1u);
}

INSTANTIATE_TEST_SUITE_P(Corpus, JitCorpus, ::testing::ValuesIn(fusion_corpus::corpus()),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

Tensor floats(std::vector<float> v) { return Tensor(v).realize(); }

// ---- patch counts ---------------------------------------------------------------------------------------------

TEST(JitPatches, AReplayRewritesOnlyTheAddressesThatChangedAndTheCompletionSignal) {
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
  Tensor a = floats({1, 2, 3}), b = floats({10, 20, 30});
  jit({a});
  jit({a});  // capture
  EXPECT_EQ(jit.stats().queues, 1u);
  EXPECT_EQ(jit.stats().kernels, 1u);
  EXPECT_EQ(jit.stats().patch_points, 2u);  // the input's address, the signal
  EXPECT_EQ(jit({a})[0].tolist<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(jit.stats().last_patches, 1u) << "same input: only the signal's value";
  EXPECT_EQ(jit({b})[0].tolist<float>(), (std::vector<float>{11, 21, 31}));
  EXPECT_EQ(jit.stats().last_patches, 2u) << "new input: its address and the signal";
  jit({b});
  EXPECT_EQ(jit.stats().last_patches, 1u);
}

TEST(JitPatches, AnInputReadByTwoKernelsIsPatchedInBoth) {
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{(in[0] + 1).contiguous() * in[0]}; });
  Tensor a = floats({1, 2, 3}), b = floats({2, 3, 4});
  jit({a});
  jit({a});
  EXPECT_EQ(jit.stats().kernels, 2u);
  EXPECT_EQ(jit.stats().patch_points, 3u);
  EXPECT_EQ(jit({b})[0].tolist<float>(), (std::vector<float>{6, 12, 20}));
  EXPECT_EQ(jit.stats().last_patches, 3u);
}

TEST(JitPatches, AVariableIsPatchedOnlyWhenItsValueChanges) {
  Jit jit([](std::span<const Tensor> in, const VarVals& vars) {
    UOp n = UOp::variable("n", 0, 4).bind(vars.at("n"));
    return std::vector<Tensor>{(in[0] + Tensor(n).cast(dtypes::float32)).contiguous()};
  });
  Tensor a = floats({1, 2, 3});
  jit({a}, {{"n", 1}});
  jit({a}, {{"n", 2}});
  EXPECT_EQ(jit({a}, {{"n", 2}})[0].tolist<float>(), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(jit.stats().last_patches, 1u);
  EXPECT_EQ(jit({a}, {{"n", 4}})[0].tolist<float>(), (std::vector<float>{5, 6, 7}));
  EXPECT_EQ(jit.stats().last_patches, 2u);
  EXPECT_THROW(jit({a}, {}), JitError);
  EXPECT_THROW(jit({a}, {{"n", 5}}), JitError);
}

// Kernels on two devices with a copy between them: one queue per device, the copy on the host device's queue.
TEST(JitDevices, AProgramOverTwoDevicesReplaysWithOneQueueEach) {
  Jit jit([](std::span<const Tensor> in) {
    const std::string other = in[0].device() == "REF" ? "CPU" : "REF";
    return std::vector<Tensor>{((in[0] + 1).contiguous().to(other) * 2).contiguous()};
  });
  jit({floats({1, 2, 3})});
  jit({floats({1, 2, 3})});
  EXPECT_EQ(jit.stats().kernels, 2u);
  EXPECT_EQ(jit.stats().queues, 2u);
  EXPECT_EQ(jit({floats({0, 5, 10})})[0].tolist<float>(), (std::vector<float>{2, 12, 22}));
  EXPECT_EQ(jit({floats({-1, 1, 3})})[0].tolist<float>(), (std::vector<float>{0, 4, 8}));
}

// The device beside DEV's that the two-device tests use: REF, a host device, or the CPU when DEV is REF.
std::string other_device(const Tensor& t) { return t.device() == "REF" ? "CPU" : "REF"; }

// Whether the tests run on the emulated NV GPU, whose bound queues count 32-bit words.
bool on_nv(const Tensor& t) { return t.device().rfind("NV", 0) == 0; }

// dev -> other -> dev: three queues, each depending on the one before. On the CPU: [CPU: +1, copy to REF] [REF: wait,
// *2, copy to CPU] [CPU: wait, +3]. Under nv.: [NV: +1] [REF: wait for NV's signal, copy from NV's mapped memory, *2,
// copy into it] [NV: wait for an NV signal that REF's queue wrote, +3]. No queue needs the host between them.
Jit three_queues() {
  return Jit([](std::span<const Tensor> in) {
    const std::string here = in[0].device(), other = other_device(in[0]);
    return std::vector<Tensor>{(((in[0] + 1).contiguous().to(other) * 2).contiguous().to(here) + 3).contiguous()};
  });
}

TEST(JitDependencies, QueuesThatDependOnEachOtherWaitOnTheDeviceAndTheHostWaitsOnceAtTheEnd) {
  Jit jit = three_queues();
  jit({floats({1, 2, 3})});
  jit({floats({1, 2, 3})});
  EXPECT_EQ(jit.stats().kernels, 3u);
  EXPECT_EQ(jit.stats().queues, 3u);
  EXPECT_EQ(jit.stats().queue_waits, 2u) << "the second and third queue each wait for the one before";
  for (float x : {0.f, 5.f, -7.f, 100.f}) {
    Tensor in = floats({x, x + 1, x + 2});
    EXPECT_EQ(jit({in})[0].tolist<float>(), (std::vector<float>{(x + 1) * 2 + 3, (x + 2) * 2 + 3, (x + 3) * 2 + 3}));
    EXPECT_EQ(jit.stats().host_waits, 1u) << "the host waits only for the last queue, not between queues";
  }
}

TEST(JitDependencies, AReplayRightAfterAnotherWaitsForItsQueuesBeforePatchingThem) {
  // Back-to-back replays with new inputs: each patches queues the previous replay ran, and every result is its own.
  Jit jit = three_queues();
  jit({floats({1, 2, 3})});
  jit({floats({1, 2, 3})});
  std::vector<Tensor> keep;
  for (int i = 0; i < 20; i++) keep.push_back((jit({floats({float(i), 0, 1})})[0] + 0).realize());
  for (int i = 0; i < 20; i++) EXPECT_EQ(keep[i].tolist<float>(), (std::vector<float>{(i + 1) * 2.f + 3, 5, 7})) << "replay " << i;
}

// Inputs that are copied: one from DEV's device to the other, one from the other back. Each copy runs on the host
// device's queue (CPU or REF; under nv. REF's, reading or writing NV's mapped memory), its input's address patched.
TEST(JitCopies, CopiesOfInputsArePatchedLikeKernelBuffers) {
  auto f = [](std::span<const Tensor> in) {
    const std::string here = in[0].device();
    return std::vector<Tensor>{(in[0].to(other_device(in[0])) * 2).contiguous().to(here) + in[1].to(here)};
  };
  Jit jit{Jit::PlainFunction(f)};
  auto inputs = [](float x) {
    Tensor a = floats({x, x + 1, x + 2});
    return std::vector<Tensor>{a, floats({10 * x, 1, 2}).to(other_device(a)).realize()};
  };
  for (int call = 0; call < 5; call++) {
    std::vector<Tensor> in = inputs(static_cast<float>(call));
    const std::vector<float> want = f(in)[0].tolist<float>();
    EXPECT_EQ(jit(in)[0].tolist<float>(), want) << "call " << call;
    if (call >= 2) {
      EXPECT_EQ(jit.stats().host_waits, 1u);
    }
  }
  // Patch points: input 0's address in its copy and input 1's in its copy, each queue's signal and each later queue's
  // wait.
  EXPECT_EQ(jit.stats().patch_points, 2 + jit.stats().queues + jit.stats().queue_waits);
}

// Two GPUs share no signal (neither maps the other's memory): a queue on NV:1 after one on NV starts once the host saw
// NV's signal, and a copy between them goes through the host after NV's queue finished. Under nv. only (two emulated
// GPUs); elsewhere there is no second GPU.
TEST(JitDependencies, BetweenTwoGpusTheHostWaits) {
  if (!on_nv(floats({0}))) GTEST_SKIP() << "needs two NV devices (the nv. variant)";
  Tensor a = floats({1, 2, 3}), b = floats({4, 5, 6}).to("NV:1").realize();
  Jit independent([](std::span<const Tensor> in) { return std::vector<Tensor>{(in[0] + 1).contiguous(), (in[1] * 2).contiguous()}; });
  independent({a, b});
  independent({a, b});
  EXPECT_EQ(independent.stats().queues, 2u);
  EXPECT_EQ(independent.stats().queue_waits, 0u);
  std::vector<Tensor> got = independent({a, b});
  EXPECT_EQ(got[0].tolist<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(got[1].tolist<float>(), (std::vector<float>{8, 10, 12}));
  EXPECT_EQ(independent.stats().host_waits, 2u) << "before NV:1's queue and at the end";

  Jit across([](std::span<const Tensor> in) { return std::vector<Tensor>{((in[0] + 1).contiguous().to("NV:1") * 2).contiguous()}; });
  across({a});
  across({a});
  EXPECT_EQ(across({floats({0, 5, 10})})[0].tolist<float>(), (std::vector<float>{2, 12, 22}));
  EXPECT_EQ(across.stats().host_waits, 2u) << "before the host's copy and at the end";
}

// ---- patched words ------------------------------------------------------------------------------------------------

// The words a bound queue rewrites when a 64-bit slot goes from `a` to `b`: one 64-bit slot on a host device; on NV
// the 32-bit halves that differ (NvBoundQueue::store64).
size_t words_between(bool nv, uint64_t a, uint64_t b) {
  if (!nv) return a != b;
  return size_t{static_cast<uint32_t>(a) != static_cast<uint32_t>(b)} + size_t{(a >> 32) != (b >> 32)};
}

uint64_t address_of(const Tensor& t) { return buffer_device_address(frontend::plain_buffer(t.uop())); }

TEST(JitWords, AReplayRewritesOnlyTheWordsWhoseValuesChanged) {
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
  Tensor a = floats({1, 2, 3}), b = floats({10, 20, 30});
  const bool nv = on_nv(a);
  jit({a});
  jit({a});
  jit({a});
  // The completion signal's value goes 1 -> 2: one word (on NV its low half; the high half stays 0).
  jit({a});
  EXPECT_EQ(jit.stats().last_words, 1u);
  // A new input: its address (CPU: one 64-bit slot; NV: the halves of the parameter in constant bank 0 that differ,
  // one when both buffers lie in the same 4 GiB) and the signal's word.
  EXPECT_EQ(jit({b})[0].tolist<float>(), (std::vector<float>{11, 21, 31}));
  EXPECT_EQ(jit.stats().last_words, words_between(nv, address_of(a), address_of(b)) + 1);
  EXPECT_EQ(jit.stats().last_words, 2u) << "the test's buffers lie in the same 4 GiB, so one address word changed";
}

TEST(JitWords, AVariableRewritesItsWordOnlyWhenItChanges) {
  Jit jit([](std::span<const Tensor> in, const VarVals& vars) {
    UOp n = UOp::variable("n", 0, 1000).bind(vars.at("n"));
    return std::vector<Tensor>{(in[0] + Tensor(n).cast(dtypes::float32)).contiguous()};
  });
  Tensor a = floats({1, 2, 3});
  jit({a}, {{"n", 1}});
  jit({a}, {{"n", 2}});
  jit({a}, {{"n", 2}});
  EXPECT_EQ(jit.stats().last_words, 1u) << "n unchanged: the signal's word only";
  EXPECT_EQ(jit({a}, {{"n", 7}})[0].tolist<float>(), (std::vector<float>{8, 9, 10}));
  // 2 -> 7: the variable's slot (NV: its low half; the high half of a small positive value is 0 before and after),
  // and the signal's word.
  EXPECT_EQ(jit.stats().last_words, 2u);
}

TEST(JitWords, ThreeDependentQueuesRewriteThreeSignalsAndTwoWaits) {
  Jit jit = three_queues();
  Tensor a = floats({1, 2, 3});
  jit({a});
  jit({a});
  jit({a});
  jit({a});
  // Same input: each queue's completion signal (3) and the wait of the second and third on the queue before (2), each
  // value one more than the last replay's and below 2^32: one word each on a host device and on NV (the low half).
  EXPECT_EQ(jit.stats().last_words, 5u);
  EXPECT_EQ(jit.stats().last_patches, 5u);
}

// ---- trace ---------------------------------------------------------------------------------------------------------

// A Jit captured while tracing: each replay is a host span "jit replay" with its kernels and patched words, its kernels
// are slices on their queues' tracks from the timestamps the bound queues wrote, and each queue's wait for the one
// before is a flow from the signal on one device's track to the wait on the other's.
TEST(JitTrace, AReplayIsAHostSpanWithKernelSlicesAndQueueToQueueFlows) {
  DOORBELL_SKIP_UNDER_PROFILE();
  const std::string path = ::testing::TempDir() + "doorbell_trace_jit.json";
  trace::start();
  Jit jit = three_queues();
  Tensor a = floats({1, 2, 3});
  jit({a});
  jit({a});
  const std::string here = a.device(), other = other_device(a);
  EXPECT_EQ(jit({a})[0].tolist<float>(), (std::vector<float>{7, 9, 11}));
  EXPECT_EQ(jit({a})[0].tolist<float>(), (std::vector<float>{7, 9, 11}));
  trace::stop(path);
  const testing::TraceFile t = testing::TraceFile::load(path);
  std::vector<const testing::TraceEvent*> replays;
  for (const testing::TraceEvent* e : t.find("X", "run", "host"))
    if (e->name == "jit replay") replays.push_back(e);
  ASSERT_EQ(replays.size(), 2u);
  for (const testing::TraceEvent* r : replays) {
    EXPECT_EQ(r->json->at("args").at("kernels").number, 3);
    EXPECT_EQ(r->json->at("args").at("patched words").number, 5) << "3 signals and 2 waits (JitWords)";
    // The kernels it ran, on both devices' compute tracks, within the replay's span (device times on the host clock).
    int kernels = 0;
    for (const std::string& dev : {here, other})
      for (const testing::TraceEvent* k : t.find("X", "kernel", dev, "compute"))
        kernels += r->ts <= k->ts && k->ts + k->dur <= r->ts + r->dur + 1e-3;
    EXPECT_EQ(kernels, 3);
  }
  // Queue -> queue flows: here -> other and other -> here in each replay, each ending in a wait slice.
  int flows = 0;
  for (const testing::TraceEvent* s : t.find("s", "flow")) {
    for (const testing::TraceEvent* f : t.find("f", "flow")) {
      if (f->id != s->id || f->process == "host") continue;
      flows++;
      EXPECT_NE(f->process + f->thread, s->process + s->thread);
      bool in_wait = false;
      for (const testing::TraceEvent* w : t.find("X", "wait", f->process, f->thread)) in_wait |= w->ts <= f->ts && f->ts <= w->ts + w->dur;
      EXPECT_TRUE(in_wait) << "flow " << f->id << " ends in no wait slice";
    }
  }
  EXPECT_EQ(flows, 4);
  testing::expect_queue_tracks_in_order(t);
  std::remove(path.c_str());
}

// Captured while tracing was off: the bound queues stamp nothing, and a traced replay is the host span alone.
TEST(JitTrace, AJitCapturedUntracedRecordsNoKernelSlices) {
  DOORBELL_SKIP_UNDER_PROFILE();
  const std::string path = ::testing::TempDir() + "doorbell_trace_jit_untraced.json";
  Jit jit = three_queues();
  Tensor a = floats({1, 2, 3});
  jit({a});
  jit({a});
  trace::start();
  jit({a});
  trace::stop(path);
  const testing::TraceFile t = testing::TraceFile::load(path);
  ASSERT_EQ(t.find("X", "run", "host").size(), 1u);
  EXPECT_EQ(t.find("X", "run", "host")[0]->name, "jit replay");
  EXPECT_TRUE(t.find("X", "kernel").empty());
  std::remove(path.c_str());
}

// ---- memory plan ----------------------------------------------------------------------------------------------

TEST(JitMemoryPlan, IntermediatesOfSeparateRealizesArePlannedTogether) {
  Jit jit([](std::span<const Tensor> in) {
    Tensor a = (in[0] + 1).contiguous().realize();
    Tensor b = (a * 2).contiguous().realize();
    Tensor c = (b + 3).contiguous().realize();
    return std::vector<Tensor>{c * a};
  });
  Tensor x = Tensor::randn({64}).realize(), y = Tensor::randn({64}).realize();
  jit({x});
  jit({x});
  // Three realizes, each with its own buffer: all three are the one plan's (a lives from call 0 to 3, b from 1 to 2,
  // c from 2 to 3, so no two share, and the arena holds three 256-byte slots).
  EXPECT_EQ(jit.stats().kernels, 4u);
  EXPECT_EQ(jit.stats().unplanned_bytes, 3 * 256);
  EXPECT_EQ(jit.stats().arena_bytes, 3 * 256);
  std::vector<float> xs = y.tolist<float>();
  std::vector<float> got = jit({y})[0].tolist<float>();
  for (size_t i = 0; i < xs.size(); i++) EXPECT_FLOAT_EQ(got[i], ((xs[i] + 1) * 2 + 3) * (xs[i] + 1));
}

TEST(JitMemoryPlan, AChainOfRealizesNeedsTwoSlots) {
  Jit jit([](std::span<const Tensor> in) {
    Tensor t = in[0];
    for (int i = 0; i < 6; i++) t = (t + 1).contiguous().realize();
    return std::vector<Tensor>{t * 2};
  });
  Tensor x = floats({1, 2, 3});
  jit({x});
  jit({x});
  EXPECT_EQ(jit.stats().unplanned_bytes, 6 * 256);
  EXPECT_EQ(jit.stats().arena_bytes, 2 * 256);
  EXPECT_EQ(jit({floats({0, 1, 2})})[0].tolist<float>(), (std::vector<float>{12, 14, 16}));
}

// ---- footguns (tinygrad test/unit/test_jit_footguns.py) --------------------------------------------------------

Jit add_one() {
  return Jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const JitError& e) {
    return e.what();
  }
  return "";
}

TEST(JitFootguns, OutputsOfThePreviousCallAreOverwrittenAsTinyJitDoes) {
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0].sum()}; });
  Tensor r1 = jit({floats({1, 1})})[0];
  Tensor r2 = jit({floats({2, 2})})[0];
  Tensor r3 = jit({floats({3, 3})})[0];
  EXPECT_EQ(r1.item<float>(), 2);
  EXPECT_EQ(r3.item<float>(), 6);
  EXPECT_EQ(r2.item<float>(), 6) << "the replay wrote the capture's output buffer";
}

TEST(JitFootguns, ADifferentNumberOfInputsIsAnError) {
  Jit jit = add_one();
  Tensor a = floats({1, 2, 3});
  jit({a});
  jit({a});
  EXPECT_NE(error_of([&] { jit({a, floats({1, 2, 3})}); }).find("2 inputs; the capture took 1"), std::string::npos);
}

TEST(JitFootguns, AChangedShapeOrDtypeIsAnError) {
  Jit jit = add_one();
  Tensor a = floats({1, 2, 3});
  jit({a});
  jit({a});
  EXPECT_NE(error_of([&] { jit({floats({1, 2, 3, 4})}); }).find("the capture took float32 (3,)"), std::string::npos)
      << error_of([&] { jit({floats({1, 2, 3, 4})}); });
  EXPECT_NE(error_of([&] { jit({Tensor({1, 2, 3}).realize()}); }).find("int32"), std::string::npos);
}

TEST(JitFootguns, AnInputOnAnotherDeviceIsAnError) {
  Jit jit = add_one();
  Tensor a = floats({1, 2, 3});
  jit({a});
  jit({a});
  Tensor elsewhere = a.to(a.device() == "REF" ? "CPU" : "REF");
  EXPECT_NE(error_of([&] { jit({elsewhere}); }).find("on " + elsewhere.device()), std::string::npos);
}

TEST(JitFootguns, AnInputThatIsAlsoAnOutputIsAnError) {
  Jit assigns([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0].assign(in[0] * 2)}; });
  Tensor a = floats({1, 2, 3});
  assigns({a});
  EXPECT_NE(error_of([&] { assigns({a}); }).find("output 0 is input 0"), std::string::npos);
  // Feeding an output back: the replay would overwrite what it reads.
  Jit jit = add_one();
  Tensor b = floats({1, 2, 3});
  jit({b});
  Tensor y = jit({b})[0];
  EXPECT_NE(error_of([&] { jit({y}); }).find("input 0 is an output of this Jit"), std::string::npos);
  EXPECT_EQ(jit({(y + 0).realize()})[0].tolist<float>(), (std::vector<float>{3, 4, 5}));  // the workaround
}

TEST(JitFootguns, ATensorCapturedByValueThatChangedIsAnError) {
  Tensor w = floats({1, 2, 3});
  Jit jit([&w](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] * w}; });
  Tensor a = floats({1, 1, 1});
  jit({a});
  jit({a});
  w.assign(w * 10).realize();  // in place, realized: the replay reads the new values
  EXPECT_EQ(jit({a})[0].tolist<float>(), (std::vector<float>{10, 20, 30}));
  w.assign(w + 1);  // pending: the replay would not see it
  EXPECT_NE(error_of([&] { jit({a}); }).find("captured by value"), std::string::npos);
  w.realize();
  EXPECT_EQ(jit({a})[0].tolist<float>(), (std::vector<float>{11, 21, 31}));
}

TEST(JitFootguns, DuplicateAndConstantInputsAreErrors) {
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + in[1]}; });
  Tensor a = floats({1, 2, 3});
  EXPECT_NE(error_of([&] { jit({a, a}); }).find("same buffer"), std::string::npos);
  EXPECT_NE(error_of([&] { jit({a, Tensor(2.f)}); }).find("input 1 is a constant"), std::string::npos);
}

TEST(JitFootguns, ReadingValuesDuringCaptureIsAnError) {
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] * in[0].sum().item<float>()}; });
  Tensor a = floats({1, 2, 3});
  jit({a});
  EXPECT_NE(error_of([&] { jit({a}); }).find("tolist/item during capture"), std::string::npos);
}

TEST(JitFootguns, NestedCaptureAndAnEmptyFunctionAreErrors) {
  Jit inner = add_one();
  Jit outer([&inner](std::span<const Tensor> in) { return std::vector<Tensor>{inner(in)[0] * 3}; });
  Tensor a = floats({1, 2, 3});
  EXPECT_EQ(outer({a})[0].tolist<float>(), (std::vector<float>{6, 9, 12}));
  EXPECT_NE(error_of([&] { outer({a}); }).find("another Jit captures"), std::string::npos);
  Jit nothing([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0]}; });
  nothing({a});
  EXPECT_NE(error_of([&] { nothing({a}); }).find("computed nothing"), std::string::npos);
}

TEST(JitFootguns, ResetCapturesAgain) {
  Jit jit = add_one();
  jit({floats({1, 2, 3})});
  jit({floats({1, 2, 3})});
  jit.reset();
  EXPECT_EQ(jit({floats({1, 2, 3, 4})})[0].tolist<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(jit.stats().calls, 1u);
}

}  // namespace
}  // namespace doorbell
