// The compute engine's ordering rules as the emulator enforces them: SKED's cache of QMDs (a launch that neither
// invalidates nor copies runs the copy cached for its address; INVALIDATE_SKED_CACHES, clcbc0.h:386, empties it), and
// grids of separate SEND_PCAS that nothing orders (only a chain, WAIT_FOR_IDLE, clcbc0.h:52, or a release with
// RELEASE_WFI wait for the engine): the emulator runs the later one first.
#include <gtest/gtest.h>

#include "compute_fixture.h"

namespace doorbell::mockgpu_nv_test {
namespace {

constexpr uint32_t kN = 64;

class MockNvGpuOrderingTest : public MockNvGpuComputeTest {
 protected:
  // SET_OBJECT, then `body`, then a WFI release of `value` to `done`.
  void run(std::vector<uint32_t> body, const Block& done, uint64_t value) {
    const std::vector<uint32_t> words =
        join({nv::encode_set_object(nv::kSubchannelCompute, nv::HOPPER_COMPUTE_A), body,
              nv::encode_semaphore_release(nv::HOPPER_CHANNEL_GPFIFO_A, done.va, value, true)});
    submit(compute_, words);
    ASSERT_TRUE(wait_value(done.cpu, value)) << first_fault();
    ASSERT_TRUE(gpu_->faults().empty()) << first_fault();
  }
  static uint32_t at(const Block& b, uint32_t i) { return reinterpret_cast<const uint32_t*>(b.cpu)[i]; }
  void fill(const Block& b, uint32_t first) {
    for (uint32_t i = 0; i < kN; ++i) reinterpret_cast<uint32_t*>(b.cpu)[i] = first + i;
  }
  // The QMD of `k` written over the 384 bytes at `qmd_va` (QMD memory recycled for another launch).
  void rewrite_qmd(const Block& qmd, const KernelLaunch& k) {
    const auto words = nv::encode_qmd_v04(qmd_launch(k, place_program(k.ptx)));
    std::memcpy(qmd.cpu, words.data(), words.size() * 4);
  }
};

TEST_F(MockNvGpuOrderingTest, AScheduleActionRunsTheQmdSkedCachedUntilInvalidateSkedCaches) {
  const Block in = take(kN * 4), out = take(kN * 4), done = take(16), qmd = take(nv::kQmdV04Words * 4, 256);
  fill(in, 10);
  rewrite_qmd(qmd, {kScale3Ptx, {out.va, in.va}, {1, 1, 1}, {kN, 1, 1}});
  run(nv::encode_compute_launch(qmd.va, nv::PcasAction::kInvalidateCopySchedule), done, 1);
  EXPECT_EQ(at(out, 0), 30u);
  // The same address now holds add_one's QMD; SCHEDULE neither invalidates nor copies.
  rewrite_qmd(qmd, {kAddOnePtx, {out.va, in.va}, {1, 1, 1}, {kN, 1, 1}});
  fill(out, 0);
  run(nv::encode_compute_launch(qmd.va, nv::PcasAction::kSchedule), done, 2);
  EXPECT_EQ(at(out, 5), 45u) << "SCHEDULE launched what memory holds, not SKED's cached copy";
  run(join({nv::encode_invalidate_sked_caches(), nv::encode_compute_launch(qmd.va, nv::PcasAction::kSchedule)}), done, 3);
  EXPECT_EQ(at(out, 5), 16u) << "INVALIDATE_SKED_CACHES left the stale copy";
}

TEST_F(MockNvGpuOrderingTest, ADependentQmdScheduledWithoutCopyRunsTheCachedCopyAndInvalidateCopyReadsMemory) {
  const Block in = take(kN * 4), out = take(kN * 4), counter = take(16), done = take(16);
  const Block dependent = take(nv::kQmdV04Words * 4, 256);
  fill(in, 1);
  rewrite_qmd(dependent, {kScale3Ptx, {out.va, in.va}, {1, 1, 1}, {kN, 1, 1}});
  run(nv::encode_compute_launch(dependent.va, nv::PcasAction::kInvalidateCopySchedule), done, 1);  // SKED caches it
  rewrite_qmd(dependent, {kAddOnePtx, {out.va, in.va}, {1, 1, 1}, {kN, 1, 1}});
  for (uint32_t action : {nv::kDependentQmdActionSchedule, nv::kDependentQmdActionInvalidateCopySchedule}) {
    fill(out, 0);
    nv::QmdLaunch head = qmd_launch({kIncrementPtx, {counter.va}}, place_program(kIncrementPtx));
    head.dependent_qmd_address = dependent.va;
    head.dependent_qmd_action = action;
    const uint64_t head_va = place_qmd(nv::encode_qmd_v04(head));
    run(nv::encode_compute_launch(head_va, nv::PcasAction::kInvalidateCopySchedule), done, 1 + action);
    if (action == nv::kDependentQmdActionSchedule) {
      EXPECT_EQ(at(out, 2), 9u) << "QMD_SCHEDULE: the copy SKED cached (scale3), not add_one now in memory";
    } else {
      EXPECT_EQ(at(out, 2), 4u) << "QMD_INVALIDATE_COPY_SCHEDULE: add_one, read afresh";
    }
  }
}

// b = a * 3, then c = b + 1, each by its own SEND_PCAS with only INVALIDATE_SHADER_CACHES_NO_WFI between them.
TEST_F(MockNvGpuOrderingTest, GridsOfSeparateSendPcasAreOrderedOnlyByWaitForIdle) {
  const Block a = take(kN * 4), b = take(kN * 4), c = take(kN * 4), done = take(16);
  fill(a, 5);
  fill(b, 0);
  const uint64_t first = place_launch({kScale3Ptx, {b.va, a.va}, {1, 1, 1}, {kN, 1, 1}});
  const uint64_t second = place_launch({kAddOnePtx, {c.va, b.va}, {1, 1, 1}, {kN, 1, 1}});
  const auto pcas = nv::PcasAction::kInvalidateCopySchedule;
  run(join({nv::encode_compute_launch(first, pcas), nv::encode_invalidate_shader_caches(),
            nv::encode_compute_launch(second, pcas)}),
      done, 1);
  EXPECT_EQ(at(c, 0), 1u) << "the second grid ran after the first although nothing ordered them";
  EXPECT_EQ(at(b, 0), 15u) << "both grids ran";
  fill(b, 0);
  run(join({nv::encode_compute_launch(first, pcas), nv::encode_wait_for_idle(), nv::encode_invalidate_shader_caches(),
            nv::encode_compute_launch(second, pcas)}),
      done, 2);
  EXPECT_EQ(at(c, 0), 16u) << "WAIT_FOR_IDLE did not finish the first grid before the second";
  EXPECT_EQ(at(c, kN - 1), 3 * (5 + kN - 1) + 1);
  EXPECT_EQ(gpu_->stats().launches, 4u);
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test
