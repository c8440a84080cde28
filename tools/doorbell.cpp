// The `doorbell` program. Until the benchmark and demo arrive it prints its version and the devices it finds.

#include <cstdio>
#include <exception>
#include <string_view>

#include "kernel-interface/device_probe.h"
#include "kernel-interface/device_summary.h"

namespace {

constexpr std::string_view kUsage =
    "usage: doorbell [devices | --version | --help]\n"
    "  (no argument), devices, --version   print the version and the devices found\n"
    "  --help                              print this message\n";

void print_version_and_devices() {
  std::printf("doorbell %s\n", DOORBELL_VERSION);
  for (const auto& line : doorbell::kernel_interface::summarize_devices(doorbell::kernel_interface::probe_devices())) {
    std::printf("%s\n", line.c_str());
  }
}

int run(std::string_view command) {
  if (command.empty() || command == "devices" || command == "--version") {
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
