// kernel-interface's driver seams (kernel-interface/driver_seams.h) in a program that links no emulator: the kernel's
// seam without MOCKGPU=1, a clear error under MOCKGPU=1 until an emulator is installed, then a fresh seam of the
// installed emulator per open.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kernel-interface/driver_seams.h"

namespace doorbell::kernel_interface {
namespace {

// MOCKGPU set (or unset, for nullptr) for the test's scope, restored after.
class ScopedMockgpu {
 public:
  explicit ScopedMockgpu(const char* value) {
    if (const char* old = std::getenv("MOCKGPU")) old_ = old;
    if (value != nullptr) {
      setenv("MOCKGPU", value, 1);
    } else {
      unsetenv("MOCKGPU");
    }
  }
  ~ScopedMockgpu() {
    if (old_) {
      setenv("MOCKGPU", old_->c_str(), 1);
    } else {
      unsetenv("MOCKGPU");
    }
  }

 private:
  std::optional<std::string> old_;
};

// An emulator stand-in that only says it is one.
class FakeEmulatedSeam final : public SyscallSeam {
 public:
  int open(const std::string&, int) override { return -2; }
  int ioctl(int, unsigned long, void*) override { return -25; }
  ssize_t read(int, void*, std::size_t) override { return -9; }
  void* mmap(void*, std::size_t, int, int, int, off_t, int* error) override {
    if (error != nullptr) *error = 19;
    return reinterpret_cast<void*>(-1);
  }
  int munmap(void*, std::size_t) override { return -22; }
  int close(int) override { return -9; }
  bool emulated() const override { return true; }
};

// Installs FakeEmulatedSeam as the "nvidia" emulator for the test's scope.
class ScopedFakeNvidia {
 public:
  ScopedFakeNvidia() {
    register_emulated_driver("nvidia", [this] {
      ++built;
      return std::make_unique<FakeEmulatedSeam>();
    });
  }
  ~ScopedFakeNvidia() { register_emulated_driver("nvidia", nullptr); }
  int built = 0;
};

TEST(DriverSeams, WithoutMockgpuTheNvidiaSeamIsTheKernels) {
  ScopedMockgpu mockgpu(nullptr);
  ScopedFakeNvidia fake;
  std::unique_ptr<SyscallSeam> seam = open_driver_seam("nvidia");
  EXPECT_NE(dynamic_cast<LinuxSyscalls*>(seam.get()), nullptr);
  EXPECT_FALSE(seam->emulated());
  EXPECT_EQ(fake.built, 0) << "the emulator was built without MOCKGPU=1";
}

TEST(DriverSeams, MockgpuOtherThanOneMeansTheKernelsDriver) {
  ScopedMockgpu mockgpu("0");
  ScopedFakeNvidia fake;
  EXPECT_FALSE(mockgpu_requested());
  EXPECT_FALSE(open_driver_seam("nvidia")->emulated());
}

TEST(DriverSeams, UnderMockgpuWithoutAnInstalledEmulatorTheErrorNamesTheDriverAndWhatToLinkAndCall) {
  ScopedMockgpu mockgpu("1");
  ASSERT_FALSE(emulated_driver_registered("nvidia")) << "this program links no emulator";
  try {
    open_driver_seam("nvidia");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("MOCKGPU=1"), std::string::npos) << m;
    EXPECT_NE(m.find("'nvidia'"), std::string::npos) << m;
    EXPECT_NE(m.find("link doorbell_mockgpu"), std::string::npos) << m;
    EXPECT_NE(m.find("doorbell::mockgpu::install()"), std::string::npos) << m;
  }
}

TEST(DriverSeams, UnderMockgpuEachOpenBuildsAFreshSeamOfTheInstalledEmulator) {
  ScopedMockgpu mockgpu("1");
  ScopedFakeNvidia fake;
  EXPECT_TRUE(emulated_driver_registered("nvidia"));
  std::unique_ptr<SyscallSeam> a = open_driver_seam("nvidia");
  std::unique_ptr<SyscallSeam> b = open_driver_seam("nvidia");
  EXPECT_NE(dynamic_cast<FakeEmulatedSeam*>(a.get()), nullptr);
  EXPECT_NE(a.get(), b.get());
  EXPECT_TRUE(a->emulated());
  EXPECT_EQ(fake.built, 2);
}

TEST(DriverSeams, AnEmulatorIsPerDriverName) {
  ScopedMockgpu mockgpu("1");
  ScopedFakeNvidia fake;
  EXPECT_THROW(open_driver_seam("amdgpu"), std::runtime_error);
}

TEST(DriverSeams, AnUninstalledEmulatorIsMissingAgain) {
  ScopedMockgpu mockgpu("1");
  { ScopedFakeNvidia fake; }
  EXPECT_FALSE(emulated_driver_registered("nvidia"));
  EXPECT_THROW(open_driver_seam("nvidia"), std::runtime_error);
}

TEST(DriverSeams, AFactoryThatBuildsNothingIsAnErrorNamingTheDriver) {
  ScopedMockgpu mockgpu("1");
  register_emulated_driver("nvidia", [] { return std::unique_ptr<SyscallSeam>(); });
  try {
    open_driver_seam("nvidia");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'nvidia' driver built no seam"), std::string::npos) << e.what();
  }
  register_emulated_driver("nvidia", nullptr);
}

TEST(DriverSeams, OpensAndInstallsFromManyThreadsAtOnce) {
  ScopedMockgpu mockgpu("1");
  ScopedFakeNvidia fake;
  std::vector<std::thread> threads;
  std::atomic<int> emulated{0};
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; i++) {
        if (t == 0) register_emulated_driver("other", [] { return std::make_unique<FakeEmulatedSeam>(); });
        if (open_driver_seam("nvidia")->emulated()) emulated++;
      }
    });
  for (std::thread& t : threads) t.join();
  register_emulated_driver("other", nullptr);
  EXPECT_EQ(emulated.load(), 800);
}

}  // namespace
}  // namespace doorbell::kernel_interface
