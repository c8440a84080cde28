// The plots of `doorbell bench --plot DIR` (tools/svg_plot.h draws them): the dispatch latency samples as CDFs per
// device and path with their ping-pong floors and p50/p90/p99 marked, and the spread of each workload's kernel-only
// times against its floor's.
#pragma once
#include <string>
#include <vector>

#include "tools/bench_suite.h"
#include "tools/svg_plot.h"

namespace doorbell::bench {

// The file names written under DIR.
inline constexpr const char* kLatencyCdfFile = "latency_cdf.svg";
inline constexpr const char* kKernelFloorFile = "kernel_vs_floor.svg";
inline constexpr const char* kLatencySectionCdfFile = "latency_devices_cdf.svg";  // when the latency section ran

// Checked before the suite runs, so a bad DIR costs no bench: creates DIR (and its parents) when missing, and
// throws std::runtime_error naming DIR and the reason when it is a file, cannot be created or is not writable.
void check_plot_dir(const std::string& dir);

// One CDF per latency row with samples (labelled device and path), one dashed line per distinct floor.
plot::CdfPlot latency_cdf_plot(const SuiteResult& result);
// The latency section's rows of the paths in kLatencySectionCdfPaths, one CDF per device and path, with the
// distinct floors of those rows as dashed lines.
plot::CdfPlot latency_section_cdf_plot(const SuiteResult& result);
// One row per workload measured: its kernel-only times of every repetition against the floor's (none when unavailable), drawn
// as boxes (median, p25-p75, min-max).
plot::BoxPlot kernel_floor_plot(const SuiteResult& result);

// Writes DIR/latency_cdf.svg, DIR/kernel_vs_floor.svg and DIR/latency_devices_cdf.svg, each when the run measured
// its data (`bench --latency`: the last alone); returns their paths. Throws std::runtime_error naming the file when one cannot be
// written.
std::vector<std::string> write_suite_plots(const SuiteResult& result, const std::string& dir);

}  // namespace doorbell::bench
