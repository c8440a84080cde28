// The two PCI sources behind one interface: which one `default_pci_source` picks, and, on a machine with
// libpciaccess and /sys, that libpciaccess and sysfs report the same devices field for field.

#include "kernel-interface/pci/pci_source.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "kernel-interface/pci/pciaccess_pci_source.h"
#include "kernel-interface/pci/sysfs_pci_source.h"
#include "tests/kernel-interface/pci_sysfs_fixture.h"

namespace doorbell::kernel_interface::pci {
namespace {

// Sets an environment variable for one test and restores it after.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DefaultPciSource, ReadsTheSysfsRootTheVariableNames) {
  testing::PciSysfsFixture fixture;
  const ScopedEnvironment root(kSysfsRootVariable, fixture.root().c_str());
  const auto source = default_pci_source();
  EXPECT_EQ(source->describe(), "sysfs " + fixture.root().string());
  EXPECT_EQ(source->read_devices().size(), 4u);
}

TEST(DefaultPciSource, IsLibpciaccessWhereBuiltWithItElseSysfsUnderSys) {
  const ScopedEnvironment root(kSysfsRootVariable, nullptr);
  EXPECT_EQ(pciaccess_available(), DOORBELL_HAVE_PCIACCESS != 0);
  EXPECT_EQ(default_pci_source()->describe(), pciaccess_available() ? "libpciaccess + /sys" : "sysfs /sys");
  const ScopedEnvironment empty(kSysfsRootVariable, "");  // empty counts as unset
  EXPECT_EQ(default_pci_source()->describe(), pciaccess_available() ? "libpciaccess + /sys" : "sysfs /sys");
}

TEST(PciSources, LibpciaccessAndSysfsAgreeOnEveryDeviceOfThisMachine) {
#if !DOORBELL_HAVE_PCIACCESS
  GTEST_SKIP() << "built without libpciaccess (DOORBELL_WITH_PCIACCESS=OFF, or libpciaccess-dev not installed)";
#else
  if (!std::filesystem::exists("/sys/bus/pci/devices")) GTEST_SKIP() << "this machine has no /sys/bus/pci/devices";
  const auto from_sysfs = SysfsPciSource("/sys").read_devices();
  if (from_sysfs.empty()) GTEST_SKIP() << "/sys/bus/pci/devices lists no device";
  const auto from_pciaccess = PciaccessPciSource().read_devices();
  ASSERT_EQ(from_pciaccess.size(), from_sysfs.size());
  for (size_t i = 0; i < from_sysfs.size(); ++i) {
    PciDevice sysfs = from_sysfs[i];
    SCOPED_TRACE(to_string(sysfs.address));
    // libpciaccess reports a BAR only once the kernel assigned it an address (linux_sysfs.c: base_addr != 0).
    std::erase_if(sysfs.bars, [](const PciBar& bar) { return bar.base == 0; });
    EXPECT_EQ(from_pciaccess[i], sysfs);
  }
  std::printf("libpciaccess and sysfs agree on %zu devices\n", from_sysfs.size());
#endif
}

}  // namespace
}  // namespace doorbell::kernel_interface::pci
