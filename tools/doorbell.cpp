// The `doorbell` program: its version, the devices it finds, and a small real workload on the CPU device.

#include <cstdio>
#include <exception>
#include <string_view>

#include "kernel-interface/device_probe.h"
#include "kernel-interface/device_summary.h"
#include "tools/device_check.h"
#include "tools/workload.h"

namespace {

constexpr std::string_view kUsage =
    "usage: doorbell [run | check --device NV | devices | --version | --help]\n"
    "  (no argument)         the version, the devices found, and the workload\n"
    "  run                   the workload: an MLP forward pass on the CPU device, checked against float64, with\n"
    "                        compile latency per kernel and the DEBUG=2 table of kernel-only times (on stderr)\n"
    "  check --device NV     whether the device works with doorbell: the HCQ contract, a conformance subset and\n"
    "                        dispatch latency and kernel-only times (MOCKGPU=1: on the emulated GPU)\n"
    "  devices, --version    print the version and the devices found\n"
    "  --help                print this message\n";

void print_version_and_devices() {
  std::printf("doorbell %s\n", DOORBELL_VERSION);
  for (const auto& line : doorbell::kernel_interface::summarize_devices(doorbell::kernel_interface::probe_devices())) {
    std::printf("%s\n", line.c_str());
  }
}

int run(std::string_view command) {
  if (command.empty()) {
    print_version_and_devices();
    return doorbell::run_workload(stdout);
  }
  if (command == "run") return doorbell::run_workload(stdout);
  if (command == "devices" || command == "--version") {
    print_version_and_devices();
    return 0;
  }
  if (command == "--help" || command == "-h") {
    std::fputs(kUsage.data(), stdout);
    return 0;
  }
  std::fprintf(stderr, "doorbell: unknown argument '%.*s'\n%s", static_cast<int>(command.size()), command.data(),
               kUsage.data());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "check") {
    if (argc != 4 || std::string_view(argv[2]) != "--device") {
      std::fprintf(stderr, "doorbell: expected `check --device NAME`\n%s", kUsage.data());
      return 2;
    }
    try {
      return doorbell::run_device_check(argv[3], stdout);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "doorbell: %s\n", error.what());
      return 1;
    }
  }
  if (argc > 2) {
    std::fprintf(stderr, "doorbell: expected at most one argument, got %d\n%s", argc - 1, kUsage.data());
    return 2;
  }
  try {
    return run(argc == 2 ? argv[1] : "");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "doorbell: %s\n", error.what());
    return 1;
  }
}
