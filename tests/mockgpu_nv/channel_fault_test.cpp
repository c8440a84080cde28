// Channel faults: each bad command stops its channel for good with a message naming what was wrong and where, is
// reported through faults() and the callback, and leaves the other channel running. The host sees each in the error
// notifier as RM writes it; a kernel's access to an unmapped address (an SM's MMU fault) also through the compute
// object's debugger (NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO), naming the address.
#include "compute_fixture.h"

namespace doorbell::mockgpu_nv_test {
namespace {

using nv::HOPPER_CHANNEL_GPFIFO_A;
using nv::HOPPER_DMA_COPY_A;

class MockNvGpuFaultTest : public MockNvGpuComputeTest {
 protected:
  // The fault of the compute channel, after which the copy channel must still work and the compute channel must run
  // nothing more.
  std::string compute_fault() {
    const std::string message = wait_fault();
    EXPECT_TRUE(gpu_->channel_faulted(compute_.token));
    EXPECT_FALSE(gpu_->channel_faulted(copy_.token));
    const Block sem = take(16), late = take(16);
    submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A),
                        nv::encode_copy_semaphore_release(HOPPER_DMA_COPY_A, sem.va, 5, true)}));
    EXPECT_TRUE(wait_value(sem.cpu, 5)) << "the copy channel stopped too";
    submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, late.va, 1, false));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(load64(late.cpu), 0u) << "a faulted channel ran more work";
    EXPECT_EQ(gpu_->faults().size(), 1u);
    EXPECT_EQ(callback_messages(), gpu_->faults());
    EXPECT_EQ(error_notification().status, 0xffff) << "RM's notifier was not written";
    return message;
  }
};

TEST_F(MockNvGpuFaultTest, UnknownComputeMethodNamesTheMethodClassAndPushbufferAddress) {
  nv::PushBuffer pb;
  pb.inc(nv::kSubchannelCompute, 0x1234, {7});
  const uint64_t pb_va =
      submit(compute_, join({nv::encode_set_object(nv::kSubchannelCompute, nv::HOPPER_COMPUTE_A), pb.take()}));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("method 0x1234"), std::string::npos) << message;
  EXPECT_NE(message.find("HOPPER_COMPUTE_A"), std::string::npos) << message;
  EXPECT_NE(message.find("subchannel 1"), std::string::npos) << message;
  EXPECT_NE(message.find(hex(pb_va + 8)), std::string::npos) << message;  // the header after SET_OBJECT's 2 words
}

TEST_F(MockNvGpuFaultTest, MethodOnAnUnboundSubchannelFaults) {
  nv::PushBuffer pb;
  pb.inc(2, 0x2b4, {1});
  submit(compute_, pb.take());
  const std::string message = compute_fault();
  EXPECT_NE(message.find("subchannel 2 has no class bound"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, SetObjectOfAClassWithoutAnObjectOnTheChannelFaults) {
  submit(compute_, nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("HOPPER_DMA_COPY_A (0xc8b5) has no object on this channel"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, UnmappedSemaphoreAddressNamesTheAddress) {
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x7000000000ull, 1, true));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("0x7000000000"), std::string::npos) << message;
  EXPECT_NE(message.find("NVC86F_SEM_EXECUTE"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, MisalignedSemaphoreReleaseNamesTheAddressAndAlignment) {
  const Block sem = take(32);
  nv::PushBuffer pb;  // a 64-bit release at +4: the encoder refuses it, so the words are written by hand
  pb.inc(nv::kSubchannelHost, nv::NVC86F_SEM_ADDR_LO,
         {static_cast<uint32_t>(sem.va + 4), static_cast<uint32_t>((sem.va + 4) >> 32), 1, 0, 0x01000001});
  submit(compute_, pb.take());
  const std::string message = compute_fault();
  EXPECT_NE(message.find(hex(sem.va + 4) + " is not 8-byte aligned"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, QmdWithTheWrongMajorVersionNamesTheVersionAndAddress) {
  const Block counter = take(16);
  KernelLaunch k{kIncrementPtx, {counter.va}};
  const auto v03 = nv::encode_qmd_v03(qmd_launch(k, place_program(k.ptx)));
  const Block qmd = take(nv::kQmdV04Words * 4, 256);
  std::memcpy(qmd.cpu, v03.data(), v03.size() * 4);
  submit(compute_, launch_words(qmd.va));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("QMD V04_00 at " + hex(qmd.va)), std::string::npos) << message;
  EXPECT_NE(message.find("QMD_MAJOR_VERSION is 3"), std::string::npos) << message;
  EXPECT_EQ(load64(counter.cpu), 0u);
}

// SEND_PCAS_A carries address >> 8, so a QMD placed off a 256-byte boundary cannot be named: the engine reads the
// QMD at the truncated address, finds no valid version there and faults naming that address.
TEST_F(MockNvGpuFaultTest, QmdOffA256ByteBoundaryIsReadAtTheTruncatedAddressAndFaults) {
  const Block counter = take(16);
  KernelLaunch k{kIncrementPtx, {counter.va}};
  const auto words = nv::encode_qmd_v04(qmd_launch(k, place_program(k.ptx)));
  const Block area = take(1024, 256);
  std::memcpy(area.cpu + 0x80, words.data(), words.size() * 4);
  EXPECT_THROW(nv::encode_compute_launch(area.va + 0x80, nv::PcasAction::kInvalidateCopySchedule),
               std::invalid_argument);
  nv::PushBuffer pb;
  pb.inc(nv::kSubchannelCompute, nv::NVCBC0_SEND_PCAS_A, {static_cast<uint32_t>((area.va + 0x80) >> 8)});
  pb.immediate(nv::kSubchannelCompute, nv::NVCBC0_SEND_SIGNALING_PCAS2_B, 3);
  submit(compute_, join({nv::encode_set_object(nv::kSubchannelCompute, nv::HOPPER_COMPUTE_A), pb.take()}));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("QMD V04_00 at " + hex(area.va) + ": NVCBC0_QMDV04_00_QMD_MAJOR_VERSION is 0"),
            std::string::npos)
      << message;
  EXPECT_EQ(load64(counter.cpu), 0u);
}

TEST_F(MockNvGpuFaultTest, PtxFaultInsideAKernelNamesTheKernelAndTheUnmappedAddress) {
  const Block out = take(64 * 4);
  KernelLaunch k{kScale3Ptx, {out.va, 0x7100000000ull}, {1, 1, 1}, {64, 1, 1}};
  const uint64_t qmd = place_launch(k);
  submit(compute_, launch_words(qmd));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("kernel scale3"), std::string::npos) << message;
  EXPECT_NE(message.find("0x7100000000"), std::string::npos) << message;
  EXPECT_NE(message.find(hex(qmd)), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, AKernelsUnmappedLoadReachesTheHostAsAnMmuFaultThroughNotifierAndDebugger) {
  const Block out = take(64 * 4);
  KernelLaunch k{kScale3Ptx, {out.va, 0x7100000000ull}, {1, 1, 1}, {64, 1, 1}};
  submit(compute_, launch_words(place_launch(k)));
  compute_fault();
  EXPECT_EQ(error_notification().info32, 31u) << "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT";
  const auto info = read_mmu_fault_info();
  ASSERT_EQ(info.count, 1u);
  EXPECT_EQ(info.mmuFaultInfoList[0].faultAddress, 0x7100000000ull) << "thread 0's load of in[0]";
  EXPECT_EQ(info.mmuFaultInfoList[0].faultType, kernel_interface::nvidia::kFaultInvalidPte);
  EXPECT_EQ(info.mmuFaultInfoList[0].accessType, kernel_interface::nvidia::NV_PFAULT_ACCESS_TYPE_VIRT_READ);
}

TEST_F(MockNvGpuFaultTest, AKernelsUnmappedStoreIsReportedAsAVirtualWriteAtTheStoredAddress) {
  const Block in = take(64 * 4);
  KernelLaunch k{kScale3Ptx, {0x7300000000ull, in.va}, {1, 1, 1}, {64, 1, 1}};
  submit(compute_, launch_words(place_launch(k)));
  compute_fault();
  EXPECT_EQ(error_notification().info32, 31u);
  const auto info = read_mmu_fault_info();
  ASSERT_EQ(info.count, 1u);
  EXPECT_EQ(info.mmuFaultInfoList[0].faultAddress, 0x7300000000ull);
  EXPECT_EQ(info.mmuFaultInfoList[0].faultType, kernel_interface::nvidia::kFaultInvalidPte);
  EXPECT_EQ(info.mmuFaultInfoList[0].accessType, kernel_interface::nvidia::NV_PFAULT_ACCESS_TYPE_VIRT_WRITE);
}

// RM records only a graphics engine's GPC faults for the debugger (kern_gmmu_gv100.c calls kgrctxRecordMmuFault for
// RM_ENGINE_TYPE_IS_GR && bGpc): the host's and the copy engine's faults reach the notifier alone.
TEST_F(MockNvGpuFaultTest, FaultsOutsideTheSmsReachTheNotifierButNotTheDebugger) {
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x7000000000ull, 1, true));
  compute_fault();
  EXPECT_EQ(error_notification().info32, 13u);
  EXPECT_EQ(read_mmu_fault_info().count, 0u);
}

// Each channel has its own error notifier (hObjectError): a copy-engine fault is written into the copy channel's
// alone, and the compute channel's stays clean.
TEST_F(MockNvGpuFaultTest, ACopyChannelFaultIsWrittenIntoTheCopyChannelsNotifierOnly) {
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A),
                      nv::encode_copy_semaphore_release(HOPPER_DMA_COPY_A, 0x7000000000ull, 1, true)}));
  wait_fault();
  EXPECT_TRUE(gpu_->channel_faulted(copy_.token));
  EXPECT_FALSE(gpu_->channel_faulted(compute_.token));
  EXPECT_EQ(error_notification(&bring_.copy_notifier).status, 0xffff) << "the copy channel's notifier";
  EXPECT_EQ(error_notification(&bring_.copy_notifier).info32, 13u);
  const std::vector<std::uint8_t> clean(16, 0);
  EXPECT_EQ(std::memcmp(bring_.compute_notifier.cpu, clean.data(), clean.size()), 0) << "the compute channel's notifier";
}

// RM's channel holds its error notifier's memory: freeing that memory object first leaves the bytes to the channel,
// so a later fault writes the notification into them (the host's own mapping still shows it), not into freed memory.
TEST_F(MockNvGpuFaultTest, AFaultAfterTheNotifierMemoryWasFreedWritesIntoTheBytesTheChannelKept) {
  bring_.rm.free(bring_.compute_notifier.memory, bring_.nvdevice);
  EXPECT_FALSE(bring_.driver.rm_has_object(bring_.root, bring_.compute_notifier.memory));
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x7000000000ull, 1, true));
  compute_fault();
  EXPECT_EQ(error_notification().info32, 13u);
}

TEST_F(MockNvGpuFaultTest, SharedMemorySizeBelowTheKernelsStaticSharedArraysFaultsNamingBoth) {
  const std::string ptx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry uses_shared(
	.param .u64 p
)
{
	.shared .align 4 .b8 buf[1024];
	ret;
}
)";
  KernelLaunch k{ptx, {0}};
  k.shared_memory_size = 512;
  submit(compute_, launch_words(place_launch(k)));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("SHARED_MEMORY_SIZE is 512 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("1024 bytes of static shared memory"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, ConstantBufferTooSmallForTheParametersFaults) {
  const Block counter = take(16);
  KernelLaunch k{kIncrementPtx, {counter.va}};
  nv::QmdLaunch q = qmd_launch(k, place_program(k.ptx));
  q.constant_buffer0_size = 0x200;
  submit(compute_, launch_words(place_qmd(nv::encode_qmd_v04(q))));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("constant buffer 0"), std::string::npos) << message;
  EXPECT_NE(message.find("is 512 bytes; the parameters need 536"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, ProgramThatIsNotPtxFaultsNamingTheProgramAddress) {
  KernelLaunch k{"this is not ptx", {0}};
  const uint64_t program = place_program(k.ptx);
  submit(compute_, launch_words(place_qmd(nv::encode_qmd_v04(qmd_launch(k, program)))));
  const std::string message = compute_fault();
  EXPECT_NE(message.find("the program at " + hex(program) + " is not PTX"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, ReservedSecOpNamesTheWordAndItsAddress) {
  const std::vector<uint32_t> words{0xc0000000u | (1u << 16)};  // SEC_OP 6 (RESERVED6)
  const uint64_t pb_va = submit(compute_, words);
  const std::string message = compute_fault();
  EXPECT_NE(message.find("pushbuffer word 0xc0010000 at " + hex(pb_va)), std::string::npos) << message;
  EXPECT_NE(message.find("NVC56F_DMA_SEC_OP 6"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, ControlGpEntryFaults) {
  submit_entry(compute_, uint64_t{4} << 32);  // LENGTH 0, OPCODE SET_PB_SEGMENT_EXTENDED_BASE
  const std::string message = compute_fault();
  EXPECT_NE(message.find("GP entry 0"), std::string::npos) << message;
  EXPECT_NE(message.find("control entry"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, GpPutOutsideTheRingFaultsNamingBothNumbers) {
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(compute_.userd + nv::kUserdGpPutOffset))
      .store(nv_driver_test::kRingEntries + 5);
  std::atomic_ref<uint32_t>(bring_.gpu_mmio[nv::NVC361_NOTIFY_CHANNEL_PENDING / 4]).store(compute_.token);
  const std::string message = wait_fault();
  EXPECT_NE(message.find("USERD GPPut is " + std::to_string(nv_driver_test::kRingEntries + 5) +
                         ", outside the ring of " + std::to_string(nv_driver_test::kRingEntries)),
            std::string::npos)
      << message;
}

TEST_F(MockNvGpuFaultTest, AFaultCallbackThatThrowsDoesNotStopTheGpu) {
  gpu_->set_fault_callback([](const std::string&) { throw std::runtime_error("callback failed"); });
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x7000000000ull, 1, false));
  wait_fault();
  const Block sem = take(16);
  submit(copy_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, 2, false));
  EXPECT_TRUE(wait_value(sem.cpu, 2));
  EXPECT_EQ(gpu_->faults().size(), 1u);
}

TEST_F(MockNvGpuFaultTest, MethodDataRunningPastTheGpEntryFaults) {
  const std::vector<uint32_t> words{0x20000000u | (3u << 16) | (0x5c >> 2), 4};  // INC SEM_ADDR_LO count 3
  submit(compute_, words);
  const std::string message = compute_fault();
  EXPECT_NE(message.find("announces 3 data words"), std::string::npos) << message;
}

TEST_F(MockNvGpuFaultTest, CopyOfMultipleLinesIsNotEmulatedAndNamesTheField) {
  std::vector<uint32_t> copy = nv::encode_copy_linear(HOPPER_DMA_COPY_A, kArenaVa, kArenaVa + 0x1000, 64);
  copy.back() |= 1u << 9;  // MULTI_LINE_ENABLE
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A), copy}));
  const std::string message = wait_fault();
  EXPECT_TRUE(gpu_->channel_faulted(copy_.token));
  EXPECT_NE(message.find("NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE is 1"), std::string::npos) << message;
  const Block sem = take(16);
  submit(compute_, nv::encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, sem.va, 4, true));
  EXPECT_TRUE(wait_value(sem.cpu, 4)) << "the compute channel stopped too";
}

TEST_F(MockNvGpuFaultTest, CopyFromUnmappedMemoryNamesTheSource) {
  submit(copy_, join({nv::encode_set_object(nv::kSubchannelCopy, HOPPER_DMA_COPY_A),
                      nv::encode_copy_linear(HOPPER_DMA_COPY_A, kArenaVa, 0x7200000000ull, 64)}));
  const std::string message = wait_fault();
  EXPECT_NE(message.find("copy source at 0x7200000000"), std::string::npos) << message;
  EXPECT_EQ(error_notification(&bring_.copy_notifier).status, 0xffff);
  EXPECT_EQ(read_mmu_fault_info().count, 0u) << "a copy engine's fault is not the compute context's";
}

}  // namespace
}  // namespace doorbell::mockgpu_nv_test
