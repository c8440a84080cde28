// The timeline trace (hcq/trace.h) of a run on the NV device on the emulated GPU (MOCKGPU=1, set by this binary): a
// kernel on the compute queue's track with its name and launch dims, a copy on the copy engine's queue with its bytes,
// a signal -> wait flow from each queue, all on the host's clock: the emulated GPU stamps with its own timer (the
// wall-clock epoch RM gives a Hopper's PTIMER, mockgpu/nv/ptimer.h), which the device converts by its calibration.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/nv/nv_device.h"
#include "hcq/run_linear.h"
#include "hcq/trace.h"
#include "scheduler/schedule.h"
#include "tests/hcq/trace_file.h"

namespace doorbell {
namespace {

using testing::TraceEvent;
using testing::TraceFile;

// DEV=NV on the emulated GPU for this process (the device is opened on first use, after this).
const bool kOnTheEmulatedGpu = [] {
  setenv("MOCKGPU", "1", 1);
  set_default_device_name("NV");
  return true;
}();

// How far a converted stamp may lie from the host time of its event (NvDevice::clock_calibration), in the trace's
// microseconds.
double clock_bound_us() {
  return static_cast<double>(dynamic_cast<nv::NvDevice&>(device("NV")).clock_calibration().uncertainty_ns) / 1e3;
}

UOp copy_call(const UOp& dst, const UOp& src) {
  return UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dtypes::void_, {}), dst, src});
}

TEST(TraceNv, AnNvRunHasAComputeAndACopyTrackWithKernelsCopiesAndFlows) {
  ASSERT_TRUE(kOnTheEmulatedGpu);
  const std::string path = ::testing::TempDir() + "doorbell_trace_nv.json";
  Tensor x = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}).realize();
  ASSERT_EQ(x.device(), "NV");
  const std::vector<int32_t> values = {9, 8, 7, 6, 5, 4};
  UOp a = new_buffer(dtypes::int32, 6, "NV"), b = new_buffer(dtypes::int32, 6, "NV");
  write_buffer(a, std::as_bytes(std::span(values)));

  trace::start();
  UOp compiled = compile_linear((x * 1.5f - 0.25f).exp2().schedule_linear());
  run_linear(compiled);
  run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {copy_call(b, a)}));
  trace::stop(path);

  std::vector<int32_t> copied(6);
  read_buffer(b, std::as_writable_bytes(std::span(copied)));
  EXPECT_EQ(copied, values);

  const TraceFile t = TraceFile::load(path);
  std::string kernel_name;
  for (const UOp& call : compiled.src())
    if (call.src(0).op() == Ops::PROGRAM) kernel_name = program_info(call.src(0)).name;
  std::vector<const TraceEvent*> kernels = t.find("X", "kernel", "NV", "compute");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]->name, kernel_name);
  const testing::JsonValue& args = kernels[0]->json->at("args");
  const ProgramInfo& info = program_info(compiled.src(0).src(0));
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(args.at("grid").array.at(i).number, static_cast<double>(info.global_size[i]));
    EXPECT_EQ(args.at("block").array.at(i).number, static_cast<double>(info.local_size[i]));
  }
  // NV copies go on the copy engine's own channel: a track of their own.
  std::vector<const TraceEvent*> copies = t.find("X", "copy", "NV", "copy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]->json->at("args").at("bytes").number, 24);
  EXPECT_TRUE(t.find("X", "copy", "NV", "compute").empty());
  EXPECT_GE(testing::count_signal_to_wait_flows(t, "NV", "compute"), 1);
  EXPECT_GE(testing::count_signal_to_wait_flows(t, "NV", "copy"), 1);
  testing::expect_queue_tracks_in_order(t);
  bool within_run = false;
  const double bound = clock_bound_us();
  for (const TraceEvent* r : t.find("X", "run", "host"))
    within_run |= r->ts - bound <= kernels[0]->ts && kernels[0]->ts + kernels[0]->dur <= r->ts + r->dur + bound;
  EXPECT_TRUE(within_run) << "the emulated GPU's times are on the host's clock";
  std::remove(path.c_str());
}

// Each run's kernels ran after its submission began and before its wait ended: on the trace every kernel slice lies
// within [submit start, synchronize end] of its run, up to the calibration's bound. The GPU's timer reads ns since
// 1970, so a stamp handed to the trace unconverted lands decades away.
TEST(TraceNv, EveryKernelLiesWithinTheSubmitToWaitSpanOfItsRun) {
  ASSERT_TRUE(kOnTheEmulatedGpu);
  DOORBELL_SKIP_UNDER_PROFILE();
  Tensor x = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}).realize();
  ASSERT_EQ(x.device(), "NV");
  const std::vector<UOp> runs = {compile_linear((x * 2.0f + 1.0f).schedule_linear()),
                                 compile_linear((x - x.max()).exp2().schedule_linear()),
                                 compile_linear((x * x).sum().schedule_linear())};
  ASSERT_GT(std::abs(dynamic_cast<nv::NvDevice&>(device("NV")).clock_calibration().offset_ns), int64_t{1'000'000'000})
      << "the emulated GPU's timer must be far from the host's clock for this test to tell";
  const double bound = clock_bound_us();
  int kernels_seen = 0;
  for (size_t i = 0; i < runs.size(); i++) {
    const std::string path = ::testing::TempDir() + "doorbell_trace_nv_run" + std::to_string(i) + ".json";
    trace::start();
    run_linear(runs[i]);
    trace::stop(path);
    const TraceFile t = TraceFile::load(path);
    const std::vector<const TraceEvent*> submits = t.find("X", "submit", "host"), waits = t.find("X", "synchronize", "host");
    ASSERT_EQ(submits.size(), 1u) << "run " << i << ": one submission";
    ASSERT_EQ(waits.size(), 1u) << "run " << i << ": one wait";
    const double begin = submits[0]->ts, end = waits[0]->ts + waits[0]->dur;
    const std::vector<const TraceEvent*> kernels = t.find("X", "kernel", "NV", "compute");
    EXPECT_FALSE(kernels.empty()) << "run " << i;
    for (const TraceEvent* k : kernels) {
      EXPECT_GE(k->ts, begin - bound) << "run " << i << ": " << k->name << " starts before its submission (us, bound " << bound << ")";
      EXPECT_LE(k->ts + k->dur, end + bound) << "run " << i << ": " << k->name << " ends after its wait ended (us, bound " << bound << ")";
      kernels_seen++;
    }
    std::remove(path.c_str());
  }
  EXPECT_GE(kernels_seen, 3);
}

}  // namespace
}  // namespace doorbell
