// The workloads of `doorbell bench` and bench/cpu_limits_bench.cpp: doorbell programs built with the Tensor API, each
// run kernel-only (inputs realized first, compiled once, then run_linear_timed: the sum of its kernels' times from
// the timestamps the queue writes) and compared with its floor (tools/bench_floors.h) on the same sizes. Each checks
// its answer once against the floor's (or the host's) on the same input numbers: a fast wrong answer is worthless.
// Also the CPU device's dispatch latency against a two-thread ping-pong, as bench/hcq_bench.cpp measures it.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/uop.h"
#include "tools/bench_floors.h"
#include "tools/bench_latency.h"

namespace doorbell::bench {

// What a case is: names, sizes, and the work one run does (for GFLOP/s or GB/s).
struct CaseInfo {
  std::string name;        // e.g. "matmul"
  std::string sizes;       // e.g. "1024x1024x1024"
  std::string floor_name;  // e.g. "sgemm"
  bool flops_unit = false; // true: GFLOP/s from `work` flops; false: GB/s from `work` bytes (read + written)
  double work = 0;
};

struct CheckResult {
  bool ok = false;
  std::string detail;  // the measured error and its tolerance
};

// One prepared case: inputs realized, program compiled and run once, floor buffers filled and run once.
class BenchCase {
 public:
  virtual ~BenchCase() = default;
  const CaseInfo& info() const { return info_; }
  // Kernel-only ns of one run of the doorbell program.
  double run_doorbell();
  // Wall ns of one run of the floor; throws when the floor is unavailable.
  virtual int64_t run_floor() = 0;
  virtual bool floor_available() const { return true; }
  virtual std::string floor_unavailable_reason() const { return {}; }
  // Compares doorbell's output of the last run with the reference on the same inputs.
  virtual CheckResult check() = 0;
  size_t kernel_count() const { return kernels_; }

 protected:
  explicit BenchCase(CaseInfo info) : info_(std::move(info)) {}
  CaseInfo info_;
  // Compiles the LINEAR of the output (inputs realized before) and runs it once: compile and first-run costs stay
  // out of the samples.
  void compile_and_warm_up(const UOp& linear);
  UOp compiled_;
  size_t kernels_ = 0;
};

struct CaseSpec {
  std::string name;  // "<workload> <sizes>", unique: what --benchmark_filter and the table show
  bool in_short = false;
  std::function<std::unique_ptr<BenchCase>(Floors&)> make;
};

// Every case of the full suite, in table order; in_short marks those of the short one.
std::vector<CaseSpec> bench_cases();

struct CaseResult {
  CaseInfo info;
  std::vector<double> doorbell_samples;  // ns, kernel-only, one per repetition
  std::vector<double> floor_samples;     // ns
  double doorbell_ns = 0, floor_ns = 0;  // medians
  double ratio = 0;                      // doorbell_ns / floor_ns; 0 when the floor is unavailable
  double throughput = 0;                 // doorbell's GFLOP/s or GB/s at its median
  double floor_throughput = 0;
  bool floor_available = true;
  std::string floor_note;  // why the floor is unavailable
  CheckResult check;
  size_t kernels = 0;
  // The same case on the CPU's other target (`twin`: CPU:CLANG when the device compiles with the x86 backend, the
  // default; CPU:X86 when DEV=CPU:CLANG), its runs alternated with the device's: its medians, its own answer check,
  // and x86_over_clang, the x86 backend's kernel-only time over clang's. twin_note says why it did not run (a kernel
  // a target refused) when twin_available is false.
  std::string twin;
  bool twin_available = false;
  std::string twin_note;
  std::vector<double> twin_samples;  // ns, kernel-only
  double twin_ns = 0, x86_over_clang = 0;
  CheckResult twin_check;
};

// Median of ns samples (0 for none).
double median_of(std::vector<double> v);

// Runs doorbell `repeats` times, then the floor `repeats` times (after the warm-up runs the case's preparation did),
// and checks the answer. `twin`, when given, is the same case on the CPU's other target: its runs alternate with c's
// (so both sides of the x86 / clang ratio see the same drift of a shared machine) and its answer is checked too.
CaseResult measure_case(BenchCase& c, int repeats, BenchCase* twin = nullptr);

// One case of the "VK vs CPU" section: the same workload (bench_cases' factories, at sizes for a software Vulkan
// driver) realized and run on DEV=VK and on doorbell's CPU device, their runs alternated, kernel-only times from each
// device's own queue timestamps; each answer checked as the CPU suite checks it. device_over_cpu is the ratio of
// the medians: on lavapipe, what a real driver stack (SPIR-V, a Vulkan queue, llvmpipe's code) costs against our own
// CPU device on the same cores.
struct DeviceVsCpuResult {
  std::string name, sizes;  // "add_mul", "1e6"
  bool available = false;   // false: `note` says why (a kernel the device's target refused, a device error)
  std::string note;
  size_t kernels = 0;  // on the device
  std::vector<double> device_samples, cpu_samples;  // ns, kernel-only, one per repetition
  double device_ns = 0, cpu_ns = 0, device_over_cpu = 0;
  CheckResult device_check, cpu_check;
  bool ok() const { return available && device_check.ok && cpu_check.ok; }
};
struct DeviceVsCpuSection {
  std::string device;      // "VK"
  std::string detail;      // "llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6, Vulkan 1.3.230"
  std::string skipped;     // non-empty: the device did not open (or cannot compile) and why; no cases then
  std::vector<DeviceVsCpuResult> cases;
  double wall_s = 0;
  bool ran() const { return skipped.empty() && !device.empty(); }
};
// The cases of the VK vs CPU section, in table order; in_short marks the short suite's (sized so the section takes
// well under 20 s on lavapipe on 2 cores).
std::vector<CaseSpec> device_vs_cpu_cases();
// Runs the section on `device` ("VK") against "CPU", `repeats` runs each; a device that does not open is `skipped`.
DeviceVsCpuSection run_device_vs_cpu(const std::string& device, bool full, int repeats, std::FILE* progress);

struct LatencyResult {
  std::string name;
  double doorbell_ns = 0;
  std::string floor_name;
  double floor_ns = 0;
  int samples = 0;
  std::vector<double> samples_ns;  // every dispatch's latency, in the order measured (the plots' CDFs)
};
// The CPU device's dispatch of an empty kernel (submit -> kernel start, submit -> host sees done), median of
// `iterations`, against a spin ping-pong between two threads (one way, round trip; its median) measured in the same
// run right before the device's samples, between the same CPUs (see measure_dispatch_latency).
std::vector<LatencyResult> measure_dispatch_latency(int iterations);

struct SuiteOptions {
  bool full = false;
  int repeats = 0;  // 0: 3 (short) or 5 (full)
  std::FILE* progress = nullptr;  // one line per case as it finishes, when not null
  // The latency section (tools/bench_latency.h) runs in both suites; latency_only runs nothing else. Its `full` and
  // `progress` are this suite's.
  bool latency_only = false;
  LatencyOptions latency;
  // Each case also on the CPU's other target (the x86 backend against clang, kernel-only, in the same run).
  bool compare_cpu_targets = true;
  // The VK vs CPU section (DeviceVsCpuSection) after the CPU cases, skipped saying why where DEV=VK cannot open.
  bool compare_vk = true;
};

struct SuiteResult {
  bool full = false;
  int repeats = 0;
  std::vector<CaseResult> cases;
  std::vector<LatencyResult> latency;
  bool latency_only = false;
  LatencySection latency_section;
  DeviceVsCpuSection vk;  // device "" when the section was not asked for
  unsigned threads = 0;
  std::string cpu_model;
  std::string date;  // UTC, ISO 8601
  double wall_s = 0;
};

// The suite on the CPU device; throws std::runtime_error when DEV names another device.
// Whether every answer checked was right: the CPU cases' and the VK vs CPU section's (the twin's are reported only).
bool suite_answers_ok(const SuiteResult& result);
SuiteResult run_suite(const SuiteOptions& options);
void print_suite_table(const SuiteResult& result, std::FILE* out);
// Every figure as JSON (cases with all samples, the dispatch rows as "dispatch", the latency section with all
// samples as "latency", the VK vs CPU section as "vk_vs_cpu", machine); throws when the file cannot be written.
void write_suite_json(const SuiteResult& result, const std::string& path);
// Checked before the suite runs, so a bad --json path costs no bench: the folder exists and this user can write a
// file there, and the path is not a folder or a file this user cannot write. Throws std::runtime_error naming the
// path and the reason.
void check_json_path(const std::string& path);

std::string cpu_model_name();  // /proc/cpuinfo's "model name", or "unknown"

}  // namespace doorbell::bench
