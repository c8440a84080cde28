// The Vulkan device's bring-up, signals (timeline semaphores), timestamps, clock, validation layer, pipeline cache on
// disk, the staging path and the second physical device, on the machine's Vulkan device (lavapipe in CI).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compiler/object_cache.h"
#include "compiler/program.h"
#include "hcq/backend.h"
#include "hcq/devices.h"
#include "ir/uop.h"
#include "hcq/hw_queue.h"
#include "hcq/wait_primitives.h"
#include "tests/common/error_of.h"
#include "tests/common/temp_tree.h"
#include "tests/hcq_vk/vk_test_support.h"

namespace doorbell::vk::testing {
namespace {

using doorbell::testing::error_of;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

using VkDeviceTest = VkTest;

TEST_F(VkDeviceTest, OpensTheFirstUsableDeviceWithTheCapsTheRendererNeeds) {
  EXPECT_EQ(dev().name(), "VK");
  EXPECT_FALSE(dev().physical_name().empty());
  const SpirvDeviceCaps& caps = dev().spirv_caps();
  EXPECT_EQ(caps.device_name, dev().physical_name());
  EXPECT_TRUE(caps.int64);
  EXPECT_GE(caps.max_threads_per_block, 128);
  EXPECT_GT(caps.max_shared_bytes, 0);
  EXPECT_GT(caps.subgroup_size, 0u);
  EXPECT_NE(dev().target().name().find("SPIRV"), std::string::npos) << dev().target().name();
}

TEST_F(VkDeviceTest, TheRegistrationTurnsTheValidationLayerOn) {
  const char* v = std::getenv("DOORBELL_VK_VALIDATION");
  if (v == nullptr || std::string(v) != "1") GTEST_SKIP() << "run without DOORBELL_VK_VALIDATION=1 (ctest sets it)";
  std::error_code ec;
  const bool installed = std::filesystem::exists("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", ec);
  EXPECT_EQ(dev().validation(), installed);
}

TEST_F(VkDeviceTest, AnIndexPastTheDevicesNamesHowManyThereAreAndListsThem) {
  const std::string m = error_of<std::runtime_error>([] { VulkanDevice::open(7); });
  EXPECT_NE(m.find("no usable Vulkan device of index 7"), std::string::npos) << m;
  EXPECT_NE(m.find(dev().physical_name()), std::string::npos) << "lists what exists: " << m;
}

TEST_F(VkDeviceTest, SignalWrittenByTheQueueReachesTheHostWithItsTimestamp) {
  Signal& s = dev().new_signal("signalled");
  const ClockCalibration clock = dev().clock_calibration();
  const int64_t before = monotonic_ns();
  HWQueue().signal(s, 7).submit(dev());
  s.wait(7);
  const int64_t after = monotonic_ns();
  EXPECT_EQ(s.value(), 7u);
  ASSERT_GT(s.timestamp(), 0u);
  EXPECT_GE(dev().host_time_ns(s.timestamp()), before - clock.uncertainty_ns - 1000);
  EXPECT_LE(dev().host_time_ns(s.timestamp()), after + clock.uncertainty_ns + 1000);
}

TEST_F(VkDeviceTest, ASignalStartsAtItsInitialValue) {
  Signal& s = dev().new_signal("initial", 5);
  EXPECT_EQ(s.value(), 5u);
  HWQueue().signal(s, 6).submit(dev());
  s.wait(6);
}

TEST_F(VkDeviceTest, AQueueWaitsUntilTheHostSetsTheSignalLater) {
  Signal& gate = dev().new_signal("gate");
  Signal& done = dev().new_signal("done");
  HWQueue().wait(gate, 1).signal(done, 1).submit(dev());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done.value(), 0u) << "the wait let the signal through before the host set the gate";
  gate.set(1);
  done.wait(1);
}

TEST_F(VkDeviceTest, WaitsCompareAllSixtyFourBitsAcrossTwoToThe31And32And40) {
  Signal& gate = dev().new_signal("wide gate");
  Signal& done = dev().new_signal("wide done");
  for (uint64_t v : {(uint64_t{1} << 31) - 1, uint64_t{1} << 31, (uint64_t{1} << 32) + 5, (uint64_t{1} << 40) + 1}) {
    HWQueue().wait(gate, v).signal(done, v).submit(dev());
    gate.set(v - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_LT(done.value(), v) << "a wait for " << v << " passed at " << v - 1;
    gate.set(v);
    done.wait(v);
  }
}

TEST_F(VkDeviceTest, AWaitThatNeverPassesTimesOutNamingTheDeviceAndSignal) {
  Signal& s = dev().new_signal("never");
  const std::string m = error_of<std::runtime_error>([&] { s.wait(1, std::chrono::milliseconds(50)); });
  EXPECT_NE(m.find("VK"), std::string::npos) << m;
  EXPECT_NE(m.find("'never'"), std::string::npos) << m;
}

TEST_F(VkDeviceTest, SynchronizeTimesOutNamingWhatTheQueueWaitsFor) {
  Signal& gate = dev().new_signal("held gate");
  HWQueue q;
  q.wait(gate, 1);
  dev().submit_on_timeline(q);
  const std::string m = error_of<std::runtime_error>([&] { dev().synchronize(std::chrono::milliseconds(50)); });
  EXPECT_NE(m.find("waits for signal 'held gate' of VK to reach 1 (value 0)"), std::string::npos) << m;
  gate.set(1);
  dev().synchronize();
}

// Vulkan writes timestamps only into query pools: the contract's "timestamp at +8 of the signal's memory" does not
// hold. The memory at +8 stays as set() left it; Signal::timestamp() reads the query (SignalPlacement::read_timestamp).
TEST_F(VkDeviceTest, TheTimestampIsInAQueryPoolNotAtPlusEightOfTheSignalsMemory) {
  Signal& s = dev().new_signal("stamped");
  HWQueue().timestamp(s).signal(s, 1).submit(dev());
  s.wait(1);
  EXPECT_GT(s.timestamp(), 0u) << "the query's time";
  EXPECT_EQ(s.memory().timestamp.load(), 0u) << "nothing wrote +8";
  EXPECT_EQ(s.device_address(), reinterpret_cast<uint64_t>(dev().semaphore_of(s))) << "a signal's 'address' is its semaphore";
}

TEST_F(VkDeviceTest, ATimestampCommandStampsBetweenItsNeighbours) {
  Signal& a = dev().new_signal("a");
  Signal& t = dev().new_signal("t");
  Signal& b = dev().new_signal("b");
  HWQueue().signal(a, 1).timestamp(t).signal(b, 1).submit(dev());
  b.wait(1);
  EXPECT_LE(a.timestamp(), t.timestamp());
  EXPECT_LE(t.timestamp(), b.timestamp());
}

// VUID-VkSubmitInfo-pSignalSemaphores-03242: a timeline signal must raise the value. An equal value is skipped
// silently (the signal already holds it); a smaller one is skipped and reported.
TEST_F(VkDeviceTest, AQueueSignalNotAboveTheScheduledValueIsSkippedAndASmallerOneReported) {
  Signal& s = dev().new_signal("monotonic");
  HWQueue().signal(s, 3).signal(s, 3).submit(dev());
  s.wait(3);
  dev().synchronize();  // nothing reported
  HWQueue().signal(s, 2).submit(dev());
  const std::string m = error_of<std::runtime_error>([&] { dev().synchronize(); });
  EXPECT_NE(m.find("'monotonic' to 2 was skipped"), std::string::npos) << m;
  EXPECT_NE(m.find("03242"), std::string::npos) << m;
  EXPECT_EQ(s.value(), 3u);
}

// VUID-VkSemaphoreSignalInfo-value-03259: the host may not signal at or above a queue signal still pending.
TEST_F(VkDeviceTest, AHostSetAboveAPendingQueueSignalIsRefused) {
  Signal& gate = dev().new_signal("pending gate");
  Signal& s = dev().new_signal("pending");
  HWQueue().wait(gate, 1).signal(s, 5).submit(dev());
  const std::string m = error_of<std::invalid_argument>([&] { s.set(7); });
  EXPECT_NE(m.find("03259"), std::string::npos) << m;
  s.set(4);  // below the pending 5: allowed
  gate.set(1);
  s.wait(5);
}

TEST_F(VkDeviceTest, HostTimeOfAStampComesFromTheCalibration) {
  const ClockCalibration c = dev().clock_calibration();
  EXPECT_GE(c.samples, 1);
  EXPECT_GE(c.uncertainty_ns, 0);
  EXPECT_EQ(dev().host_time_ns(1'000'000'000), c.host_ns(1'000'000'000));
}

TEST_F(VkDeviceTest, BracketsAgreeWithTheCalibratedTimestampsWithinTheirBounds) {
  const ClockCalibration brackets = dev().calibrate_by_brackets(5);
  EXPECT_EQ(brackets.samples, 5);
  if (!dev().calibrated_by_extension()) GTEST_SKIP() << "no VK_EXT_calibrated_timestamps to compare with";
  const ClockCalibration ext = dev().clock_calibration();
  EXPECT_LE(std::abs(brackets.offset_ns - ext.offset_ns), brackets.uncertainty_ns + ext.uncertainty_ns + 1000)
      << "brackets " << brackets.offset_ns << " +- " << brackets.uncertainty_ns << ", extension " << ext.offset_ns << " +- " << ext.uncertainty_ns;
}

TEST_F(VkDeviceTest, DeviceProgramLoadsAProgramWhoseBinaryIsSpirvWords) {
  const std::vector<uint32_t> words = kernel_words("add_one");
  auto info = std::make_shared<ProgramInfo>();
  info->name = "add_one";
  info->local_size = {64, 1, 1};
  info->global_size = {4, 1, 1};
  info->buffers = 1;
  std::string bytes(words.size() * 4, '\0');
  std::memcpy(bytes.data(), words.data(), bytes.size());
  const UOp program = UOp::make(Ops::PROGRAM, dtypes::void_,
                                {UOp::make(Ops::SINK, dtypes::void_, {}), UOp::make(Ops::LINEAR, dtypes::void_, {}),
                                 UOp::make(Ops::SOURCE, dtypes::void_, {}, std::string("; hand-written add_one")),
                                 UOp::make(Ops::BINARY, dtypes::uint8, {}, std::move(bytes))},
                                ProgramInfoArg{info});
  const LoadedProgram& loaded = dev().program(program);
  EXPECT_EQ(loaded.name(), "add_one");
  EXPECT_EQ(&dev().program(program), &loaded) << "cached";
  Device::Storage y = buffer(256 * 4);
  const std::vector<uint64_t> args{y.address};
  Signal& done = dev().new_signal("program done");
  HWQueue().exec(loaded, args, {4, 1, 1}, {64, 1, 1}).signal(done, 1).submit(dev());
  done.wait(1);
  std::vector<float> out(256);
  dev().copy_out(out.data(), y, 0, out.size() * 4);
  EXPECT_EQ(out, std::vector<float>(256, 1.f));
}

TEST_F(VkDeviceTest, ABinaryThatIsNotSpirvIsRefusedNamingTheKernel) {
  ProgramInfo info;
  info.name = "not_spirv";
  const std::vector<uint32_t> words{0x464c457f, 0, 0, 0, 0};  // an ELF's first word
  const std::string m = error_of<std::invalid_argument>([&] { dev().load_spirv(words, info); });
  EXPECT_NE(m.find("kernel not_spirv is not a SPIR-V module"), std::string::npos) << m;
}

TEST_F(VkDeviceTest, TheBackendRegistersVkWithTheSpirvRenderer) {
  const DeviceName n = parse_device_name("vk:1");
  EXPECT_EQ(n.prefix, "VK");
  EXPECT_EQ(n.index, 1);
  EXPECT_EQ(n.renderer, "SPIRV");
  EXPECT_EQ(n.canonical(), "VK:1");
  Device& d = device("VK");
  EXPECT_EQ(d.name(), "VK");
}

TEST(VkValidation, AnInvalidHostSignalIsCaughtAndFailsTheNextSynchronize) {
  std::string why;
  if (shared_device(&why) == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  ScopedEnv validation("DOORBELL_VK_VALIDATION", "1");
  std::unique_ptr<VulkanDevice> d = VulkanDevice::open(0);
  if (!d->validation()) GTEST_SKIP() << "VK_LAYER_KHRONOS_validation is not installed";
  Signal& s = d->new_signal("raw");
  // vkSignalSemaphore to the value it already has: VUID-VkSemaphoreSignalInfo-value-03258 (must be greater). Harmless
  // to the driver (the value does not change), so it makes no undefined behaviour.
  VkSemaphoreSignalInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  info.semaphore = d->semaphore_of(s);
  info.value = 0;
  vkSignalSemaphore(d->vk_device(), &info);
  ASSERT_FALSE(d->validation_messages().empty());
  EXPECT_NE(d->validation_messages().front().find("03258"), std::string::npos) << d->validation_messages().front();
  const std::string m = error_of<std::runtime_error>([&] { d->synchronize(); });
  EXPECT_NE(m.find("validation error"), std::string::npos) << m;
  d->synchronize();  // reported once; the device stays usable
}

TEST(VkPipelineCache, TheFileIsWrittenAtDestructionAndASecondDeviceStartsWithIt) {
  std::string why;
  if (shared_device(&why) == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  doorbell::testing::TempTree dir;
  const std::optional<std::string> previous = object_cache_dir();
  set_object_cache_dir(dir.root().string());
  std::string path;
  {
    std::unique_ptr<VulkanDevice> a = VulkanDevice::open(0);
    ASSERT_TRUE(a->pipeline_cache_file().has_value());
    path = *a->pipeline_cache_file();
    EXPECT_NE(path.find("vk-pipeline-cache-"), std::string::npos) << path;
    EXPECT_EQ(a->pipeline_cache_loaded_bytes(), 0u) << "a fresh directory";
    add_one(*a);
  }
  std::error_code ec;
  ASSERT_TRUE(std::filesystem::exists(path, ec)) << path;
  const auto size = std::filesystem::file_size(path, ec);
  EXPECT_GE(size, 32u) << "at least VkPipelineCacheHeaderVersionOne";
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  {
    std::unique_ptr<VulkanDevice> b = VulkanDevice::open(0);
    EXPECT_EQ(b->pipeline_cache_loaded_bytes(), size) << "the second device started with the first one's data";
  }
  // A file for another device (its header does not match) is not handed to the driver.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << std::string(64, 'x');
  {
    std::unique_ptr<VulkanDevice> c = VulkanDevice::open(0);
    EXPECT_EQ(c->pipeline_cache_loaded_bytes(), 0u);
  }
  set_object_cache_dir(previous);
}

TEST(VkSecondDevice, VkOneIsTheSecondPhysicalDeviceWhenTheLoaderListsTwo) {
  std::string why;
  if (shared_device(&why) == nullptr) GTEST_SKIP() << "no Vulkan device: " << why;
  const std::string icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
  std::error_code ec;
  if (!std::filesystem::exists(icd, ec)) GTEST_SKIP() << icd << " (lavapipe) is not installed";
  doorbell::testing::TempTree dir;
  std::filesystem::copy_file(icd, dir.root() / "a.json");
  std::filesystem::copy_file(icd, dir.root() / "b.json");
  {
    // The loader reads VK_ICD_FILENAMES when an instance is made: lavapipe twice is two physical devices.
    ScopedEnv icds("VK_ICD_FILENAMES", (dir.root() / "a.json").string() + ":" + (dir.root() / "b.json").string());
    std::unique_ptr<VulkanDevice> second = VulkanDevice::open(1);
    EXPECT_EQ(second->name(), "VK:1");
    Signal& s = second->new_signal("on the second");
    HWQueue().signal(s, 1).submit(*second);
    s.wait(1);
    const std::string m = error_of<std::runtime_error>([] { VulkanDevice::open(2); });
    EXPECT_NE(m.find("2 usable"), std::string::npos) << m;
  }
  {
    ScopedEnv icds("VK_ICD_FILENAMES", icd);
    const std::string m = error_of<std::runtime_error>([] { VulkanDevice::open(1); });
    EXPECT_NE(m.find("no usable Vulkan device of index 1: 1 usable"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace doorbell::vk::testing
