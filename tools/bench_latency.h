// The latency section of `doorbell bench` (and `doorbell bench --latency` alone): on every device present (the CPU
// device with one worker, the CPU device with a worker per core, the emulated NV and AMD GPUs, an NV or AMD GPU when
// the machine has one, and the Vulkan device, DEV=VK, when it opens: lavapipe on a machine without a GPU), how long the paths a program waits on take: an empty kernel's submit -> start and submit -> done, the
// per-kernel cost in batches of 1, 10, 100 and 1000 kernels, the replay of a 1-kernel and a 10-kernel program, a
// host -> device -> host signal round trip, a small copy's latency, a large copy's bandwidth, and realize of x + 1 on
// 3 floats. Each row keeps every sample and its p50, p90, p99 and max, beside its floor measured in the same run just
// before the device's rows: a two-thread spin ping-pong (hcq/wait_primitives.h SpinEcho) for the handoffs, memcpy of
// the same bytes for the large copy. The rows are plain data so a report (JSON, plots) can read them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::bench {

// One path on one device. Times in ns; `samples_ns` in the order measured.
struct LatencyRow {
  std::string device;         // stable key: "CPU 1 worker", "CPU all cores", "NV emulated", "NV", "VK"
  std::string device_detail;  // e.g. "2 workers", "sm_90, hardware", "llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6, ..."
  std::string path;           // stable key, e.g. "submit -> kernel start" (bench_latency.cpp kPath*)
  std::vector<double> samples_ns;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;  // nearest-rank percentiles of samples_ns
  std::string floor;                                        // e.g. "ping-pong one way", "memcpy 8 MiB"
  std::vector<double> floor_samples_ns;
  double floor_ns = 0;  // p50 of floor_samples_ns
  uint64_t bytes = 0;   // copies: bytes per sample (GB/s = bytes / ns), else 0
};

// A device (or one row of it) that was not measured, and why (no GPU, a device that failed to open).
struct LatencySkip {
  std::string device;
  std::string reason;
};

struct LatencySection {
  bool full = false;
  std::vector<LatencyRow> rows;
  std::vector<LatencySkip> skipped;
  double wall_s = 0;
};

struct LatencyOptions {
  bool full = false;              // 10x the samples of the short mode (a few seconds on 2 cores)
  std::FILE* progress = nullptr;  // one line per device as it finishes, when not null
  // Opens the emulated NVIDIA driver (mockgpu) for the "NV emulated" rows when MOCKGPU=1 is not set: the `doorbell`
  // program links the emulator, this library does not (the runtime links none, mockgpu/install.h). Null: under
  // MOCKGPU=1 the emulated GPU is the registry's NV, else the NV emulated rows are skipped.
  std::function<std::unique_ptr<kernel_interface::SyscallSeam>()> emulated_nv_seam;
  // The same for the emulated AMD machine (mockgpu/amd) and the "AMD emulated" rows.
  std::function<std::unique_ptr<kernel_interface::SyscallSeam>()> emulated_amd_seam;
};
using EmulatedSeam = std::function<std::unique_ptr<kernel_interface::SyscallSeam>()>;

// Nearest-rank percentile (p in (0, 1]) of ns samples; 0 for none.
double percentile_of(std::vector<double> samples, double p);

// Measures every row on every device present. Throws only for a failure of a device that opened (a wait timing
// out names its signal); a device that cannot open is a LatencySkip.
LatencySection run_latency(const LatencyOptions& options);

// "latency (short): ..." then one indented line per row and skip, then "latency: N rows on D devices in S s".
void print_latency_table(const LatencySection& section, std::FILE* out);

// The section as one JSON object ({"mode", "wall_s", "rows": [...], "skipped": [...]}), every sample included; its
// lines after the first are indented by `indent` spaces.
std::string latency_json(const LatencySection& section, int indent);

}  // namespace doorbell::bench
