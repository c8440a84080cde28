#include "tools/bench_plots.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace doorbell::bench {

void check_plot_dir(const std::string& dir) {
  auto refuse = [&](const std::string& why) {
    return std::runtime_error("cannot write the plots to '" + dir + "': " + why);
  };
  if (dir.empty()) throw refuse("the path is empty; expected a folder");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw refuse("it is a file; expected a folder");
  if (!std::filesystem::is_directory(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) throw refuse("cannot create the folder (" + ec.message() + ")");
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw refuse(std::string("the folder is not writable (") + std::strerror(errno) + ")");
}

plot::CdfPlot latency_cdf_plot(const SuiteResult& result) {
  plot::CdfPlot p;
  p.title = "Dispatch latency of an empty kernel: CPU device (" + result.cpu_model + ")";
  p.x_label = "latency";
  std::vector<std::pair<std::string, double>> floors;
  for (const LatencyResult& l : result.latency) {
    if (l.samples_ns.empty()) continue;
    // "dispatch 1 worker: submit -> start": the device, then its configuration and path.
    std::string path = l.name.rfind("dispatch ", 0) == 0 ? l.name.substr(9) : l.name;
    p.series.push_back({"CPU " + path, l.samples_ns});
    std::pair<std::string, double> floor{l.floor_name, l.floor_ns};
    if (l.floor_ns > 0 && std::find(floors.begin(), floors.end(), floor) == floors.end()) floors.push_back(floor);
  }
  for (const auto& [name, ns] : floors) p.references.push_back({"floor: " + name, ns});
  return p;
}

plot::CdfPlot latency_section_cdf_plot(const SuiteResult& result) {
  // The paths a user compares across devices: one dispatch, a captured program's replay, the frontend's whole path.
  static const char* const kPaths[] = {"submit -> kernel start", "submit -> done", "jit replay x+1 (3 floats)",
                                       "realize x+1 (3 floats)"};
  plot::CdfPlot p;
  p.title = "Latency per device and path (doorbell bench latency section)";
  p.x_label = "latency";
  std::vector<std::pair<std::string, double>> floors;
  for (const LatencyRow& row : result.latency_section.rows) {
    if (row.samples_ns.empty() || std::find(std::begin(kPaths), std::end(kPaths), row.path) == std::end(kPaths)) continue;
    p.series.push_back({row.device + ": " + row.path, row.samples_ns});
    std::pair<std::string, double> floor{row.device + " " + row.floor, row.floor_ns};
    if (row.floor_ns > 0 && std::find(floors.begin(), floors.end(), floor) == floors.end()) floors.push_back(floor);
  }
  for (const auto& [name, ns] : floors) p.references.push_back({"floor: " + name, ns});
  return p;
}

plot::BoxPlot kernel_floor_plot(const SuiteResult& result) {
  plot::BoxPlot p;
  p.title = "Kernel-only time against this machine's floor (" + std::to_string(result.repeats) + " runs each, " +
            std::to_string(result.threads) + " threads)";
  p.x_label = "time of one run";
  p.value_name = "doorbell, kernel-only";
  p.floor_name = "floor";
  for (const CaseResult& c : result.cases)
    if (!c.doorbell_samples.empty())
      p.rows.push_back({c.info.name + " " + c.info.sizes + " (" + c.info.floor_name + ")", c.doorbell_samples,
                        c.floor_available ? c.floor_samples : std::vector<double>{}});
  return p;
}

std::vector<std::string> write_suite_plots(const SuiteResult& result, const std::string& dir) {
  // Each plot whose data the run measured (`bench --latency` measures the latency section alone).
  std::vector<std::pair<std::string, std::string>> files;
  if (const plot::CdfPlot p = latency_cdf_plot(result); !p.series.empty()) files.push_back({kLatencyCdfFile, plot::cdf_svg(p)});
  if (const plot::BoxPlot p = kernel_floor_plot(result); !p.rows.empty()) files.push_back({kKernelFloorFile, plot::box_svg(p)});
  if (const plot::CdfPlot p = latency_section_cdf_plot(result); !p.series.empty())
    files.push_back({kLatencySectionCdfFile, plot::cdf_svg(p)});
  std::vector<std::string> written;
  for (const auto& [name, svg] : files) {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open '" + path + "' for writing the plot (" + std::strerror(errno) + ")");
    f << svg;
    if (!f.flush()) throw std::runtime_error("cannot write the plot '" + path + "'");
    written.push_back(path);
  }
  return written;
}

}  // namespace doorbell::bench
