// The op conformance suite (tests/e2e/op_conformance_test.cpp) as a SPIR-V corpus: this file is linked with that
// suite and registers a kernel observer (compiler/program.h), so every kernel the suite compiles for the CPU is
// recorded once per content key. After the suite has run, main renders each recorded kernel for lavapipe_caps()
// (optimized, and with NOOPT=1's launch dims only) and checks each module with `spirv-val --target-env vulkan1.2`.
// Built with the Vulkan loader (DOORBELL_SPIRV_LAVAPIPE), each kernel then also runs on lavapipe and its outputs are
// compared with the reference interpreter on edge-case and random inputs (tests/spirv/vk/lavapipe_runner.h).
// Exit status: the suite's, else 1 when a kernel fails, 77 (skipped) when spirv-val is not on PATH.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <unordered_set>

#include "compiler/c_renderer.h"
#include "compiler/program.h"
#include "compiler/spirv/spirv_renderer.h"
#include "compiler/spirv/spirv_target.h"
#include "spirv_tools.h"
#if DOORBELL_SPIRV_LAVAPIPE
#include "vk/lavapipe_runner.h"
#endif

namespace doorbell {
namespace {

std::mutex g_mutex;
std::unordered_set<std::string> g_seen;
std::vector<UOp> g_kernels;

void record(const UOp& sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (sink && sink.op() == Ops::SINK && g_seen.insert(sink.key().hex()).second) g_kernels.push_back(sink);
}

// Renders and validates every kernel; prints each failure; returns whether all passed.
bool validate_all(bool optimize) {
  const SpirvDeviceCaps caps = lavapipe_caps();
  std::unique_ptr<Target> target = make_spirv_target(caps);
  auto t0 = std::chrono::steady_clock::now();
  size_t ok = 0;
  for (const UOp& sink : g_kernels) {
    const std::string name = c_kernel_name(sink);
    try {
      testing::SpirvToolResult v = testing::spirv_val(render_spirv(name, target->lower(sink, optimize), caps).words());
      if (v.exit_code == 0) ok++;
      else std::printf("FAILED %s: spirv-val: %s\n", name.c_str(), v.output.substr(0, 1500).c_str());
    } catch (const std::exception& e) {
      std::printf("FAILED %s: %s\n", name.c_str(), std::string(e.what()).substr(0, 1500).c_str());
    }
  }
  std::printf("op conformance%s: %zu of %zu kernels pass spirv-val (%.1f s)\n", optimize ? "" : " (NOOPT)", ok, g_kernels.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return ok == g_kernels.size();
}

}  // namespace
}  // namespace doorbell

int main(int argc, char** argv) {
  using namespace doorbell;
  ::testing::InitGoogleTest(&argc, argv);
  set_kernel_observer(record);
  int rc = RUN_ALL_TESTS();
  set_kernel_observer(nullptr);
  if (rc != 0) return rc;
  if (g_kernels.empty()) {
    std::printf("FAILED: the suite compiled no kernels\n");
    return 1;
  }
  if (!doorbell::testing::find_spirv_tool("spirv-val")) {
    std::printf("SKIPPED: spirv-val is not on PATH; install the Debian package spirv-tools\n");
    return 77;
  }
  bool ok = validate_all(true);
  ok &= validate_all(false);
#if DOORBELL_SPIRV_LAVAPIPE
  if (spirv_test::Lavapipe* vk = spirv_test::Lavapipe::get()) {
    spirv_test::Comparison c = spirv_test::run_and_compare(vk, g_kernels, "op conformance");
    std::printf("op conformance on lavapipe: interpreter %.1f s, lavapipe %.1f s\n", c.interpreter_s, c.lavapipe_s);
    for (const std::string& f : c.failures) std::printf("FAILED %s\n", f.c_str());
    ok &= c.failures.empty() && c.matched == c.ran;
  } else {
    std::printf("no lavapipe Vulkan device: the kernels were validated, not run\n");
  }
#endif
  return ok ? 0 : 1;
}
