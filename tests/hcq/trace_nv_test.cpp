// The timeline trace (hcq/trace.h) of a run on the NV device on the emulated GPU (MOCKGPU=1, set by this binary): a
// kernel on the compute queue's track with its name and launch dims, a copy on the copy engine's queue with its bytes,
// a signal -> wait flow from each queue, all on the host's clock (the emulator stamps with CLOCK_MONOTONIC).
#include <gtest/gtest.h>

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
  for (const TraceEvent* r : t.find("X", "run", "host"))
    within_run |= r->ts <= kernels[0]->ts && kernels[0]->ts + kernels[0]->dur <= r->ts + r->dur;
  EXPECT_TRUE(within_run) << "the emulated GPU's times are on the host's clock";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace doorbell
