// `doorbell devices` on a fixture sysfs tree (DOORBELL_SYSFS_ROOT): the PCI GPUs it lists, the single line when
// there is none, and the error when a file is malformed. DOORBELL_PROGRAM is the path of the built program.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/kernel-interface/pci_sysfs_fixture.h"

namespace doorbell::kernel_interface::pci {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string quoted(const std::string& text) { return "'" + text + "'"; }

CliRun run_devices(const std::filesystem::path& sysfs_root) {
  const std::filesystem::path err_path = sysfs_root / "stderr.txt";
  const std::string command = "env DOORBELL_SYSFS_ROOT=" + quoted(sysfs_root.string()) + " " +
                              quoted(DOORBELL_PROGRAM) + " devices 2>" + quoted(err_path.string());
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed: " << command;
    return run;
  }
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::ostringstream text;
  text << err.rdbuf();
  run.err = text.str();
  return run;
}

// The lines from the first "PCI:" line on.
std::string pci_part(const std::string& out) {
  const size_t start = out.find("\nPCI: ");
  return start == std::string::npos ? "" : out.substr(start + 1);
}

TEST(DoorbellDevicesCli, ListsThePciGpusOfTheSysfsRootWithTheirDriverOrNone) {
  testing::PciSysfsFixture fixture;
  const CliRun run = run_devices(fixture.root());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(run.out.starts_with("doorbell ")) << run.out;
  EXPECT_EQ(pci_part(run.out),
            "PCI: 2 GPUs (via sysfs " + fixture.root().string() + ")\n"
            "  0000:18:00.0 NVIDIA H200 SXM 141GB [10de:2335 subsystem 10de:18be class 030200 rev a1], BAR0 16 MiB, "
            "BAR1 256 GiB 64-bit prefetchable, BAR3 32 MiB 64-bit prefetchable, driver nvidia, NUMA node 1, IOMMU "
            "group 17\n"
            "  0000:c1:00.0 AMD Instinct MI300X [1002:74a1 subsystem 1002:74a1 class 120000 rev 00], BAR0 256 GiB "
            "64-bit prefetchable, BAR2 2 MiB 64-bit prefetchable, BAR4 256 B I/O, BAR5 512 KiB, driver none, NUMA "
            "node none\n");
}

TEST(DoorbellDevicesCli, SaysSoInOneLineWhenThereIsNoGpu) {
  testing::PciSysfsFixture fixture;
  fixture.remove_device(testing::kH200Address);
  fixture.remove_device(testing::kMi300xAddress);
  const CliRun run = run_devices(fixture.root());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(pci_part(run.out), "PCI: no GPU (no display controller or NVIDIA/AMD accelerator, via sysfs " +
                                   fixture.root().string() + ")\n");
}

TEST(DoorbellDevicesCli, AMalformedFileIsAnErrorNamingItAndTheExpectation) {
  testing::PciSysfsFixture fixture;
  fixture.write(testing::kMi300xAddress, "numa_node", "node0\n");
  const CliRun run = run_devices(fixture.root());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "doorbell: " +
                         (fixture.root() / "bus/pci/devices" / testing::kMi300xAddress / "numa_node").string() +
                         ": is 'node0'; expected a NUMA node number, or -1 for none\n");
}

}  // namespace
}  // namespace doorbell::kernel_interface::pci
