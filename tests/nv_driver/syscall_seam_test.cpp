// The seam itself: real syscalls report -errno, SeamFd owns and names its file, read_text_file reads through it;
// mockgpu::install() makes MOCKGPU=1's "nvidia" seam an emulated driver and GPU (MockNvSeam).
#include "kernel-interface/syscall_seam.h"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "kernel-interface/driver_seams.h"
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

TEST(MockgpuInstall, UnderMockgpuTheNvidiaSeamIsAFreshEmulatedDriverServingItsFiles) {
  mockgpu::install();
  mockgpu::install();  // a second call changes nothing
  ASSERT_EQ(setenv("MOCKGPU", "1", 1), 0);
  std::unique_ptr<SyscallSeam> a = open_driver_seam("nvidia");
  std::unique_ptr<SyscallSeam> b = open_driver_seam("nvidia");
  unsetenv("MOCKGPU");
  ASSERT_NE(dynamic_cast<mockgpu::nv::MockNvSeam*>(a.get()), nullptr);
  EXPECT_NE(a.get(), b.get());
  EXPECT_TRUE(a->emulated());
  EXPECT_NE(read_text_file(*a, "/proc/driver/nvidia/version").find("580.159"), std::string::npos);
  SeamFd ctl(*a, "/dev/nvidiactl", O_RDWR);
  EXPECT_TRUE(ctl.valid());
}

TEST(MockgpuInstall, TheEmulatedDriverSaysItIsOneAndTheKernelsDoesNot) {
  EXPECT_TRUE(mockgpu::nv::MockNvDriver().emulated());
  EXPECT_TRUE(mockgpu::nv::MockNvSeam().emulated());
  EXPECT_FALSE(LinuxSyscalls().emulated());
}

}  // namespace
}  // namespace doorbell::kernel_interface
