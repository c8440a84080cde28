// The seam itself: real syscalls report -errno, SeamFd owns and names its file, read_text_file reads through it;
// mockgpu::install() makes MOCKGPU=1's "nvidia" seam an emulated machine (MockNvSeam) of MOCKGPU_NV_GPUS GPUs.
#include "kernel-interface/syscall_seam.h"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "kernel-interface/driver_seams.h"
#include "kernel-interface/nvidia/nv_rm.h"
#include "mockgpu/install.h"
#include "mockgpu/nv/mock_nv_driver.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::kernel_interface {
namespace {

TEST(LinuxSyscalls, OpenOfAMissingFileReturnsMinusEnoent) {
  LinuxSyscalls linux_calls;
  EXPECT_EQ(linux_calls.open("/nonexistent/doorbell/file", O_RDONLY), -ENOENT);
}

TEST(LinuxSyscalls, ReadTextFileReadsARealFile) {
  LinuxSyscalls linux_calls;
  const std::string text = read_text_file(linux_calls, "/proc/self/stat");
  EXPECT_FALSE(text.empty());
}

TEST(SeamFd, FailedOpenThrowsNamingThePathAndErrno) {
  mockgpu::nv::MockNvDriver driver;
  try {
    SeamFd fd(driver, "/dev/nvidia7", O_RDWR);
    ADD_FAILURE() << "opened a GPU the mock does not have";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("/dev/nvidia7"), std::string::npos) << message;
    EXPECT_NE(message.find("errno 2"), std::string::npos) << message;
  }
}

TEST(SeamFd, ClosesThroughTheSeamWhenDestroyed) {
  mockgpu::nv::MockNvDriver driver;
  int raw = -1;
  {
    SeamFd fd(driver, "/dev/nvidiactl", O_RDWR);
    raw = fd.get();
    EXPECT_GE(raw, 0x40000000);
  }
  EXPECT_EQ(driver.close(raw), -EBADF);
}

// The devices open at once (NV, NV:1, ...) are GPUs of one emulated machine, as of one driver on hardware.
TEST(MockgpuInstall, UnderMockgpuTheNvidiaSeamsOpenAtOnceShareOneEmulatedMachineServingItsFiles) {
  mockgpu::install();
  mockgpu::install();  // a second call changes nothing
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  std::unique_ptr<SyscallSeam> a = open_driver_seam("nvidia");
  std::unique_ptr<SyscallSeam> b = open_driver_seam("nvidia");
  unsetenv("MOCKGPU");
  auto* shared_a = dynamic_cast<mockgpu::nv::SharedMockNvSeam*>(a.get());
  auto* shared_b = dynamic_cast<mockgpu::nv::SharedMockNvSeam*>(b.get());
  ASSERT_NE(shared_a, nullptr);
  ASSERT_NE(shared_b, nullptr);
  EXPECT_EQ(&shared_a->machine(), &shared_b->machine());
  EXPECT_EQ(shared_a->machine().driver().gpu_count(), 1) << "MOCKGPU_NV_GPUS unset: one GPU";
  EXPECT_TRUE(a->emulated());
  EXPECT_NE(read_text_file(*a, "/proc/driver/nvidia/version").find("580.159"), std::string::npos);
  SeamFd ctl(*a, "/dev/nvidiactl", O_RDWR);
  EXPECT_TRUE(ctl.valid());
}

// MOCKGPU_NV_GPUS=2: the emulated driver lists two GPUs (NV_ESC_CARD_INFO), each with its PCI bus, gpu_id and node.
TEST(MockgpuInstall, MockgpuNvGpusSetsHowManyGpusTheEmulatedDriverLists) {
  mockgpu::install();
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  ASSERT_EQ(setenv("MOCKGPU_NV_GPUS", "2", 1), 0);
  std::unique_ptr<SyscallSeam> seam = open_driver_seam("nvidia");
  unsetenv("MOCKGPU_NV_GPUS");
  unsetenv("MOCKGPU");
  SeamFd ctl(*seam, "/dev/nvidiactl", O_RDWR);
  nvidia::NvRm rm(*seam, ctl.get());
  const auto cards = rm.card_info();
  ASSERT_EQ(cards.size(), 2u);
  for (unsigned i = 0; i < 2; ++i) {
    EXPECT_EQ(cards[i].minor_number, i);
    EXPECT_EQ(cards[i].pci_info.bus, 1 + i);
    EXPECT_EQ(cards[i].gpu_id, (1 + i) << 8);
  }
  SeamFd second(*seam, "/dev/nvidia1", O_RDWR);
  EXPECT_TRUE(second.valid());
  EXPECT_THROW(SeamFd(*seam, "/dev/nvidia2", O_RDWR), std::runtime_error) << "a third GPU's node";
}

TEST(MockgpuInstall, AMockgpuNvGpusThatIsNotACountIsAnErrorNamingTheVariable) {
  mockgpu::install();
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  ASSERT_EQ(setenv("MOCKGPU_NV_GPUS", "two", 1), 0);
  try {
    open_driver_seam("nvidia");
    ADD_FAILURE() << "MOCKGPU_NV_GPUS=two was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MOCKGPU_NV_GPUS=two"), std::string::npos) << e.what();
  }
  unsetenv("MOCKGPU_NV_GPUS");
  unsetenv("MOCKGPU");
}

TEST(MockgpuInstall, TheEmulatedDriverSaysItIsOneAndTheKernelsDoesNot) {
  EXPECT_TRUE(mockgpu::nv::MockNvDriver().emulated());
  EXPECT_TRUE(mockgpu::nv::MockNvSeam().emulated());
  EXPECT_FALSE(LinuxSyscalls().emulated());
}

}  // namespace
}  // namespace doorbell::kernel_interface
