// Memory planner: arena sizes, placement (best fit, coalescing, 256-byte rounding), lifetimes, held buffers,
// devices, determinism, bad input, and verify_memory_plan, which must catch a bad plan.
#include "scheduler/memory_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/printer.h"
#include "tests/common/error_of.h"

namespace doorbell {

// Readable failure messages: gtest finds this by argument-dependent lookup.
inline void PrintTo(const UOp& u, std::ostream* os) { *os << (u ? render_expr(u) : std::string("null UOp")); }

namespace {

using testing::error_of;

// Buffers with ids far from new_buffer's, so the arenas the planner makes never collide with them.
int64_t next_test_id = int64_t{1} << 40;

UOp buf(DType dtype, int64_t count, const std::string& device = "CPU") {
  return UOp::make(Ops::BUFFER, dtype,
                   {UOp::make(Ops::UNIQUE, dtypes::void_, {}, int64_t{next_test_id++}),
                    UOp::make(Ops::DEVICE, dtypes::void_, {}, device)},
                   count);
}
// 256 bytes and 512 bytes: one and two allocation blocks.
UOp b256() { return buf(dtypes::float32, 64); }
UOp b512() { return buf(dtypes::float32, 128); }

// A kernel: the body is a distinct SINK per kernel, which the planner must not look into.
UOp call(int64_t k, std::vector<UOp> bufs) {
  bufs.insert(bufs.begin(), UOp::sink({UOp::const_(dtypes::int32, k)}));
  return UOp::make(Ops::CALL, dtypes::void_, std::move(bufs));
}
UOp linear(std::vector<UOp> calls) { return UOp::make(Ops::LINEAR, dtypes::void_, std::move(calls)); }

UOp view(const UOp& arena, int64_t offset, DType dtype, int64_t count) {
  return UOp::make(Ops::BUFFER, dtype, {arena, UOp::const_(dtypes::int64, offset)}, count);
}

bool is_view(const UOp& u) { return u.op() == Ops::BUFFER && u.src().size() == 2 && u.src(0).op() == Ops::BUFFER; }

const UOp& arg_at(const UOp& lin, size_t call_index, size_t arg_index) { return lin.src(call_index).src(arg_index + 1); }

// The byte offset of the view at (call, arg), or -1 (and a failure) when it is not a view.
int64_t offset_at(const UOp& lin, size_t call_index, size_t arg_index) {
  const UOp& v = arg_at(lin, call_index, arg_index);
  EXPECT_TRUE(is_view(v)) << "call " << call_index << " arg " << arg_index << " is not a view";
  return is_view(v) ? std::get<int64_t>(v.src(1).arg()) : -1;
}

using Held = std::unordered_set<const UOpNode*>;

// ---- arena size -------------------------------------------------------------------------------------------

// x0 -> t1 -> ... -> t(n-1) -> tn: kernel k reads t(k) and writes t(k+1). Only two intermediates are ever
// alive (the one being read and the one being written), so the arena holds two slots whatever n is.
TEST(MemoryPlannerTest, ChainOfKernelsUsesTwoSlotsWhateverItsLength) {
  for (int n : {3, 50, 500}) {
    std::vector<UOp> t;
    for (int k = 0; k <= n; k++) t.push_back(buf(dtypes::float32, 1000));  // 4000 bytes -> a 4096-byte slot
    std::vector<UOp> calls;
    for (int k = 0; k < n; k++) calls.push_back(call(k, {t[k + 1], t[k]}));
    MemoryPlanStats stats;
    UOp planned = memory_plan(linear(calls), Held{t.front().get(), t.back().get()}, &stats);
    EXPECT_EQ(stats.peak_bytes, (std::map<std::string, int64_t>{{"CPU", 2 * 4096}})) << "n = " << n;
    EXPECT_EQ(stats.unplanned_bytes.at("CPU"), int64_t{n - 1} * 4096);
    EXPECT_EQ(stats.buffers_planned, n - 1);
    for (int k = 1; k < n; k++) EXPECT_EQ(offset_at(planned, k - 1, 0), (k - 1) % 2 * 4096) << "t" << k;
    EXPECT_NO_THROW(verify_memory_plan(planned));
  }
}

TEST(MemoryPlannerTest, ArenaIsAFreshUint8BufferOfThePeakOnTheDevice) {
  UOp a = b256(), b = b512();
  UOp planned = memory_plan(linear({call(0, {a, b})}), {});
  const UOp& arena = arg_at(planned, 0, 0).src(0);
  EXPECT_EQ(arena.op(), Ops::BUFFER);
  EXPECT_EQ(arena.dtype(), dtypes::uint8);
  EXPECT_EQ(std::get<int64_t>(arena.arg()), 768);
  ASSERT_EQ(arena.src().size(), 2u);
  EXPECT_EQ(arena.src(0).op(), Ops::UNIQUE);
  EXPECT_EQ(arena.src(1), UOp::make(Ops::DEVICE, dtypes::void_, {}, std::string("CPU")));
  EXPECT_EQ(arg_at(planned, 0, 1).src(0), arena) << "one arena per device";
  EXPECT_NE(arena.src(0), a.src(0));
  EXPECT_NE(arena.src(0), b.src(0));
}

// ---- lifetimes and placement ------------------------------------------------------------------------------

// A is used by calls 0 and 1, B first by call 1: both are read or written by call 1, so they must not share.
// C is first used by call 2, after A's last use: it takes A's bytes.
TEST(MemoryPlannerTest, BytesAreFreeFromTheCallAfterTheLastUse) {
  UOp a = b256(), b = b256(), c = b256();
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear({call(0, {a}), call(1, {b, a}), call(2, {c, b})}), {}, &stats);
  EXPECT_EQ(offset_at(planned, 0, 0), 0);    // A
  EXPECT_EQ(offset_at(planned, 1, 0), 256);  // B
  EXPECT_EQ(offset_at(planned, 1, 1), 0);    // A again: the same view everywhere
  EXPECT_EQ(offset_at(planned, 2, 0), 0);    // C reuses A's bytes
  EXPECT_EQ(arg_at(planned, 0, 0), arg_at(planned, 1, 1));
  EXPECT_EQ(stats.peak_bytes.at("CPU"), 512);
  EXPECT_EQ(stats.unplanned_bytes.at("CPU"), 768);
  EXPECT_EQ(stats.buffers_planned, 3);
}

// A and B (same dtype and count) both sit at offset 0, with Z there in between: untagged, their views would be
// one node alive over calls 0..2, and Z would seem to overwrite it. B's view is tagged to stay its own buffer.
TEST(MemoryPlannerTest, BuffersPlacedAtOnePlaceAtDifferentTimesStayDistinctNodes) {
  UOp a = b256(), z = buf(dtypes::int8, 256), b = b256();
  UOp planned = memory_plan(linear({call(0, {a}), call(1, {z}), call(2, {b})}), {});
  EXPECT_EQ(offset_at(planned, 0, 0), 0);
  EXPECT_EQ(offset_at(planned, 1, 0), 0);
  EXPECT_EQ(offset_at(planned, 2, 0), 0);
  const UOp &va = arg_at(planned, 0, 0), &vb = arg_at(planned, 2, 0);
  EXPECT_EQ(va.tag(), UOp::kNoTag) << "the first buffer at a place gets the plain view";
  EXPECT_EQ(vb.tag(), 1);
  EXPECT_EQ(vb.with_tag(UOp::kNoTag), va);
  EXPECT_NO_THROW(verify_memory_plan(planned));
  // Without the tag the plan reads as one buffer over calls 0..2 sharing bytes with Z: the check says so.
  UOp untagged = linear({planned.src(0), planned.src(1), planned.src(2).replace_src({planned.src(2).src(0), va})});
  EXPECT_THROW(verify_memory_plan(untagged), std::logic_error);
}

// Call 0 places A B C(512) D E at 0, 256, 512, 1024, 1280. A, B and D die after call 0: A and B coalesce into a
// 512-byte hole at 0, D leaves a 256-byte hole at 1024. Call 1 asks for F (256) then G (512). Best fit puts F in
// D's hole, which leaves the coalesced hole for G: the peak stays 1536. First fit (F at 0) or no coalescing
// (two 256-byte holes) would leave G no hole and grow the arena.
TEST(MemoryPlannerTest, BestFitWithCoalescingFillsHolesBeforeGrowing) {
  UOp a = b256(), b = b256(), c = b512(), d = b256(), e = b256(), f = b256(), g = b512();
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear({call(0, {a, b, c, d, e}), call(1, {f, g, c, e}), call(2, {c, e})}), {}, &stats);
  std::vector<int64_t> first{offset_at(planned, 0, 0), offset_at(planned, 0, 1), offset_at(planned, 0, 2),
                             offset_at(planned, 0, 3), offset_at(planned, 0, 4)};
  EXPECT_EQ(first, (std::vector<int64_t>{0, 256, 512, 1024, 1280}));
  EXPECT_EQ(offset_at(planned, 1, 0), 1024) << "F goes to the smallest hole that fits";
  EXPECT_EQ(offset_at(planned, 1, 1), 0) << "G goes to the coalesced hole of A and B";
  EXPECT_EQ(stats.peak_bytes.at("CPU"), 1536);
  EXPECT_NO_THROW(verify_memory_plan(planned));
}

// A block freed at the top of the arena lowers the top, so a later larger buffer grows from there.
TEST(MemoryPlannerTest, FreedBlockAtTheTopMergesIntoTheTop) {
  UOp a = b256(), b = b256(), c = buf(dtypes::float32, 192);  // c: 768 bytes
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear({call(0, {a, b}), call(1, {a}), call(2, {c, a})}), {}, &stats);
  // b (at 256) dies after call 0 and lowers the top to 256; c then sits at 256, not at 512.
  EXPECT_EQ(offset_at(planned, 2, 0), 256);
  EXPECT_EQ(stats.peak_bytes.at("CPU"), 1024);
}

TEST(MemoryPlannerTest, SizesRoundUpTo256Bytes) {
  UOp a = buf(dtypes::float32, 1), b = buf(dtypes::float32, 64), c = buf(dtypes::float32, 65), d = buf(dtypes::int8, 257);
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear({call(0, {a, b, c, d})}), {}, &stats);
  std::vector<int64_t> offsets;
  for (size_t j = 0; j < 4; j++) offsets.push_back(offset_at(planned, 0, j));
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 256, 512, 1024}));  // 4 -> 256, 256, 260 -> 512, 257 -> 512
  EXPECT_EQ(stats.peak_bytes.at("CPU"), 1536);
  EXPECT_EQ(stats.unplanned_bytes.at("CPU"), 1536);
  // A view keeps the buffer's dtype and element count: only its storage moved.
  EXPECT_EQ(arg_at(planned, 0, 2).dtype(), dtypes::float32);
  EXPECT_EQ(std::get<int64_t>(arg_at(planned, 0, 2).arg()), 65);
  EXPECT_EQ(std::get<int64_t>(arg_at(planned, 0, 3).arg()), 257);
  EXPECT_EQ(*arg_at(planned, 0, 3).shape(), IntTuple{257});
}

TEST(MemoryPlannerTest, EmptyBufferTakesNoBytes) {
  UOp e = buf(dtypes::float32, 0), a = b256();
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear({call(0, {e, a})}), {}, &stats);
  EXPECT_EQ(offset_at(planned, 0, 0), 0);
  EXPECT_EQ(offset_at(planned, 0, 1), 0);
  EXPECT_EQ(stats.peak_bytes.at("CPU"), 256);
  EXPECT_EQ(stats.buffers_planned, 2);
  EXPECT_NO_THROW(verify_memory_plan(planned));
}

// ---- what is planned and what is replaced -----------------------------------------------------------------

TEST(MemoryPlannerTest, HeldBuffersAreNeverPlannedOrReplaced) {
  UOp in = b256(), mid = b256(), kept = b256(), out = b256();
  UOp lin = linear({call(0, {mid, in}), call(1, {kept, mid}), call(2, {out, kept, in})});
  MemoryPlanStats stats;
  UOp planned = memory_plan(lin, Held{in.get(), kept.get(), out.get()}, &stats);
  EXPECT_EQ(arg_at(planned, 0, 1), in);
  EXPECT_EQ(arg_at(planned, 1, 0), kept);
  EXPECT_EQ(arg_at(planned, 2, 0), out);
  EXPECT_EQ(arg_at(planned, 2, 1), kept);
  EXPECT_EQ(arg_at(planned, 2, 2), in);
  EXPECT_TRUE(is_view(arg_at(planned, 0, 0)));
  EXPECT_EQ(stats.buffers_planned, 1);
  EXPECT_EQ(stats.peak_bytes.at("CPU"), 256);
}

TEST(MemoryPlannerTest, BuffersOfTwoDevicesGoToTwoArenas) {
  UOp c0 = b256(), g0 = buf(dtypes::float32, 64, "GPU"), c1 = b512(), g1 = buf(dtypes::float32, 128, "GPU");
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear({call(0, {c0, g0}), call(1, {c1, g1, c0, g0})}), {}, &stats);
  const UOp& cpu_arena = arg_at(planned, 0, 0).src(0);
  const UOp& gpu_arena = arg_at(planned, 0, 1).src(0);
  EXPECT_NE(cpu_arena, gpu_arena);
  EXPECT_NE(cpu_arena.src(0), gpu_arena.src(0)) << "each arena has its own UNIQUE id";
  EXPECT_EQ(std::get<std::string>(cpu_arena.src(1).arg()), "CPU");
  EXPECT_EQ(std::get<std::string>(gpu_arena.src(1).arg()), "GPU");
  EXPECT_EQ(arg_at(planned, 1, 0).src(0), cpu_arena);
  EXPECT_EQ(arg_at(planned, 1, 1).src(0), gpu_arena);
  // Each device's buffers are placed as if the other device did not exist.
  EXPECT_EQ(offset_at(planned, 0, 0), 0);
  EXPECT_EQ(offset_at(planned, 0, 1), 0);
  EXPECT_EQ(offset_at(planned, 1, 0), 256);
  EXPECT_EQ(offset_at(planned, 1, 1), 256);
  EXPECT_EQ(stats.peak_bytes, (std::map<std::string, int64_t>{{"CPU", 768}, {"GPU", 768}}));
  EXPECT_EQ(stats.unplanned_bytes, (std::map<std::string, int64_t>{{"CPU", 768}, {"GPU", 768}}));
  EXPECT_EQ(stats.buffers_planned, 4);
  EXPECT_NO_THROW(verify_memory_plan(planned));
}

TEST(MemoryPlannerTest, CallBodiesAreNotEntered) {
  UOp a = b256();
  UOp body = UOp::sink({a});  // a body that (oddly) names the buffer: it is not the planner's to change
  UOp c = UOp::make(Ops::CALL, dtypes::void_, {body, a});
  UOp planned = memory_plan(linear({c}), {});
  EXPECT_EQ(planned.src(0).src(0), body);
  EXPECT_TRUE(is_view(arg_at(planned, 0, 0)));
}

TEST(MemoryPlannerTest, LinearWithoutCandidatesIsReturnedUnchanged) {
  UOp a = b256(), b = b256();
  UOp lin = linear({call(0, {a}), call(1, {b, a})});
  MemoryPlanStats stats;
  stats.peak_bytes["CPU"] = 99;  // stale numbers are overwritten
  stats.buffers_planned = 7;
  EXPECT_EQ(memory_plan(lin, Held{a.get(), b.get()}, &stats), lin);
  EXPECT_TRUE(stats.peak_bytes.empty());
  EXPECT_TRUE(stats.unplanned_bytes.empty());
  EXPECT_EQ(stats.buffers_planned, 0);
  UOp empty = linear({});
  EXPECT_EQ(memory_plan(empty, {}), empty);
  UOp no_args = linear({call(0, {}), call(1, {})});
  EXPECT_EQ(memory_plan(no_args, {}), no_args);
}

TEST(MemoryPlannerTest, ArgThatIsNotABufferIsLeftAlone) {
  UOp a = b256(), n = UOp::variable("n", 1, 10, dtypes::int32), k = UOp::const_(dtypes::int32, 3);
  UOp planned = memory_plan(linear({call(0, {a, n, k})}), {});
  EXPECT_TRUE(is_view(arg_at(planned, 0, 0)));
  EXPECT_EQ(arg_at(planned, 0, 1), n);
  EXPECT_EQ(arg_at(planned, 0, 2), k);
}

// B is also reached through an AFTER argument, where its use cannot be timed: it is not planned at all.
TEST(MemoryPlannerTest, BufferInsideANonBufferArgIsNotPlanned) {
  UOp a = b256(), b = b256();
  UOp wrapped = UOp::make(Ops::AFTER, b.dtype(), {b});
  UOp planned = memory_plan(linear({call(0, {a, b}), call(1, {a}), call(2, {wrapped})}), {});
  EXPECT_TRUE(is_view(arg_at(planned, 0, 0)));
  EXPECT_EQ(arg_at(planned, 0, 1), b);
  EXPECT_EQ(arg_at(planned, 2, 0), wrapped);
}

// Existing views are not candidates; their arena is not replanned either.
TEST(MemoryPlannerTest, PlanningAPlannedLinearChangesNothing) {
  UOp a = b256(), b = b256();
  UOp planned = memory_plan(linear({call(0, {a}), call(1, {b, a})}), {});
  EXPECT_EQ(memory_plan(planned, {}), planned);
}

// ---- determinism ------------------------------------------------------------------------------------------

// Replaces each view's arena by the one of `like` on the same device, so two plans can be compared as nodes.
UOp with_arenas_of(const UOp& lin, const UOp& like) {
  std::map<std::string, UOp> arena_of;
  for (const UOp& c : like.src())
    for (size_t j = 1; j < c.src().size(); j++)
      if (is_view(c.src(j))) arena_of[std::get<std::string>(c.src(j).src(0).src(1).arg())] = c.src(j).src(0);
  std::vector<UOp> calls;
  for (const UOp& c : lin.src()) {
    std::vector<UOp> src = c.src();
    for (size_t j = 1; j < src.size(); j++)
      if (is_view(src[j]))
        src[j] = view(arena_of.at(std::get<std::string>(src[j].src(0).src(1).arg())),
                      std::get<int64_t>(src[j].src(1).arg()), src[j].dtype(), std::get<int64_t>(src[j].arg()))
                     .with_tag(src[j].tag());
    calls.push_back(c.replace_src(src));
  }
  return lin.replace_src(calls);
}

UOp random_linear(std::mt19937_64& rng, Held& held);

TEST(MemoryPlannerTest, SameInputGivesTheSamePlan) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; round++) {
    Held held;
    UOp lin = random_linear(rng, held);
    MemoryPlanStats s1, s2;
    UOp p1 = memory_plan(lin, held, &s1);
    UOp p2 = memory_plan(lin, held, &s2);
    EXPECT_EQ(s1.peak_bytes, s2.peak_bytes);
    EXPECT_EQ(s1.unplanned_bytes, s2.unplanned_bytes);
    EXPECT_EQ(s1.buffers_planned, s2.buffers_planned);
    // Arenas get fresh ids, so the plans differ only there: with the arenas swapped they are the same node.
    if (s1.buffers_planned > 0) {
      EXPECT_NE(p1, p2);
    }
    EXPECT_EQ(with_arenas_of(p2, p1), p1);
  }
}

// ---- random schedules: nothing alive at once shares bytes --------------------------------------------------

// 5-60 calls. Each writes one or two new buffers (some held, as outputs) and reads up to three earlier ones
// (inputs included), on CPU or GPU, with sizes from 0 to 3000 elements of dtypes of 1, 2, 4 and 8 bytes.
UOp random_linear(std::mt19937_64& rng, Held& held) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const DType kDtypes[] = {dtypes::int8, dtypes::float16, dtypes::float32, dtypes::float64};
  auto random_buffer = [&] {
    int64_t count = pick(0, 9) == 0 ? pick(0, 2) : pick(1, 3000);
    return buf(kDtypes[pick(0, 3)], count, pick(0, 3) == 0 ? "GPU" : "CPU");
  };
  std::vector<UOp> made;
  for (int64_t i = pick(1, 3); i > 0; i--) {  // inputs
    made.push_back(random_buffer());
    held.insert(made.back().get());
  }
  std::vector<UOp> calls;
  for (int64_t i = 0, n = pick(5, 60); i < n; i++) {
    std::vector<UOp> args;
    for (int64_t w = pick(1, 2); w > 0; w--) {
      args.push_back(random_buffer());
      if (pick(0, 9) == 0) held.insert(args.back().get());
    }
    // Reads lean towards recent buffers, as in real schedules, with some from far back to stretch lifetimes.
    for (int64_t r = pick(0, 3); r > 0; r--) {
      int64_t back = pick(0, 4) == 0 ? pick(0, static_cast<int64_t>(made.size()) - 1) : pick(0, std::min<int64_t>(5, made.size() - 1));
      args.push_back(made[made.size() - 1 - back]);
    }
    for (size_t w = 0; w < args.size(); w++)
      if (std::find(made.begin(), made.end(), args[w]) == made.end()) made.push_back(args[w]);
    calls.push_back(call(i, args));
  }
  return linear(calls);
}

int64_t rounded(int64_t bytes) { return (bytes + 255) / 256 * 256; }

// Checks a plan against its input without verify_memory_plan: position by position, every candidate became one
// view, held buffers stayed, and all pairs of candidates alive together on one device have disjoint 256-byte slots.
void brute_force_check(const UOp& lin, const UOp& planned, const Held& held, const MemoryPlanStats& stats) {
  struct Placed {
    UOp arena;
    int64_t offset, slot;
    size_t first, last;
  };
  std::unordered_map<const UOpNode*, Placed> placed;
  std::vector<const UOpNode*> order;
  ASSERT_EQ(planned.op(), Ops::LINEAR);
  ASSERT_EQ(planned.src().size(), lin.src().size());
  for (size_t i = 0; i < lin.src().size(); i++) {
    const UOp &c = lin.src(i), &p = planned.src(i);
    ASSERT_EQ(p.src().size(), c.src().size());
    ASSERT_EQ(p.src(0), c.src(0)) << "call " << i << ": the body changed";
    for (size_t j = 1; j < c.src().size(); j++) {
      const UOp &in = c.src(j), &out = p.src(j);
      if (held.count(in.get())) {
        ASSERT_EQ(out, in) << "call " << i << ": a held buffer was replaced";
        continue;
      }
      ASSERT_TRUE(is_view(out)) << "call " << i << " arg " << j << ": a candidate was not planned";
      ASSERT_EQ(out.dtype(), in.dtype());
      ASSERT_EQ(out.arg(), in.arg());
      ASSERT_EQ(out.src(0).src(1), in.src(1)) << "the arena is on the buffer's device";
      int64_t offset = std::get<int64_t>(out.src(1).arg());
      auto [it, fresh] = placed.try_emplace(
          in.get(), Placed{out.src(0), offset, rounded(std::get<int64_t>(in.arg()) * in.dtype().itemsize()), i, i});
      if (fresh) order.push_back(in.get());
      ASSERT_EQ(it->second.arena, out.src(0));
      ASSERT_EQ(it->second.offset, offset) << "one buffer, two places";
      it->second.last = i;
    }
  }
  std::map<std::string, int64_t> unplanned;
  for (size_t ka = 0; ka < order.size(); ka++) {
    const Placed& a = placed.at(order[ka]);
    std::string device = std::get<std::string>(a.arena.src(1).arg());
    unplanned[device] += a.slot;
    ASSERT_EQ(a.offset % 256, 0);
    ASSERT_GE(a.offset, 0);
    ASSERT_LE(a.offset + a.slot, std::get<int64_t>(a.arena.arg()));
    ASSERT_EQ(std::get<int64_t>(a.arena.arg()), stats.peak_bytes.at(device));
    for (size_t kb = ka + 1; kb < order.size(); kb++) {
      const Placed& b = placed.at(order[kb]);
      if (a.arena != b.arena || a.slot == 0 || b.slot == 0) continue;
      bool alive_together = a.first <= b.last && b.first <= a.last;
      bool share_bytes = a.offset < b.offset + b.slot && b.offset < a.offset + a.slot;
      ASSERT_FALSE(alive_together && share_bytes)
          << "calls [" << a.first << ", " << a.last << "] at " << a.offset << "+" << a.slot << " and calls [" << b.first
          << ", " << b.last << "] at " << b.offset << "+" << b.slot;
    }
  }
  EXPECT_EQ(stats.unplanned_bytes, unplanned);
  EXPECT_EQ(stats.buffers_planned, static_cast<int64_t>(order.size()));
  // The peak is at least the bytes alive at the busiest call and at most everything side by side.
  for (auto& [device, peak] : stats.peak_bytes) {
    EXPECT_LE(peak, unplanned.at(device));
    int64_t busiest = 0;
    for (size_t i = 0; i < lin.src().size(); i++) {
      int64_t alive = 0;
      for (const UOpNode* k : order) {
        const Placed& a = placed.at(k);
        if (a.first <= i && i <= a.last && std::get<std::string>(a.arena.src(1).arg()) == device) alive += a.slot;
      }
      busiest = std::max(busiest, alive);
    }
    EXPECT_GE(peak, busiest);
  }
}

TEST(MemoryPlannerTest, BuffersAliveTogetherNeverShareBytesInRandomSchedules) {
  std::mt19937_64 rng(2026);
  int64_t shared = 0, planned_total = 0;
  for (int round = 0; round < 200; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    Held held;
    UOp lin = random_linear(rng, held);
    MemoryPlanStats stats;
    UOp planned = memory_plan(lin, held, &stats);
    ASSERT_NO_THROW(verify_memory_plan(planned));
    brute_force_check(lin, planned, held, stats);
    if (HasFatalFailure()) return;
    for (auto& [device, peak] : stats.peak_bytes) shared += stats.unplanned_bytes.at(device) - peak;
    planned_total += stats.buffers_planned;
  }
  EXPECT_GT(planned_total, 2000);
  EXPECT_GT(shared, 0) << "the random schedules must exercise reuse";
}

// 10,000 intermediates: each kernel writes one and reads the previous one and one from up to 20 back. Guards
// against quadratic work (it must run in milliseconds) and checks the arena stays at the live working set.
TEST(MemoryPlannerTest, TenThousandBuffersPlanQuickly) {
  std::mt19937_64 rng(3);
  std::vector<UOp> t{buf(dtypes::float32, 1000)};
  std::vector<UOp> calls;
  for (int k = 0; k < 10000; k++) {
    t.push_back(buf(dtypes::float32, 1000));
    size_t back = std::uniform_int_distribution<size_t>(1, std::min<size_t>(20, t.size() - 1))(rng);
    calls.push_back(call(k, {t.back(), t[t.size() - 2], t[t.size() - 1 - back]}));
  }
  MemoryPlanStats stats;
  UOp planned = memory_plan(linear(calls), Held{t.front().get()}, &stats);
  EXPECT_EQ(stats.buffers_planned, 10000);
  EXPECT_LE(stats.peak_bytes.at("CPU"), 22 * 4096) << "at most 22 buffers are ever alive together";
  EXPECT_NO_THROW(verify_memory_plan(planned));
}

// ---- bad input --------------------------------------------------------------------------------------------

TEST(MemoryPlannerTest, InputThatIsNotALinearThrows) {
  std::string msg = error_of<std::invalid_argument>([] { memory_plan(UOp::sink({}), {}); });
  EXPECT_NE(msg.find("SINK"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a LINEAR"), std::string::npos) << msg;
  msg = error_of<std::invalid_argument>([] { memory_plan(UOp(), {}); });
  EXPECT_NE(msg.find("null"), std::string::npos) << msg;
  msg = error_of<std::invalid_argument>([] { memory_plan(linear({call(0, {b256()}), UOp::sink({})}), {}); });
  EXPECT_NE(msg.find("source 1 is SINK"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected a CALL"), std::string::npos) << msg;
  msg = error_of<std::invalid_argument>([] { verify_memory_plan(UOp::sink({})); });
  EXPECT_NE(msg.find("SINK"), std::string::npos) << msg;
}

TEST(MemoryPlannerTest, CandidateWithoutDeviceOrCountThrows) {
  UOp no_device = UOp::make(Ops::BUFFER, dtypes::float32, {UOp::make(Ops::UNIQUE, dtypes::void_, {}, int64_t{-5})}, int64_t{4});
  std::string msg = error_of<std::invalid_argument>([&] { memory_plan(linear({call(0, {no_device})}), {}); });
  EXPECT_NE(msg.find("float32[4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("call 0 slot 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected BUFFER(UNIQUE, DEVICE)"), std::string::npos) << msg;
  EXPECT_EQ(memory_plan(linear({call(0, {no_device})}), Held{no_device.get()}), linear({call(0, {no_device})}))
      << "held buffers are not looked at";
  UOp no_count = UOp::make(Ops::BUFFER, dtypes::float32,
                           {UOp::make(Ops::UNIQUE, dtypes::void_, {}, int64_t{-6}),
                            UOp::make(Ops::DEVICE, dtypes::void_, {}, std::string("CPU"))});
  msg = error_of<std::invalid_argument>([&] { memory_plan(linear({call(0, {no_count})}), {}); });
  EXPECT_NE(msg.find("expected an element count"), std::string::npos) << msg;
}

// ---- verify_memory_plan -----------------------------------------------------------------------------------

TEST(MemoryPlannerTest, VerifyCatchesViewsAliveTogetherSharingBytes) {
  UOp arena = buf(dtypes::uint8, 1024);
  UOp a = view(arena, 0, dtypes::float32, 100);  // bytes [0, 400)
  UOp b = view(arena, 256, dtypes::float32, 100);  // bytes [256, 656): overlaps a
  std::string msg = error_of<std::logic_error>([&] { verify_memory_plan(linear({call(0, {a}), call(1, {b, a})})); });
  EXPECT_NE(msg.find("at call 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32[100] at byte offset 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32[100] at byte offset 256"), std::string::npos) << msg;
  EXPECT_NE(msg.find("uint8[1024]"), std::string::npos) << msg;
  // The same bytes at different times are fine.
  EXPECT_NO_THROW(verify_memory_plan(linear({call(0, {a}), call(1, {b})})));
  // A long-lived view overlapped by one that starts later, at the same offset and of another dtype.
  UOp c = view(arena, 0, dtypes::int32, 64);
  msg = error_of<std::logic_error>(
      [&] { verify_memory_plan(linear({call(0, {a}), call(1, {}), call(2, {c}), call(3, {a})})); });
  EXPECT_NE(msg.find("at call 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32[64] at byte offset 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("calls 0..3"), std::string::npos) << msg;
  // Adjacent bytes do not overlap.
  UOp d = view(arena, 400, dtypes::int8, 624);
  EXPECT_NO_THROW(verify_memory_plan(linear({call(0, {a, d})})));
  // Views of different arenas never conflict.
  UOp other = view(buf(dtypes::uint8, 1024), 0, dtypes::float32, 100);
  EXPECT_NO_THROW(verify_memory_plan(linear({call(0, {a, other})})));
}

TEST(MemoryPlannerTest, VerifyCatchesAViewOutsideItsArena) {
  UOp arena = buf(dtypes::uint8, 1024);
  std::string msg =
      error_of<std::logic_error>([&] { verify_memory_plan(linear({call(0, {view(arena, 768, dtypes::float32, 100)})})); });
  EXPECT_NE(msg.find("float32[100] at byte offset 768"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside"), std::string::npos) << msg;
  msg = error_of<std::logic_error>([&] { verify_memory_plan(linear({call(0, {view(arena, -256, dtypes::int8, 1)})})); });
  EXPECT_NE(msg.find("offset -256"), std::string::npos) << msg;
  EXPECT_NO_THROW(verify_memory_plan(linear({call(0, {view(arena, 624, dtypes::float32, 100)})})));
  UOp bad_offset = UOp::make(Ops::BUFFER, dtypes::float32, {arena, UOp::variable("o", 0, 8, dtypes::int64)}, int64_t{4});
  msg = error_of<std::logic_error>([&] { verify_memory_plan(linear({call(0, {bad_offset})})); });
  EXPECT_NE(msg.find("expected an int64 CONST byte offset"), std::string::npos) << msg;
}

// A planner bug the check must catch: take a good plan and move one buffer onto another that is alive with it.
TEST(MemoryPlannerTest, VerifyCatchesACorruptedPlan) {
  UOp a = b256(), b = b256(), c = b256();
  UOp planned = memory_plan(linear({call(0, {a, b}), call(1, {c, a, b})}), {});
  ASSERT_NO_THROW(verify_memory_plan(planned));
  UOp moved = view(arg_at(planned, 0, 1).src(0), offset_at(planned, 0, 0), dtypes::float32, 63);
  std::vector<UOp> calls;
  for (const UOp& cl : planned.src()) {
    std::vector<UOp> src = cl.src();
    for (size_t j = 1; j < src.size(); j++)
      if (src[j] == arg_at(planned, 0, 1)) src[j] = moved;
    calls.push_back(cl.replace_src(src));
  }
  std::string msg = error_of<std::logic_error>([&] { verify_memory_plan(linear(calls)); });
  EXPECT_NE(msg.find("at call 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32[63]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace doorbell
