// The device check's experiments (`doorbell check --device NV --experiments`): what only an NVIDIA GPU can settle
// about how doorbell launches on Hopper, each a question with alternatives (NvLaunchVariant, hcq/nv/nv_variants.h):
//   a  the word at c[0][0x208] that sm_90 code uses as the descriptor of every global load and store;
//   b  QMD_TYPE on V04 QMDs: GRID_CTA (2) or QUEUE (0);
//   c  REGISTER_COUNT: the cubin's EIATTR_REGCOUNT as is, or + 2;
//   d  ordering after a broken chain: kernel A writes, memory barrier, kernel B reads A's output, with and without
//      a WAIT_FOR_IDLE after the barrier, many repeats, wrong results counted;
//   e  1000 separate submissions each signalling, each waited with a short timeout: lost and late ones counted.
// Each alternative runs on a fresh NvDevice, so a fault in one poisons none of the next; a fault is an outcome,
// reported with the device's fault report, not a crash. On the emulated GPU (MOCKGPU=1) each alternative must give
// the outcome the emulator defines for it (VariantOutcome::expected_on_emulator), so CI runs the same code.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace doorbell {

struct VariantOutcome {
  std::string name;     // "0x0 (as now)"
  std::string outcome;  // "ok"; "wrong": it ran but gave wrong results; "fault": the device reported one; "error"
  std::string detail;   // what was wrong, or the fault report, or the error's message
  // What the emulated GPU defines for this alternative. It reads no QMD_TYPE, REGISTER_COUNT or c[0][0x208] (its SM
  // interprets PTX) and runs one channel's grids one after the other, so every alternative is "ok" there.
  std::string expected_on_emulator = "ok";
  std::vector<std::pair<std::string, double>> figures;  // counts and times the alternative measured
};

struct Experiment {
  std::string id;        // "a" .. "e"
  std::string name;      // "cbuf0_global_descriptor"
  std::string question;  // one line
  std::vector<VariantOutcome> variants;
  std::string verdict;   // one line: which alternatives worked, or that all failed and how
};

// Runs the five experiments on GPU `gpu_index` of the "nvidia" driver (the emulated one under MOCKGPU=1), printing a
// line per alternative and a verdict line per experiment to `out`. They run c, d, e, b, a (the alternatives most
// likely to wedge a GPU last) and come back in the order a to e.
std::vector<Experiment> run_nv_experiments(int gpu_index, bool emulated, std::FILE* out);

// The alternatives whose outcome is not the one the emulated GPU defines, one "experiment/alternative: outcome
// (detail)" line each; empty when all match.
std::vector<std::string> emulator_mismatches(const std::vector<Experiment>& experiments);

// A JSON array of the experiments, indented by `indent` spaces.
std::string experiments_json(const std::vector<Experiment>& experiments, int indent);

}  // namespace doorbell
