// Host semaphores, compute setup and launch, cache invalidation and copy-engine commands, word for word.
// Header words: clc56f.h NVC56F_DMA_* (SEC_OP 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 in dwords).
// Data words: clc86f.h / clc56f.h (host), clcbc0.h (compute), clc8b5.h / clc7b5.h (copy), as cited per test.
#include "hcq/nv/nv_commands.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hcq/nv/pushbuffer.h"
#include "tests/common/error_of.h"

namespace doorbell::nv {
namespace {

using doorbell::testing::error_of;
using Words = std::vector<uint32_t>;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- Host semaphores ----
// Header 0x20050017: INC_METHOD, 5 words, subchannel 0, NVC86F_SEM_ADDR_LO 0x5c >> 2 = 0x17; then SEM_ADDR_LO
// (OFFSET 31:2, the address's low word), SEM_ADDR_HI (OFFSET 24:0 on C86F), SEM_PAYLOAD_LO, SEM_PAYLOAD_HI,
// SEM_EXECUTE.

TEST(SemaphoreRelease, SixtyFourBitWithTimestampOnHopper) {
  // SEM_EXECUTE: OPERATION 2:0 = RELEASE 1, RELEASE_WFI 20 = EN, PAYLOAD_SIZE 24 = 64BIT, RELEASE_TIMESTAMP 25 = EN
  EXPECT_EQ(encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x7f1234567890, 0x1122334455667788, true),
            (Words{0x20050017, 0x34567890, 0x00007f12, 0x55667788, 0x11223344, 0x03100001}));
}

TEST(SemaphoreRelease, SixtyFourBitWithoutTimestampOnHopper) {
  // as above with RELEASE_TIMESTAMP 25 = DIS
  EXPECT_EQ(encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x7f1234567898, 42, false),
            (Words{0x20050017, 0x34567898, 0x00007f12, 0x0000002a, 0x00000000, 0x01100001}));
}

TEST(SemaphoreRelease, AmpereChannelTakesFortyBitAddresses) {
  EXPECT_EQ(encode_semaphore_release(AMPERE_CHANNEL_GPFIFO_A, 0xab12345670, 1, true),
            (Words{0x20050017, 0x12345670, 0x000000ab, 0x00000001, 0x00000000, 0x03100001}));
  // NVC56F_SEM_ADDR_HI_OFFSET is 7:0
  const std::string message =
      error_of([] { encode_semaphore_release(AMPERE_CHANNEL_GPFIFO_A, 0x10000000000, 1, true); });
  EXPECT_TRUE(contains(message, "NVC56F_SEM_ADDR_HI_OFFSET")) << message;
}

TEST(SemaphoreRelease, HopperAddressBeyondFiftySevenBitsThrows) {
  const std::string message =
      error_of([] { encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, uint64_t{1} << 57, 1, true); });
  EXPECT_TRUE(contains(message, "NVC86F_SEM_ADDR_HI_OFFSET")) << message;
  EXPECT_TRUE(contains(message, "25 bits")) << message;
}

TEST(SemaphoreRelease, TimestampedReleaseNeedsSixteenByteAlignment) {
  const std::string message = error_of([] { encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x1008, 1, true); });
  EXPECT_TRUE(contains(message, "semaphore release address")) << message;
  EXPECT_TRUE(contains(message, "16-byte aligned")) << message;
  EXPECT_NO_THROW(encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x1008, 1, false));
}

TEST(SemaphoreRelease, UnknownChannelClassThrowsNamingIt) {
  const std::string message = error_of([] { encode_semaphore_release(0xc36f, 0x1000, 1, true); });
  EXPECT_TRUE(contains(message, "channel class 0xc36f")) << message;
}

TEST(SemaphoreAcquire, WaitsForSixtyFourBitValueAtLeastTarget) {
  // SEM_EXECUTE: OPERATION 2:0 = ACQ_CIRC_GEQ 3, ACQUIRE_SWITCH_TSG 12 = EN, PAYLOAD_SIZE 24 = 64BIT
  EXPECT_EQ(encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, 0x7f0000001000, 0x0000000500000007),
            (Words{0x20050017, 0x00001000, 0x00007f00, 0x00000007, 0x00000005, 0x01001003}));
}

TEST(SemaphoreAcquire, AddressMustBeEightByteAligned) {
  EXPECT_THROW(encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, 0x1004, 1), std::invalid_argument);
}

TEST(HostMethods, NonStallInterrupt) {
  // INC, 1 word, subchannel 0, NVC56F_NON_STALL_INTERRUPT 0x20 >> 2 = 0x08; HANDLE 0
  EXPECT_EQ(encode_non_stall_interrupt(), (Words{0x20010008, 0x00000000}));
}

TEST(HostMethods, SysMembarThroughMemOps) {
  // INC, 4 words, NVC86F_MEM_OP_A 0x28 >> 2 = 0x0a; MEM_OP_A 0, MEM_OP_B 0, MEM_OP_C MEMBAR_TYPE 2:0 = SYS_MEMBAR 0,
  // MEM_OP_D OPERATION 31:27 = MEMBAR 5 -> 0x28000000
  EXPECT_EQ(encode_host_sys_membar(), (Words{0x2004000a, 0, 0, 0, 0x28000000}));
}

// ---- Compute ----

TEST(ComputeCommands, SetObjectBindsTheClassToItsSubchannel) {
  // INC, 1 word, subchannel 1 (0x2000), SET_OBJECT 0x0; CLASS_ID 15:0
  EXPECT_EQ(encode_set_object(kSubchannelCompute, HOPPER_COMPUTE_A), (Words{0x20012000, 0x0000cbc0}));
  // subchannel 4 (0x8000)
  EXPECT_EQ(encode_set_object(kSubchannelCopy, HOPPER_DMA_COPY_A), (Words{0x20018000, 0x0000c8b5}));
}

TEST(ComputeLaunch, HopperWaySendPcasThenImmediateInvalidateCopySchedule) {
  // INC, 1 word, subchannel 1, SEND_PCAS_A 0x2b4 >> 2 = 0xad; QMD_ADDRESS_SHIFTED8 = 0x1234567800 >> 8;
  // IMMD_DATA_METHOD, SEND_SIGNALING_PCAS2_B 0x2c0 >> 2 = 0xb0, PCAS_ACTION 3:0 = INVALIDATE_COPY_SCHEDULE 3
  EXPECT_EQ(encode_compute_launch(0x1234567800, PcasAction::kInvalidateCopySchedule),
            (Words{0x200120ad, 0x12345678, 0x800320b0}));
}

TEST(ComputeLaunch, AmpereWayPrefetchSchedule) {
  // PCAS_ACTION = PREFETCH_SCHEDULE 9 in the immediate's data field (28:16)
  EXPECT_EQ(encode_compute_launch(0x00ff00, PcasAction::kPrefetchSchedule),
            (Words{0x200120ad, 0x000000ff, 0x800920b0}));
}

TEST(ComputeLaunch, QmdAddressMustBeAlignedAndBelowTwoToTheForty) {
  std::string message = error_of([] { encode_compute_launch(0x1080, PcasAction::kInvalidateCopySchedule); });
  EXPECT_TRUE(contains(message, "QMD address")) << message;
  EXPECT_TRUE(contains(message, "256-byte aligned")) << message;
  message = error_of([] { encode_compute_launch(uint64_t{1} << 40, PcasAction::kInvalidateCopySchedule); });
  EXPECT_TRUE(contains(message, "NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8")) << message;
}

TEST(ComputeCommands, InvalidateShaderCachesIsTinygradsBarrier) {
  // INC, 1 word, subchannel 1, INVALIDATE_SHADER_CACHES_NO_WFI 0x1698 >> 2 = 0x5a6;
  // INSTRUCTION 0, GLOBAL_DATA 4, CONSTANT 12 -> 0x1011
  EXPECT_EQ(encode_invalidate_shader_caches(), (Words{0x200125a6, 0x00001011}));
}

TEST(ComputeCommands, WaitForIdleIsAnImmediateZero) {
  // IMMD_DATA_METHOD (4 << 29), data 0, subchannel 1, WAIT_FOR_IDLE 0x110 >> 2 = 0x44 (clcbc0.h:52)
  EXPECT_EQ(encode_wait_for_idle(), (Words{0x80002044}));
}

TEST(ComputeCommands, InvalidateSkedCachesIsAnImmediateZero) {
  // IMMD_DATA_METHOD, data 0, subchannel 1, INVALIDATE_SKED_CACHES 0x298 >> 2 = 0xa6 (clcbc0.h:386)
  EXPECT_EQ(encode_invalidate_sked_caches(), (Words{0x800020a6}));
}

// The device reserves a command's declared size in its ring and the writer must fill exactly that.
TEST(NvCommands, EachCommandFillsExactlyItsDeclaredSize) {
  EXPECT_EQ(encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x1000, 1, true).size(), kSemaphoreWords);
  EXPECT_EQ(encode_semaphore_acquire_geq(HOPPER_CHANNEL_GPFIFO_A, 0x1000, 1).size(), kSemaphoreWords);
  EXPECT_EQ(encode_non_stall_interrupt().size(), kNonStallInterruptWords);
  EXPECT_EQ(encode_host_sys_membar().size(), kHostSysMembarWords);
  EXPECT_EQ(encode_set_object(1, HOPPER_COMPUTE_A).size(), kSetObjectWords);
  EXPECT_EQ(encode_compute_launch(0x1000, PcasAction::kInvalidateCopySchedule).size(), kComputeLaunchWords);
  EXPECT_EQ(encode_invalidate_shader_caches().size(), kInvalidateShaderCachesWords);
  EXPECT_EQ(encode_wait_for_idle().size(), kWaitForIdleWords);
  EXPECT_EQ(encode_invalidate_sked_caches().size(), kInvalidateSkedCachesWords);
  EXPECT_EQ(encode_set_shader_memory_windows(0x729400000000, 0x729300000000).size(), kShaderMemoryWindowsWords);
  EXPECT_EQ(encode_set_shader_local_memory(HOPPER_COMPUTE_A, {0x1000, 0x8000, 0xff}).size(), kShaderLocalMemoryWords);
  EXPECT_EQ(encode_copy_semaphore_release(HOPPER_DMA_COPY_A, 0x1000, 1, true).size(), kCopySemaphoreWords);
  for (uint64_t bytes : {uint64_t{0}, uint64_t{4}, kMaxCopyChunk, kMaxCopyChunk + 1, 3 * kMaxCopyChunk})
    EXPECT_EQ(encode_copy_linear(HOPPER_DMA_COPY_A, 0x10000000000, 0x20000000000, bytes).size(), copy_linear_words(bytes)) << bytes;
  // The payload words a bound queue patches.
  const Words release = encode_semaphore_release(HOPPER_CHANNEL_GPFIFO_A, 0x1000, 0x1122334455667788, true);
  EXPECT_EQ(release[kSemaphorePayloadWord], 0x55667788u);
  EXPECT_EQ(release[kSemaphorePayloadWord + 1], 0x11223344u);
}

// A bad operand throws before the writer reserves anything, so the writer stays usable.
TEST(NvCommands, ABadOperandLeavesTheWriterWithoutAnOpenReservation) {
  PushBuffer pb;
  EXPECT_THROW(write_semaphore_release(pb, HOPPER_CHANNEL_GPFIFO_A, 0x1008, 1, true), std::invalid_argument);
  EXPECT_THROW(write_compute_launch(pb, 0x1080, PcasAction::kInvalidateCopySchedule), std::invalid_argument);
  write_wait_for_idle(pb);
  EXPECT_EQ(pb.words(), (Words{0x80002044}));
}

TEST(ComputeCommands, SharedAndLocalMemoryWindows) {
  // INC, 2 words, subchannel 1, SET_SHADER_SHARED_MEMORY_WINDOW_A 0x2a0 >> 2 = 0xa8: BASE_ADDRESS_UPPER 16:0, B;
  // INC, 2 words, SET_SHADER_LOCAL_MEMORY_WINDOW_A 0x7b0 >> 2 = 0x1ec: BASE_ADDRESS_UPPER 16:0, B
  EXPECT_EQ(encode_set_shader_memory_windows(0x729400000000, 0x729300000000),
            (Words{0x200220a8, 0x00007294, 0x00000000, 0x200221ec, 0x00007293, 0x00000000}));
  const std::string message = error_of([] { encode_set_shader_memory_windows(uint64_t{1} << 49, 0); });
  EXPECT_TRUE(contains(message, "NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER")) << message;
}

TEST(ComputeCommands, ShaderLocalMemoryOnHopper) {
  const ShaderLocalMemory memory{.address = 0x7fff00200000, .size_per_tpc = 0x100080000, .max_sm_count = 0xff};
  // INC, 2 words, SET_SHADER_LOCAL_MEMORY_A 0x790 >> 2 = 0x1e4: ADDRESS_UPPER 24:0, B: ADDRESS_LOWER;
  // INC, 3 words, SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A 0x2e4 >> 2 = 0xb9: SIZE_UPPER 7:0, B: SIZE_LOWER,
  // C: MAX_SM_COUNT 8:0
  EXPECT_EQ(encode_set_shader_local_memory(HOPPER_COMPUTE_A, memory),
            (Words{0x200221e4, 0x00007fff, 0x00200000, 0x200320b9, 0x00000001, 0x00080000, 0x000000ff}));
}

TEST(ComputeCommands, ShaderLocalMemoryAddressWidthFollowsTheClass) {
  const ShaderLocalMemory high{.address = uint64_t{1} << 50, .size_per_tpc = 0x8000};
  EXPECT_NO_THROW(encode_set_shader_local_memory(HOPPER_COMPUTE_A, high));
  const std::string message = error_of([&] { encode_set_shader_local_memory(AMPERE_COMPUTE_B, high); });
  EXPECT_TRUE(contains(message, "NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER")) << message;
  EXPECT_THROW(encode_set_shader_local_memory(0xc6c0, high), std::invalid_argument);
}

// ---- Copy engine ----
// Headers on subchannel 4 (0x8000): OFFSET_IN_UPPER 0x400 >> 2 = 0x100 with 4 words (OFFSET_IN_UPPER, _LOWER,
// OFFSET_OUT_UPPER, _LOWER) = 0x20048100; LINE_LENGTH_IN 0x418 >> 2 = 0x106 with 2 words (LINE_LENGTH_IN,
// LINE_COUNT) = 0x20028106; LAUNCH_DMA 0x300 >> 2 = 0xc0 with 1 word = 0x200180c0.
// Copy LAUNCH_DMA: DATA_TRANSFER_TYPE 1:0 = NON_PIPELINED 2, FLUSH_ENABLE 2, SRC_MEMORY_LAYOUT 7 = PITCH,
// DST_MEMORY_LAYOUT 8 = PITCH, MULTI_LINE_ENABLE 9 = 0, SRC_TYPE 12 / DST_TYPE 13 = VIRTUAL 0 -> 0x186.

TEST(CopyLinear, OneChunkOnHopper) {
  EXPECT_EQ(encode_copy_linear(HOPPER_DMA_COPY_A, 0x7f0010000000, 0x7e0020000000, 0x1000),
            (Words{0x20048100, 0x00007e00, 0x20000000, 0x00007f00, 0x10000000,  //
                   0x20028106, 0x00001000, 0x00000001,                          //
                   0x200180c0, 0x00000186}));
}

TEST(CopyLinear, CopiesAboveTwoGigabytesSplitIntoChunks) {
  EXPECT_EQ(encode_copy_linear(AMPERE_DMA_COPY_B, 0x200000000, 0x100000000, 0x80000010),
            (Words{0x20048100, 0x00000001, 0x00000000, 0x00000002, 0x00000000,  //
                   0x20028106, 0x80000000, 0x00000001,                          //
                   0x200180c0, 0x00000186,                                      //
                   0x20048100, 0x00000001, 0x80000000, 0x00000002, 0x80000000,  //
                   0x20028106, 0x00000010, 0x00000001,                          //
                   0x200180c0, 0x00000186}));
}

TEST(CopyLinear, ZeroBytesEncodeNothing) {
  EXPECT_TRUE(encode_copy_linear(HOPPER_DMA_COPY_A, 0x1000, 0x2000, 0).empty());
}

TEST(CopyLinear, AmpereCopyTakesFortyNineBitAddresses) {
  // NVC7B5_OFFSET_IN_UPPER_UPPER is 16:0
  const std::string message = error_of([] { encode_copy_linear(AMPERE_DMA_COPY_B, 0x1000, uint64_t{1} << 49, 0x10); });
  EXPECT_TRUE(contains(message, "NVC7B5_OFFSET_IN_UPPER_UPPER")) << message;
  EXPECT_NO_THROW(encode_copy_linear(HOPPER_DMA_COPY_A, 0x1000, uint64_t{1} << 49, 0x10));
}

TEST(CopyLinear, UnknownCopyClassThrowsNamingIt) {
  const std::string message = error_of([] { encode_copy_linear(0xc6b5, 0x1000, 0x2000, 0x10); });
  EXPECT_TRUE(contains(message, "copy class 0xc6b5")) << message;
}

TEST(CopySemaphore, SixtyFourBitReleaseWithTimestamp) {
  // INC, 4 words, SET_SEMAPHORE_A 0x240 >> 2 = 0x90: UPPER 24:0, SET_SEMAPHORE_B LOWER, SET_SEMAPHORE_PAYLOAD,
  // SET_SEMAPHORE_PAYLOAD_UPPER; LAUNCH_DMA: DATA_TRANSFER_TYPE NONE, FLUSH_ENABLE 2, SEMAPHORE_TYPE 4:3 =
  // RELEASE_FOUR_WORD_SEMAPHORE 2, FLUSH_TYPE 25 = SYS, SEMAPHORE_PAYLOAD_SIZE 27 = TWO_WORD -> 0x08000014
  EXPECT_EQ(encode_copy_semaphore_release(HOPPER_DMA_COPY_A, 0x7f0000003010, 0x0000000a0000000b, true),
            (Words{0x20048090, 0x00007f00, 0x00003010, 0x0000000b, 0x0000000a, 0x200180c0, 0x08000014}));
}

TEST(CopySemaphore, SixtyFourBitReleaseWithoutTimestamp) {
  // SEMAPHORE_TYPE 4:3 = RELEASE_ONE_WORD_SEMAPHORE 1 -> 0x0800000c
  EXPECT_EQ(encode_copy_semaphore_release(AMPERE_DMA_COPY_B, 0x3008, 5, false),
            (Words{0x20048090, 0x00000000, 0x00003008, 0x00000005, 0x00000000, 0x200180c0, 0x0800000c}));
}

TEST(CopySemaphore, AddressWidthAndAlignmentAreChecked) {
  std::string message = error_of([] { encode_copy_semaphore_release(AMPERE_DMA_COPY_B, uint64_t{1} << 49, 1, true); });
  EXPECT_TRUE(contains(message, "NVC7B5_SET_SEMAPHORE_A_UPPER")) << message;
  message = error_of([] { encode_copy_semaphore_release(HOPPER_DMA_COPY_A, 0x3008, 1, true); });
  EXPECT_TRUE(contains(message, "copy semaphore address")) << message;
}

TEST(NvCommands, EncodedStreamsDecodeToTheirMethods) {
  const std::vector<DecodedMethod> methods =
      decode_pushbuffer(encode_compute_launch(0x1234567800, PcasAction::kInvalidateCopySchedule));
  ASSERT_EQ(methods.size(), 2u);
  EXPECT_EQ(methods[0], (DecodedMethod{0, kSubchannelCompute, NVCBC0_SEND_PCAS_A, SecOp::kIncMethod, {0x12345678}}));
  EXPECT_EQ(methods[1],
            (DecodedMethod{2, kSubchannelCompute, NVCBC0_SEND_SIGNALING_PCAS2_B, SecOp::kImmdDataMethod, {3}}));
}

}  // namespace
}  // namespace doorbell::nv
