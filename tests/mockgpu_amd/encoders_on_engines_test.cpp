// The runtime's encoders (hcq/amd/pm4.h, sdma.h, dispatch_plan.h) against the emulated engines (mockgpu/amd): the two
// sides read the packet formats independently (the engines decode the fields themselves), so a stream the encoders
// write must run without a fault and do what each packet says. A disagreement on any field shows here as a fault or a
// wrong value, on both graphics IPs.
#include <gtest/gtest.h>

#include <cstring>

#include "hcq/amd/dispatch_plan.h"
#include "hcq/amd/pm4.h"
#include "hcq/amd/sdma.h"
#include "queue_engine_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

using doorbell::amd::CmdStream;
using doorbell::amd::GfxIp;

struct Ip {
  GfxIp ip;
  uint32_t version;
};

class EncodersOnEngines : public QueueEngineTest, public ::testing::WithParamInterface<Ip> {
 protected:
  GfxIp ip() const { return GetParam().ip; }
  Options options() const { return Options().target(GetParam().version); }
  void run(const CmdStream& s) { submit(Words(s.words().begin(), s.words().end())); }
};

TEST_P(EncodersOnEngines, Pm4SignalTimestampAndInterruptRunInOrder) {
  start_pm4(options());
  CmdStream s;
  doorbell::amd::write_acquire_mem(s, ip());
  doorbell::amd::write_release_mem(s, ip(), doorbell::amd::ReleaseData::kTimestamp64, kData + 8, 0);
  doorbell::amd::write_release_mem(s, ip(), doorbell::amd::ReleaseData::kValue64, kData, (uint64_t{7} << 32) | 5,
                                   doorbell::amd::ReleaseInterrupt::kAfterWriteConfirm, 42);
  doorbell::amd::write_cs_partial_flush(s);
  run(s);
  drain();
  EXPECT_EQ(load64(kData), (uint64_t{7} << 32) | 5);
  EXPECT_NE(load64(kData + 8), 0u);
  ASSERT_EQ(interrupts().size(), 1u);
  EXPECT_EQ(interrupts()[0] & 0x0FFFFFFF, 42u);
}

TEST_P(EncodersOnEngines, Pm4Wait64HoldsTheQueueUntilTheFullValueIsReached) {
  start_pm4(options());
  store64(kData, 0);
  CmdStream s;
  const uint64_t target = (uint64_t{1} << 32) + 3;  // a 32-bit compare of the low word would pass at 3
  doorbell::amd::write_wait_reg_mem64(s, kData, 5, target, ~uint64_t{0});
  doorbell::amd::write_write_data(s, kData + 16, std::vector<uint32_t>{0xabcd});
  run(s);
  store64(kData, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(load32(kData + 16), 0u) << "the wait passed at a value below its target";
  store64(kData, target);
  drain();
  EXPECT_EQ(load32(kData + 16), 0xabcdu);
}

TEST_P(EncodersOnEngines, Pm4IndirectBufferRunsItsPackets) {
  start_pm4(options());
  CmdStream ib(std::span<uint32_t>(reinterpret_cast<uint32_t*>(host(kData + 0x1000)), 64));
  doorbell::amd::write_write_data(ib, kData + 32, std::vector<uint32_t>{1, 2, 3});
  CmdStream s;
  doorbell::amd::write_indirect_buffer(s, kData + 0x1000, static_cast<uint32_t>(ib.size()));
  run(s);
  drain();
  EXPECT_EQ(load32(kData + 32), 1u);
  EXPECT_EQ(load32(kData + 40), 3u);
}

TEST_P(EncodersOnEngines, DispatchPlanReachesTheShaderCoreAsPlanned) {
  start_pm4(options());
  KernelDescriptor kd;
  kd.kernarg_size = 16;
  kd.group_segment_fixed_size = 1000;  // 2 granules of 512
  kd.kernel_code_properties = 1u << 3;  // kernarg segment pointer: 2 user SGPRs
  if (ip() == GfxIp::kGc11_0) kd.kernel_code_properties |= 1u << 10;  // wave32
  kd.compute_pgm_rsrc2 = (2u << 1) | (1u << 7);  // USER_SGPR 2, workgroup id X
  kd.kernel_code_entry_byte_offset = 256;
  const uint64_t kd_va = kData + 0x2000;
  doorbell::amd::LaunchAddresses launch;
  launch.kernarg_va = kData + 0x3000;
  const doorbell::amd::DispatchPlan plan =
      doorbell::amd::plan_dispatch(ip(), kd, kd_va, launch, {3, 2, 1}, {64, 2, 1});
  CmdStream s;
  doorbell::amd::write_dispatch(s, ip(), plan);
  EXPECT_EQ(s.size(), doorbell::amd::dispatch_dwords(plan));
  run(s);
  drain();
  ASSERT_EQ(dispatches().size(), 1u);
  const DispatchState d = dispatches()[0];
  EXPECT_EQ(d.code_va, kd_va + 256);
  EXPECT_EQ(d.grid_workgroups, (std::array<uint32_t, 3>{3, 2, 1}));
  EXPECT_EQ(d.workgroup_size, (std::array<uint32_t, 3>{64, 2, 1}));
  EXPECT_EQ(d.user_data[0], static_cast<uint32_t>(launch.kernarg_va));
  EXPECT_EQ(d.user_data[1], static_cast<uint32_t>(launch.kernarg_va >> 32));
  EXPECT_EQ(d.lds_bytes, 1024u);
  EXPECT_EQ(d.wave32, ip() == GfxIp::kGc11_0);
  EXPECT_EQ(d.rsrc2 & 0x3e, 2u << 1);
}

TEST_P(EncodersOnEngines, SdmaCopyFenceTimestampAndTrap) {
  start_sdma(options());
  for (uint32_t i = 0; i < 256; i++) store32(kData + 4 * i, i * 3 + 1);
  CmdStream s;
  doorbell::amd::write_sdma_copy(s, ip(), kData + 0x4000, kData, 1024);
  doorbell::amd::write_sdma_timestamp(s, kData + 0x5000);
  doorbell::amd::write_sdma_fence(s, ip(), kData + 0x5010, 77);
  doorbell::amd::write_sdma_trap(s, 9);
  run(s);
  drain();
  EXPECT_EQ(std::memcmp(host(kData + 0x4000), host(kData), 1024), 0);
  EXPECT_NE(load64(kData + 0x5000), 0u);
  EXPECT_EQ(load32(kData + 0x5010), 77u);
  ASSERT_EQ(interrupts().size(), 1u);
  EXPECT_EQ(interrupts()[0], 9u);
}

TEST_P(EncodersOnEngines, SdmaPollHoldsTheQueueAndIndirectRunsPaddedToEightDwords) {
  start_sdma(options());
  CmdStream ib(std::span<uint32_t>(reinterpret_cast<uint32_t*>(host(kData + 0x6000)), 64));
  doorbell::amd::write_sdma_fence(ib, ip(), kData + 0x7000, 5);
  doorbell::amd::write_sdma_nops(ib, (8 - ib.size() % 8) % 8);
  CmdStream s;
  doorbell::amd::write_sdma_poll_regmem(s, kData + 0x7100, 3, 1, 0xFFFFFFFF);  // == 1
  const size_t ring_dword = s.size();  // the ring starts at 0 in this test
  doorbell::amd::write_sdma_nops(s, (2 - ring_dword) & 7);
  doorbell::amd::write_sdma_indirect(s, kData + 0x6000, static_cast<uint32_t>(ib.size()));
  run(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(load32(kData + 0x7000), 0u) << "the poll passed before the value was written";
  store32(kData + 0x7100, 1);
  drain();
  EXPECT_EQ(load32(kData + 0x7000), 5u);
}

INSTANTIATE_TEST_SUITE_P(BothIps, EncodersOnEngines,
                         ::testing::Values(Ip{GfxIp::kGc11_0, 110000}, Ip{GfxIp::kGc9_4_3, 90402}),
                         [](const auto& info) { return info.param.ip == GfxIp::kGc11_0 ? "gc11" : "gc9_4_3"; });

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
