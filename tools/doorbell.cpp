// The `doorbell` program: its version, the devices it finds, the benchmark of the CPU device against this machine's
// floors (tools/bench_suite.h), and a small real workload on the CPU device.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <exception>
#include <string>
#include <string_view>

#include "kernel-interface/device_probe.h"
#include "kernel-interface/device_summary.h"
#include "kernel-interface/pci/gpu_discovery.h"
#include "kernel-interface/pci/pci_summary.h"
#include "mockgpu/install.h"
#include "hcq/trace.h"
#include "mockgpu/amd/mock_amd_seam.h"
#include "mockgpu/nv/mock_nv_seam.h"
#include "tools/bench_plots.h"
#include "tools/bench_suite.h"
#include "tools/device_check.h"
#include "tools/workload.h"

namespace {

constexpr std::string_view kUsage =
    "usage: doorbell [bench [--full] [--latency] [--json FILE] [--trace FILE] [--plot DIR] | run |\n"
    "                check --device NV|AMD|VK [--experiments] [--json FILE] | devices | --version | --help]\n"
    "  (no argument)         the version, the devices found, and the short bench\n"
    "  bench                 doorbell's CPU kernels (kernel-only, median) against this machine's floors: STREAM-like\n"
    "                        loops over all cores and OpenBLAS sgemm; ratio, GFLOP/s or GB/s, a check of each answer,\n"
    "                        and the CPU device's dispatch latency (short suite: under a minute)\n"
    "                        and the latency section: p50/p90/p99/max of dispatch, batches, replay, signal round\n"
    "                        trip, copies and realize on each device (CPU, the emulated NV and AMD GPUs, an NV or\n"
    "                        AMD GPU, the Vulkan device DEV=VK) beside the thread ping-pong and memcpy floors\n"
    "                        and VK vs CPU: the workloads on DEV=VK (lavapipe without a GPU) against the CPU device,\n"
    "                        kernel-only, runs alternated, each answer checked (skipped when DEV=VK cannot open)\n"
    "    --full              every case (adds 1e8-element and 2048^3 cases; about a minute on 2 cores)\n"
    "    --latency           the latency section alone (short: a few seconds)\n"
    "    --json FILE         also write every figure (all samples, machine, date) to FILE\n"
    "    --trace FILE        also write the timeline (kernels per device queue, copies, signal -> wait flows, host\n"
    "                        schedule and compile spans) to FILE as a Chrome/Perfetto trace: open it at\n"
    "                        https://ui.perfetto.dev (PROFILE=1 records any program, see README)\n"
    "    --plot DIR          also draw SVG plots into DIR (created if missing): latency_cdf.svg, the dispatch\n"
    "                        latency CDFs against their floors (p50/p90/p99 marked); latency_devices_cdf.svg,\n"
    "                        the latency section per device and path; kernel_vs_floor.svg, every repetition of\n"
    "                        each kernel and its floor as a box (quartiles, median, min and max)\n"
    "  run                   the workload: an MLP forward pass on the CPU device, checked against float64, with\n"
    "                        compile latency per kernel and the DEBUG=2 table of kernel-only times (on stderr)\n"
    "  check --device NV     whether the device works with doorbell: the HCQ contract, a conformance subset,\n"
    "                        dispatch latency, kernel-only times and copy bandwidth (MOCKGPU=1: on the emulated GPU);\n"
    "                        also --device AMD, and --device VK (Vulkan: what it cannot do as NV does is reported as\n"
    "                        a documented difference, not a failure)\n"
    "    --experiments       also settle what only hardware can (tools/nv_experiments.h), each on a fresh device\n"
    "    --json FILE         also write every figure, the device and each experiment's outcome to FILE\n"
    "  devices, --version    print the version and the devices found\n"
    "  --help                print this message\n";

void print_version_and_devices() {
  std::printf("doorbell %s\n", DOORBELL_VERSION);
  for (const auto& line : doorbell::kernel_interface::summarize_devices(doorbell::kernel_interface::probe_devices())) {
    std::printf("%s\n", line.c_str());
  }
  // The GPUs on the PCI bus, bound to a driver or not (DOORBELL_SYSFS_ROOT: read a fixture tree instead of /sys).
  const auto pci_source = doorbell::kernel_interface::pci::default_pci_source();
  const auto pci_gpus = doorbell::kernel_interface::pci::discover_pci_gpus(*pci_source);
  for (const auto& line : doorbell::kernel_interface::pci::summarize_pci_gpus(pci_gpus, pci_source->describe())) {
    std::printf("%s\n", line.c_str());
  }
}

// The short or full suite; exit code 1 when any answer mismatched (the CPU cases', the VK vs CPU section's).
int run_bench(bool full, const std::string& json_path, bool latency_only = false, const std::string& plot_dir = "") {
  doorbell::bench::SuiteOptions options;
  options.full = full, options.progress = stderr, options.latency_only = latency_only;
  // The latency section's "NV emulated" rows without MOCKGPU=1: the emulator this program links (its default machine,
  // one H200), for the bench library links none.
  options.latency.emulated_nv_seam = [] { return std::make_unique<doorbell::mockgpu::nv::MockNvSeam>(); };
  options.latency.emulated_amd_seam = [] {
    return std::make_unique<doorbell::mockgpu::amd::MockAmdSeam>(doorbell::mockgpu::amd_machine_options(1));
  };
  doorbell::bench::SuiteResult result = doorbell::bench::run_suite(options);
  doorbell::bench::print_suite_table(result, stdout);
  if (!json_path.empty()) {
    doorbell::bench::write_suite_json(result, json_path);
    std::printf("bench: JSON written to %s\n", json_path.c_str());
  }
  if (!plot_dir.empty())
    for (const std::string& path : doorbell::bench::write_suite_plots(result, plot_dir))
      std::printf("bench: plot written to %s\n", path.c_str());
  return doorbell::bench::suite_answers_ok(result) ? 0 : 1;
}

// Throws naming the path and the reason when the trace cannot be written there; leaves no file behind.
void check_trace_path(const std::string& path) {
  const bool existed = access(path.c_str(), F_OK) == 0;
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) throw std::runtime_error("cannot write the trace to '" + path + "': " + std::strerror(errno));
  std::fclose(f);
  if (!existed) std::remove(path.c_str());
}

int bench_command(int argc, char** argv) {
  bool full = false, latency_only = false;
  std::string json_path, trace_path, plot_dir;
  for (int i = 2; i < argc; i++) {
    std::string_view arg = argv[i];
    if (arg == "--full") {
      full = true;
    } else if (arg == "--latency") {
      latency_only = true;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--trace" && i + 1 < argc) {
      trace_path = argv[++i];
    } else if (arg == "--plot" && i + 1 < argc) {
      plot_dir = argv[++i];
    } else {
      std::fprintf(stderr, "doorbell: bench: expected --full, --latency, --json FILE, --trace FILE or --plot DIR, got '%s'\n%s",
                   argv[i], kUsage.data());
      return 2;
    }
  }
  if (!json_path.empty()) doorbell::bench::check_json_path(json_path);  // before the minute the suite takes
  if (!plot_dir.empty()) doorbell::bench::check_plot_dir(plot_dir);
  if (trace_path.empty()) return run_bench(full, json_path, latency_only, plot_dir);
  check_trace_path(trace_path);  // before the bench, as for --json
  doorbell::trace::start();
  const int status = run_bench(full, json_path, latency_only, plot_dir);
  doorbell::trace::stop(trace_path);
  std::printf("bench: trace written to %s (open it at https://ui.perfetto.dev)\n", trace_path.c_str());
  return status;
}

int run(std::string_view command) {
  if (command.empty()) {
    print_version_and_devices();
    std::fflush(stdout);
    return run_bench(false, "");
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
  doorbell::mockgpu::install();  // MOCKGPU=1 runs the NV device on the emulated driver and GPU in this process
  if (argc >= 2 && std::string_view(argv[1]) == "bench") {
    try {
      return bench_command(argc, argv);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "doorbell: bench: %s\n", error.what());
      return 1;
    }
  }
  if (argc >= 2 && std::string_view(argv[1]) == "check") {
    doorbell::DeviceCheckOptions options;
    bool options_ok = argc >= 4 && std::string_view(argv[2]) == "--device";
    for (int i = 4; options_ok && i < argc; i++) {
      if (std::string_view(argv[i]) == "--experiments") options.experiments = true;
      else if (std::string_view(argv[i]) == "--json" && i + 1 < argc) options.json_path = argv[++i];
      else options_ok = false;
    }
    if (!options_ok) {
      std::fprintf(stderr, "doorbell: expected `check --device NAME [--experiments] [--json FILE]`\n%s", kUsage.data());
      return 2;
    }
    try {
      return doorbell::run_device_check(argv[3], stdout, options);
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
