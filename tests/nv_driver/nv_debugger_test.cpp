// RM's debugger object (GT200_DEBUGGER) on the emulated driver: the checks of its allocation and its answer to
// NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO for the MMU faults the GPU recorded on the debugged compute channel.
#include <gtest/gtest.h>

#include <string>

#include "kernel-interface/nvidia/mmu_fault_info.h"
#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

NV_STATUS status_of_alloc(NvBringUp& nv, const NV83DE_ALLOC_PARAMETERS& params) {
  NV83DE_ALLOC_PARAMETERS copy = params;
  try {
    nv.rm.alloc(nv.nvdevice, GT200_DEBUGGER, copy);
  } catch (const NvStatusError& e) {
    return e.status();
  }
  return NV_OK;
}

NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY fault_at(NvU64 address, NvU32 access) {
  return {address, kFaultInvalidPte, access};
}

class NvDebuggerOnMock : public ::testing::Test {
 protected:
  void SetUp() override {
    nv.open_driver();
    nv.device();
    nv.channels();
  }
  NvHandle debugger_for_compute() {
    NV83DE_ALLOC_PARAMETERS params{};
    params.hAppClient = nv.root;
    params.hClass3dObject = nv.compute_object;
    return nv.rm.alloc(nv.nvdevice, GT200_DEBUGGER, params);
  }
  NvBringUp nv;
};

TEST_F(NvDebuggerOnMock, ADebuggerForTheComputeObjectReportsNoFaultBeforeAny) {
  const NvHandle debugger = debugger_for_compute();
  EXPECT_TRUE(nv.rm.read_mmu_fault_info(debugger).empty());
}

TEST_F(NvDebuggerOnMock, ReadMmuFaultInfoAnswersTheRecordedFaultFieldByField) {
  const NvHandle debugger = debugger_for_compute();
  nv.driver.record_mmu_fault(nv.root, nv.compute_channel, fault_at(0xdead0000, NV_PFAULT_ACCESS_TYPE_VIRT_WRITE));
  NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS params{};
  params.count = 77;
  params.mmuFaultInfoList[1] = {0x1111, 5, 9};  // RM fills only the first `count` entries
  nv.rm.control(debugger, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, params);
  EXPECT_EQ(params.count, 1u);
  EXPECT_EQ(params.mmuFaultInfoList[0].faultAddress, 0xdead0000u);
  EXPECT_EQ(params.mmuFaultInfoList[0].faultType, 2u);   // fault_invalidPte
  EXPECT_EQ(params.mmuFaultInfoList[0].accessType, 1u);  // NV_PFAULT_ACCESS_TYPE_VIRT_WRITE
  EXPECT_EQ(params.mmuFaultInfoList[1].faultAddress, 0x1111u);
  EXPECT_EQ(describe_mmu_fault(params.mmuFaultInfoList[0]), "MMU fault at 0xdead0000 (fault_invalidPte, VIRT_WRITE)");
}

TEST_F(NvDebuggerOnMock, ReadingDoesNotClearAndTheNewestThreeComeBackOldestFirst) {
  const NvHandle debugger = debugger_for_compute();
  for (NvU64 i = 1; i <= 5; i++)
    nv.driver.record_mmu_fault(nv.root, nv.compute_channel, fault_at(i << 32, NV_PFAULT_ACCESS_TYPE_VIRT_READ));
  for (int read = 0; read < 2; read++) {
    const auto faults = nv.rm.read_mmu_fault_info(debugger);
    ASSERT_EQ(faults.size(), 3u);  // a ring of NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES, one slot kept empty
    EXPECT_EQ(faults[0].faultAddress, NvU64{3} << 32);
    EXPECT_EQ(faults[1].faultAddress, NvU64{4} << 32);
    EXPECT_EQ(faults[2].faultAddress, NvU64{5} << 32);
  }
}

TEST_F(NvDebuggerOnMock, AFaultOnAnotherChannelIsNotTheComputeObjectsFault) {
  const NvHandle debugger = debugger_for_compute();
  nv.driver.record_mmu_fault(nv.root, nv.copy_channel, fault_at(0x5000, NV_PFAULT_ACCESS_TYPE_VIRT_READ));
  EXPECT_TRUE(nv.rm.read_mmu_fault_info(debugger).empty());
}

TEST_F(NvDebuggerOnMock, AllocationChecksTheParametersAsRmDoes) {
  NV83DE_ALLOC_PARAMETERS params{};
  params.hAppClient = nv.root;
  params.hClass3dObject = nv.compute_object;
  params.hDebuggerClient_Obsolete = nv.root;
  EXPECT_EQ(status_of_alloc(nv, params), NV_ERR_INVALID_ARGUMENT) << "the obsolete field must be 0";
  params.hDebuggerClient_Obsolete = 0;
  params.hAppClient = 0xc1d0ffff;
  EXPECT_EQ(status_of_alloc(nv, params), NV_ERR_INVALID_OBJECT_HANDLE) << "an unknown application client";
  params.hAppClient = nv.root;
  params.hClass3dObject = 0xdead0003;
  EXPECT_EQ(status_of_alloc(nv, params), NV_ERR_INVALID_OBJECT_PARENT) << "an unknown object";
  params.hClass3dObject = nv.copy_object;
  EXPECT_EQ(status_of_alloc(nv, params), NV_ERR_INVALID_OBJECT) << "a copy engine is not a graphics object";
  params.hAppClient = 0;  // the calling client
  params.hClass3dObject = nv.compute_object;
  EXPECT_EQ(status_of_alloc(nv, params), NV_OK);
}

TEST_F(NvDebuggerOnMock, AllocationWithoutParametersIsRefused) {
  try {
    nv.rm.alloc(nv.nvdevice, GT200_DEBUGGER);
    ADD_FAILURE() << "allocated without NV83DE_ALLOC_PARAMETERS";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_INVALID_ARGUMENT) << e.what();
  }
}

TEST_F(NvDebuggerOnMock, ReadMmuFaultInfoOnAChannelIsNotSupportedAndAWrongSizeIsInvalid) {
  NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS params{};
  try {
    nv.rm.control(nv.compute_channel, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, params);
    ADD_FAILURE() << "a channel answered a debugger control";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_NOT_SUPPORTED) << e.what();
  }
  const NvHandle debugger = debugger_for_compute();
  try {
    nv.rm.control(debugger, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, &params, sizeof params - 8);
    ADD_FAILURE() << "a short params struct was accepted";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_INVALID_ARGUMENT) << e.what();
  }
}

TEST_F(NvDebuggerOnMock, ADebuggerWhoseComputeObjectWasFreedAnswersInvalidState) {
  const NvHandle debugger = debugger_for_compute();
  nv.rm.free(nv.compute_channel, nv.channel_group);
  try {
    nv.rm.read_mmu_fault_info(debugger);
    ADD_FAILURE() << "answered for a freed object";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_INVALID_STATE) << e.what();
  }
}

TEST(NvMmuFaultNames, NameRmsFaultTypesAndTheHardwaresAccessTypes) {
  EXPECT_EQ(mmu_fault_type_name(0), "fault_invalidPde");
  EXPECT_EQ(mmu_fault_type_name(2), "fault_invalidPte");
  EXPECT_EQ(mmu_fault_type_name(6), "fault_write");
  EXPECT_EQ(mmu_fault_type_name(15), "fault_atomic");
  EXPECT_EQ(mmu_fault_type_name(16), "fault type 0x10");
  EXPECT_EQ(mmu_access_type_name(0), "VIRT_READ");
  EXPECT_EQ(mmu_access_type_name(2), "VIRT_ATOMIC_STRONG");
  EXPECT_EQ(mmu_access_type_name(0xb), "PHYS_PREFETCH");
  EXPECT_EQ(mmu_access_type_name(5), "access type 0x5");
}

}  // namespace
}  // namespace doorbell::nv_driver_test
