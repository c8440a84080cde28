// The driver-version gate: only major 580, whose struct layouts kernel-interface/nvidia encodes, is accepted.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

std::string refusal_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected the driver version to be refused";
  return "";
}

TEST(NvDriverVersion, ProcVersionFileOfTheMockReads580_159) {
  MockNvDriver driver;
  EXPECT_EQ(read_nv_driver_version(driver), "580.159");
}

TEST(NvDriverVersion, Driver575IsRefusedNamingBothVersions) {
  MockGpuConfig config;
  config.driver_version = "575.64.05";
  MockNvDriver driver(config);
  SeamFd ctl(driver, "/dev/nvidiactl", O_RDWR);
  NvRm rm(driver, ctl.get());
  rm.alloc_root_client();
  const std::string message = refusal_of([&] { check_nv_driver_version(driver, rm); });
  EXPECT_NE(message.find("575.64.05"), std::string::npos) << message;
  EXPECT_NE(message.find("580"), std::string::npos) << message;
  EXPECT_NE(message.find("/proc/driver/nvidia/version"), std::string::npos) << message;
}

TEST(NvDriverVersion, Driver580AcceptedFromProcAndFromRm) {
  MockNvDriver driver;
  SeamFd ctl(driver, "/dev/nvidiactl", O_RDWR);
  NvRm rm(driver, ctl.get());
  rm.alloc_root_client();
  EXPECT_EQ(check_nv_driver_version(driver, rm), "580.159");
}

TEST(NvDriverVersion, OtherMajorsAreRefusedAndAny580IsAccepted) {
  EXPECT_NO_THROW(require_supported_nv_driver("580.65.06", "test"));
  EXPECT_NO_THROW(require_supported_nv_driver("580.142", "test"));
  for (const char* other : {"570.211.01", "590.48.01", "610.43.03"}) {
    const std::string message = refusal_of([&] { require_supported_nv_driver(other, "test"); });
    EXPECT_NE(message.find(other), std::string::npos) << message;
  }
}

TEST(NvDriverVersion, VersionThatIsNotDottedDecimalIsAnInvalidArgument) {
  EXPECT_THROW(nv_driver_major("x86_64", "test"), std::invalid_argument);
  EXPECT_THROW(nv_driver_major("", "test"), std::invalid_argument);
  EXPECT_EQ(nv_driver_major("580.159", "test"), 580);
}

TEST(NvDriverVersion, ProprietaryModuleTextIsReadToo) {
  MockGpuConfig config;
  config.open_kernel_module = false;
  MockNvDriver driver(config);
  EXPECT_EQ(read_nv_driver_version(driver), "580.159");
}

}  // namespace
}  // namespace doorbell::nv_driver_test
