#include "tools/bench_plots.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/tools/xml_check.h"

namespace doorbell::bench {
namespace {

SuiteResult sample_result() {
  SuiteResult r;
  r.repeats = 5;
  r.threads = 2;
  r.cpu_model = "Test CPU <x>";
  r.latency = {
      {"dispatch 1 worker: submit -> start", 240, "ping-pong p10 one way", 55, 4, {230, 240, 240, 900}},
      {"dispatch 1 worker: submit -> done", 410, "ping-pong p10 round trip", 110, 4, {400, 410, 420, 5000}},
      {"dispatch 2 workers: submit -> start", 650, "ping-pong p10 one way", 55, 3, {600, 650, 700}},
      {"dispatch 2 workers: submit -> done", 0, "ping-pong p10 round trip", 110, 0, {}},
  };
  CaseResult matmul;
  matmul.info = CaseInfo{"matmul", "512x512x512", "sgemm", true, 2.0 * 512 * 512 * 512};
  matmul.doorbell_samples = {1.3e6, 1.1e6, 1.2e6};
  matmul.floor_samples = {1.4e6, 1.3e6, 1.25e6};
  matmul.doorbell_ns = 1.2e6;
  matmul.floor_ns = 1.3e6;
  CaseResult sum;
  sum.info = CaseInfo{"sum", "1e7", "sum", false, 4e7};
  sum.doorbell_samples = {8e5, 9e5, 7e5};
  sum.doorbell_ns = 8e5;
  sum.floor_ns = 0;
  sum.floor_available = false;
  r.cases = {matmul, sum};
  return r;
}

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("doorbell-plots-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(BenchPlots, LatencyCdfHasASeriesPerDeviceAndPathAndEachFloorOnce) {
  plot::CdfPlot p = latency_cdf_plot(sample_result());
  ASSERT_EQ(p.series.size(), 3u);  // the row without samples is left out
  EXPECT_EQ(p.series[0].label, "CPU 1 worker: submit -> start");
  EXPECT_EQ(p.series[0].samples, (std::vector<double>{230, 240, 240, 900}));
  EXPECT_EQ(p.series[2].label, "CPU 2 workers: submit -> start");
  ASSERT_EQ(p.references.size(), 2u);
  EXPECT_EQ(p.references[0].label, "floor: ping-pong p10 one way");
  EXPECT_EQ(p.references[0].x, 55);
  EXPECT_EQ(p.references[1].label, "floor: ping-pong p10 round trip");
  EXPECT_EQ(p.references[1].x, 110);
  // The axis follows the data: 55 ns .. 5 us (91x) is log; 55 .. 500 ns (9.1x) linear.
  EXPECT_EQ(p.x_scale, plot::AxisScale::kAuto);
  EXPECT_NE(plot::cdf_svg(p).find(">latency (log scale)</text>"), std::string::npos);
  p.series = {{"x", {60, 500}}};
  EXPECT_NE(plot::cdf_svg(p).find(">latency</text>"), std::string::npos);
}

// Every repetition's kernel-only time and the floor's go to the plot (its boxes need the spread, not the medians).
TEST(BenchPlots, KernelPlotHasARowPerCaseWithEveryRepetitionAndItsFloors) {
  SuiteResult r = sample_result();
  CaseResult unmeasured = r.cases[0];
  unmeasured.info.name = "unmeasured";
  unmeasured.doorbell_samples.clear();
  r.cases.push_back(unmeasured);
  plot::BoxPlot p = kernel_floor_plot(r);
  ASSERT_EQ(p.rows.size(), 2u);  // the case without samples is left out
  EXPECT_EQ(p.rows[0].label, "matmul 512x512x512 (sgemm)");
  EXPECT_EQ(p.rows[0].values, (std::vector<double>{1.3e6, 1.1e6, 1.2e6}));
  EXPECT_EQ(p.rows[0].floor, (std::vector<double>{1.4e6, 1.3e6, 1.25e6}));
  EXPECT_EQ(p.rows[1].label, "sum 1e7 (sum)");
  EXPECT_EQ(p.rows[1].values, (std::vector<double>{8e5, 9e5, 7e5}));
  EXPECT_TRUE(p.rows[1].floor.empty());  // unavailable
  EXPECT_EQ(p.title, "Kernel-only time against this machine's floor (5 runs each, 2 threads)");
  std::string svg = plot::box_svg(p);
  EXPECT_EQ(test::xml_problem(svg), "");
  // 700 us .. 1.4 ms: 2x, a linear axis; matmul's median 1.2 ms against the floor's 1.3 ms.
  EXPECT_NE(svg.find(">time of one run</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0.9x</text>"), std::string::npos);
  EXPECT_NE(svg.find(">no floor</text>"), std::string::npos);
}

// The latency section's rows become one CDF per device and path for the compared paths only, with each device's
// distinct floors; a third file is written only when the section has such rows.
TEST(BenchPlots, LatencySectionPlotHasACdfPerDeviceAndComparedPath) {
  SuiteResult r = sample_result();
  EXPECT_TRUE(latency_section_cdf_plot(r).series.empty());
  LatencyRow start{"CPU all cores", "2 workers", "submit -> kernel start", {90, 95, 400}, 95, 400, 400, 400,
                   "ping-pong one way", {55}, 55, 0};
  LatencyRow replay = start;
  replay.path = "jit replay x+1 (3 floats)";
  replay.floor = "ping-pong round trip", replay.floor_ns = 110;
  LatencyRow copy = start;
  copy.path = "copy 8 MiB: submit -> done";  // not a compared path
  LatencyRow nv = start;
  nv.device = "NV emulated";
  nv.samples_ns = {1800, 2000};
  r.latency_section.rows = {start, replay, copy, nv};
  plot::CdfPlot p = latency_section_cdf_plot(r);
  ASSERT_EQ(p.series.size(), 3u);
  EXPECT_EQ(p.series[0].label, "CPU all cores: submit -> kernel start");
  EXPECT_EQ(p.series[1].label, "CPU all cores: jit replay x+1 (3 floats)");
  EXPECT_EQ(p.series[2].label, "NV emulated: submit -> kernel start");
  EXPECT_EQ(p.series[2].samples, (std::vector<double>{1800, 2000}));
  ASSERT_EQ(p.references.size(), 3u);  // CPU one way, CPU round trip, NV one way
  EXPECT_EQ(p.references[0].label, "floor: CPU all cores ping-pong one way");
  EXPECT_EQ(p.references[1].x, 110);
  std::string dir = temp_dir("section");
  check_plot_dir(dir);
  std::vector<std::string> written = write_suite_plots(r, dir);
  ASSERT_EQ(written.size(), 3u);
  EXPECT_EQ(written[2], dir + "/latency_devices_cdf.svg");
  // `bench --latency` measures the section alone: only its plot is written.
  r.latency.clear();
  r.cases.clear();
  written = write_suite_plots(r, dir);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0], dir + "/latency_devices_cdf.svg");
  std::filesystem::remove_all(dir);
}

TEST(BenchPlots, WritesBothFilesIntoTheFolderWellFormed) {
  std::string dir = temp_dir("write");
  check_plot_dir(dir + "/nested");  // creates it and its parent
  ASSERT_TRUE(std::filesystem::is_directory(dir + "/nested"));
  std::vector<std::string> written = write_suite_plots(sample_result(), dir + "/nested");
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(written[0], dir + "/nested/latency_cdf.svg");
  EXPECT_EQ(written[1], dir + "/nested/kernel_vs_floor.svg");
  for (const std::string& path : written) {
    std::ifstream f(path);
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_EQ(test::xml_problem(text.str()), "") << path;
    EXPECT_NE(text.str().find("</svg>"), std::string::npos) << path;
  }
  std::filesystem::remove_all(dir);
}

void expect_refused(const std::string& dir, const std::string& message) {
  try {
    check_plot_dir(dir);
    FAIL() << "expected " << dir << " to be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(BenchPlots, AFolderThatCannotBeWrittenIsRefusedByName) {
  std::string dir = temp_dir("refuse");
  std::filesystem::create_directories(dir);
  std::string file = dir + "/a-file";
  std::ofstream(file) << "x";
  expect_refused(file, "cannot write the plots to '" + file + "': it is a file; expected a folder");
  expect_refused(file + "/sub",
                 "cannot write the plots to '" + file + "/sub': cannot create the folder (Not a directory)");
  expect_refused("", "cannot write the plots to '': the path is empty; expected a folder");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace doorbell::bench
