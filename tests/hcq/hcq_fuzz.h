// The HCQ fuzzer: random programs of exec, copy, signal and wait across queues ("streams") on two CPU devices and
// optionally a GPU (NV, AMD or VK, whose streams copy only), run and checked against a sequential model. A program is a list of abstract ops in one reference order; lowering turns it
// into HWQueue submissions, adding a signal and a wait wherever an op touches a cell that an op of another stream
// touched before it (so the reference order is the only order the HCQ contract allows for dependent ops), and
// submitting in an order that cannot deadlock (a wait only ever waits for a submission handed over before its own).
// Checks: every exec wrote what the model computes from its inputs at its place in the reference order (order); every
// signal reached its final value and every cell its final contents (completion); and every host wait ends within a
// watchdog, whose expiry is a failure that names what the devices wait for (no deadlock). shrink() deletes ops while
// the program still fails; describe() prints it.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hcq/hw_queue.h"

namespace doorbell {
class Device;
}

namespace doorbell::hcq_fuzz {

inline constexpr int kGpuDevice = 2;  // device indices: 0 "CPU", 1 "CPU:1", 2 the GPU (a program with one only)

inline constexpr int kLanes = 4;  // int64 lanes per cell; an exec splits its lanes over its cores
using Cell = std::array<int64_t, kLanes>;

enum class OpKind : uint8_t {
  kExec,      // stream: cell out = mix(cell in1, cell in2, k), over `cores` cores (0: every worker)
  kCopy,      // stream: cell out = cell in1
  kSync,      // stream waits for everything stream `other` did so far (a wait no data needs)
  kFlush,     // the stream's recorded commands are submitted (bound first when `bind`)
  kGate,      // the stream waits for the host, which opens the gate at its next read or at the end
  kHostRead,  // the host waits for the last write of cell in1 and checks the cell
};

struct Op {
  OpKind kind = OpKind::kExec;
  int stream = 0;
  int out = 0, in1 = 0, in2 = 0;
  int64_t k = 0;
  int cores = 0;
  int other = 0;
  bool bind = false;
};

struct Program {
  uint64_t seed = 0;
  std::array<uint32_t, 2> workers{1, 1};  // per device: "CPU" and "CPU:1"
  std::array<int64_t, 2> spin_ns{0, 0};   // 0: every handoff sleeps on a futex
  std::string gpu;                        // "": none; else the GPU's name ("NV", "AMD", "VK"): streams may run there
                                          // too, copies only (NV, AMD: on the copy engine; VK: vkCmdCopyBuffer)
  std::vector<int> stream_device;         // per stream
  std::vector<uint64_t> signal_stride;    // per stream: what each of its signals adds to its signal's value
  int cells = 0;
  std::vector<Op> ops;
};

// A deliberate bug, so that a test can show the checks catch it.
enum class Sabotage : uint8_t {
  kNone,
  kWrongConstant,  // the first exec runs with k + 1
  kWaitTooFar,     // the first wait on another stream waits for 2^64 - 1, which no stream reaches
};

// The lowered program: submissions in the order the host hands them over, and the host's steps between them.
struct LoweredCommand {
  CommandKind kind = CommandKind::kMemoryBarrier;
  int op = -1;  // exec, copy: the abstract op
  int signal = 0;
  uint64_t value = 0;
  int64_t k = 0;  // exec: the constant it runs with
};
struct Submission {
  int stream = 0;
  bool bind = false;
  std::vector<LoweredCommand> commands;
};
struct HostStep {
  enum Kind : uint8_t { kSubmit, kOpenGate, kRead } kind = kSubmit;
  int submission = 0;  // kSubmit
  int signal = 0;      // kRead: waits for it to reach value first (signal -1: nothing to wait for)
  uint64_t value = 0;  // kRead, kOpenGate
  int cell = 0;        // kRead
  Cell expect{};       // kRead
};
struct Plan {
  int signals = 0;  // one per stream, then the gate
  std::vector<Submission> submissions;
  std::vector<HostStep> steps;
  std::vector<uint64_t> final_values;  // per signal
  std::vector<Cell> final_cells;
  std::vector<Cell> exec_results;  // per op (exec only)
  size_t cross_waits = 0;          // waits of one stream on another
};

// `gpu`: "" for two CPU devices only, else the name of the GPU that opens as the third (RunOptions::open_gpu).
Program generate(uint64_t seed, const std::string& gpu = "");
// What cell `cell` holds before the program runs (distinct per cell and lane, so a copy or exec that reads too early
// reads something else).
Cell initial_cell(int cell);
Plan lower(const Program& program, Sabotage sabotage = Sabotage::kNone);

struct RunOptions {
  std::chrono::milliseconds watchdog{10'000};
  Sabotage sabotage = Sabotage::kNone;
  // Opens a fresh GPU for a program with GPU streams (a test linked with the emulator, or one with a Vulkan device,
  // passes one). Its storage (Device::allocate_storage) holds the cells, so it must be mapped for the host: the CPU
  // devices' execs read and write the same cells through that mapping.
  std::function<std::unique_ptr<Device>()> open_gpu{};
};
// Runs the program on two fresh CPU devices (and a fresh GPU from open_gpu); "" when every check passes, else the
// first failure.
std::string run(const Program& program, const RunOptions& options);
// Deletes ops (halves, then smaller pieces, then single ops) while run() still fails; `runs` counts the runs.
Program shrink(Program program, const RunOptions& options, int* runs = nullptr);
// The devices, streams and lowered submissions and host steps, one line each.
std::string describe(const Program& program, Sabotage sabotage = Sabotage::kNone);

}  // namespace doorbell::hcq_fuzz
