#include "tools/nv_experiments.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>

#include "hcq/host_buffers.h"
#include "hcq/nv/nv_device.h"
#include "hcq/nv/nv_program.h"
#include "hcq/nv/nv_variants.h"
#include "hcq/wait_primitives.h"
#include "tools/device_kernel.h"
#include "hcq/json_text.h"

namespace doorbell {
namespace {

using nv::NvDevice;
using nv::NvLaunchVariant;
using nv::NvMemory;
using std::chrono::milliseconds;

// What each experiment launches. The emulated SM interprets PTX on one host thread, so it gets small sizes: there
// the experiments show that the path works and that the emulator's outcomes hold, not hardware behaviour.
struct Sizes {
  int64_t fill;            // elements of data[i] = i
  int64_t order;           // elements kernel A writes and kernel B reads back reversed
  int order_repeats;       // A, barrier, B submissions per alternative
  int submissions;         // of the doorbell loop
  milliseconds wait;       // for one launch to complete before it counts as hung
  milliseconds doorbell;   // for one submission of the loop before it counts as lost
  int max_lost;            // lost submissions after which the loop stops (each costs `doorbell`)
};

Sizes sizes_for(bool emulated) {
  if (emulated) return {1 << 10, 1 << 10, 4, 1000, milliseconds(60000), milliseconds(10000), 5};
  return {1 << 16, 1 << 21, 100, 1000, milliseconds(5000), milliseconds(250), 5};
}

// An alternative on a fresh device: `body` returns "" when the results were right, else what was wrong.
VariantOutcome run_variant(int gpu_index, std::string name, const NvLaunchVariant& variant,
                           const std::function<std::string(NvDevice&, VariantOutcome&)>& body) {
  VariantOutcome r;
  r.name = std::move(name);
  std::unique_ptr<NvDevice> d;
  try {
    d = NvDevice::open(gpu_index);
    d->set_launch_variant(variant);
    const std::string wrong = body(*d, r);
    r.outcome = wrong.empty() ? "ok" : "wrong";
    r.detail = wrong;
  } catch (const std::exception& e) {
    r.outcome = "error";
    r.detail = e.what();
  }
  // A fault the results did not show (a later channel error, an MMU fault) still decides the outcome.
  if (d != nullptr) {
    if (std::string fault = d->fault_report(); !fault.empty()) {
      r.detail = r.detail.empty() || r.detail.find(fault) != std::string::npos ? fault : fault + " (" + r.detail + ")";
      r.outcome = "fault";
    }
  }
  return r;  // the device goes here: its channels stop before its memory is freed, faulted or not
}

std::string wrong_element(const std::string& what, int64_t i, double got, double want, int64_t wrong_count) {
  return what + "[" + std::to_string(i) + "] is " + json_figure(got) + ", expected " + json_figure(want) + " (" +
         std::to_string(wrong_count) + " wrong)";
}

// data[i] = src[i] + 1 with src[i] = i (a load and a store per element), then a 64 x 96 x 80 matmul of small
// integers (exact in float32), both checked on the host.
std::string fill_and_matmul(NvDevice& d, const Sizes& s, VariantOutcome& r) {
  Signal& done = d.new_signal("experiment done");
  Tensor src = Tensor::arange(s.fill).cast(dtypes::int32).realize();  // host values (frontend/creation.cpp)
  DeviceKernel fill = load_device_kernel(d, src + 1);
  NvMemory data = d.alloc(4 * s.fill), msrc = d.alloc(4 * s.fill);
  std::memcpy(msrc.cpu, buffer_bytes(fill.call.src(2)).data(), 4 * s.fill);
  std::memset(data.cpu, 0xff, 4 * s.fill);
  HWQueue().exec(*fill.program, std::vector<uint64_t>{data.va, msrc.va}, fill.grid, fill.block).signal(done, 1).submit(d);
  done.wait(1, s.wait);
  std::vector<int32_t> got(s.fill);
  std::memcpy(got.data(), data.cpu, 4 * s.fill);  // one read of the mapping: video memory reads are slow
  int64_t wrong = 0, first = -1;
  for (int64_t i = 0; i < s.fill; i++)
    if (got[i] != i + 1 && wrong++ == 0) first = i;
  if (wrong) return wrong_element("data", first, got[first], static_cast<double>(first + 1), wrong);

  constexpr int64_t M = 64, K = 96, N = 80;
  Tensor a = ((Tensor::arange(M * K) % 7) - 3).cast(dtypes::float32).reshape({M, K}).realize();
  Tensor b = ((Tensor::arange(K * N) % 5) - 2).cast(dtypes::float32).reshape({K, N}).realize();
  DeviceKernel mm = load_device_kernel(d, a.matmul(b));
  if (!d.emulated()) r.figures.emplace_back("matmul_registers", static_cast<const nv::NvProgram*>(mm.program)->registers);
  const float* pa = reinterpret_cast<const float*>(buffer_bytes(mm.call.src(2)).data());
  const float* pb = reinterpret_cast<const float*>(buffer_bytes(mm.call.src(3)).data());
  NvMemory out = d.alloc(4 * M * N), ma = d.alloc(4 * M * K), mb = d.alloc(4 * K * N);
  std::memcpy(ma.cpu, pa, 4 * M * K);
  std::memcpy(mb.cpu, pb, 4 * K * N);
  std::memset(out.cpu, 0xff, 4 * M * N);
  HWQueue().exec(*mm.program, std::vector<uint64_t>{out.va, ma.va, mb.va}, mm.grid, mm.block).signal(done, 2).submit(d);
  done.wait(2, s.wait);
  std::vector<float> o(M * N);
  std::memcpy(o.data(), out.cpu, 4 * M * N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float want = 0;
      for (int64_t k = 0; k < K; k++) want += pa[i * K + k] * pb[k * N + j];
      if (o[i * N + j] != want && wrong++ == 0) first = i * N + j;
    }
  if (wrong) {
    float want = 0;
    for (int64_t k = 0; k < K; k++) want += pa[(first / N) * K + k] * pb[k * N + first % N];
    return wrong_element("matmul", first, o[first], want, wrong);
  }
  return "";
}

// Kernel A adds 1 to x (video memory), a memory barrier, kernel B writes y[i] = 2 * x[n-1-i] (host memory): B's first
// blocks read what A's last blocks write, so B starting before A finished shows as wrong elements.
std::string order_after_barrier(NvDevice& d, const Sizes& s, VariantOutcome& r) {
  const int64_t n = s.order;
  Tensor x = Tensor::zeros({n}).contiguous().realize();
  Tensor x_for_b = Tensor::zeros({n}).contiguous().realize();
  DeviceKernel add = load_device_kernel(d, x.assign(x + 1));
  DeviceKernel twice = load_device_kernel(d, x_for_b.flip(0) * 2);
  NvMemory mx = d.alloc(4 * n), my = d.alloc(4 * n, /*system_memory=*/true);
  std::memset(mx.cpu, 0, 4 * n);
  Signal& done = d.new_signal("order done");
  int64_t wrong_repeats = 0, wrong_elements = 0;
  std::string first;
  for (int rep = 1; rep <= s.order_repeats; rep++) {
    std::memset(my.cpu, 0, 4 * n);
    HWQueue()
        .exec(*add.program, std::vector<uint64_t>{mx.va}, add.grid, add.block)
        .memory_barrier()
        .exec(*twice.program, std::vector<uint64_t>{my.va, mx.va}, twice.grid, twice.block)
        .signal(done, rep)
        .submit(d);
    done.wait(rep, s.wait);
    const float* y = reinterpret_cast<const float*>(my.cpu);
    const float want = 2.0f * rep;
    int64_t wrong_here = 0, first_here = -1;
    for (int64_t i = 0; i < n; i++)
      if (y[i] != want && wrong_here++ == 0) first_here = i;
    if (wrong_here && first.empty())
      first = "repeat " + std::to_string(rep) + ": " + wrong_element("y", first_here, y[first_here], want, wrong_here);
    wrong_elements += wrong_here;
    wrong_repeats += wrong_here != 0;
  }
  r.figures = {{"repeats", s.order_repeats}, {"elements", static_cast<double>(n)},
               {"wrong_repeats", static_cast<double>(wrong_repeats)}, {"wrong_elements", static_cast<double>(wrong_elements)}};
  if (wrong_repeats == 0) return "";
  return std::to_string(wrong_repeats) + " of " + std::to_string(s.order_repeats) + " repeats read stale values; first: " + first;
}

// 1000 submissions of one signal each, each waited for with a short timeout; a lost doorbell shows as a timeout
// (the submission sits until the next doorbell), a late one as a slow wait.
std::string doorbell_loop(NvDevice& d, const Sizes& s, VariantOutcome& r) {
  Signal& sig = d.new_signal("doorbell loop");
  int lost = 0, late = 0, sent = 0;
  std::vector<double> us;
  for (int i = 1; i <= s.submissions && lost < s.max_lost; i++, sent++) {
    const int64_t t0 = monotonic_ns();
    HWQueue().signal(sig, i).submit(d);
    const bool seen = sig.wait_for(i, s.doorbell);
    const double took = (monotonic_ns() - t0) / 1e3;
    if (!seen) {
      lost++;
      continue;
    }
    us.push_back(took);
    late += took > 1000.0;  // a millisecond: far beyond a submission's round trip, far below the timeout
  }
  std::sort(us.begin(), us.end());
  r.figures = {{"submissions", static_cast<double>(sent)},
               {"lost", static_cast<double>(lost)},
               {"late_over_1ms", static_cast<double>(late)},
               {"median_us", us.empty() ? 0.0 : us[us.size() / 2]},
               {"max_us", us.empty() ? 0.0 : us.back()}};
  if (lost == 0) return "";
  return std::to_string(lost) + " of " + std::to_string(sent) + " submissions not seen within " +
         std::to_string(s.doorbell.count()) + " ms" + (lost >= s.max_lost ? " (stopped there)" : "");
}

std::string verdict(const Experiment& e) {
  std::string ok, failed;
  for (const VariantOutcome& v : e.variants) {
    if (v.outcome == "ok") ok += (ok.empty() ? "" : ", ") + v.name;
    else failed += (failed.empty() ? "" : "; ") + v.name + ": " + v.outcome + " (" + v.detail + ")";
  }
  if (ok.empty()) return "all failed: " + failed;
  return "works with " + ok + (failed.empty() ? "" : "; fails with " + failed);
}

void print(const Experiment& e, std::FILE* out) {
  std::fprintf(out, "experiment %s: %s\n", e.id.c_str(), e.question.c_str());
  for (const VariantOutcome& v : e.variants) {
    std::string figures;
    for (const auto& [k, value] : v.figures) figures += " " + k + "=" + json_figure(value);
    std::fprintf(out, "    %-44s %-6s%s%s%s\n", v.name.c_str(), v.outcome.c_str(), figures.c_str(), v.detail.empty() ? "" : "  ",
                 v.detail.c_str());
  }
  std::fprintf(out, "  experiment %s (%s): %s\n", e.id.c_str(), e.name.c_str(), e.verdict.c_str());
  std::fflush(out);
}

}  // namespace

std::vector<Experiment> run_nv_experiments(int gpu_index, bool emulated, std::FILE* out) {
  const Sizes s = sizes_for(emulated);
  auto launches = [&](NvDevice& d, VariantOutcome& r) { return fill_and_matmul(d, s, r); };
  auto order = [&](NvDevice& d, VariantOutcome& r) { return order_after_barrier(d, s, r); };
  auto loop = [&](NvDevice& d, VariantOutcome& r) { return doorbell_loop(d, s, r); };
  auto with = [](auto set) {
    NvLaunchVariant v;
    set(v);
    return v;
  };
  std::vector<Experiment> all;
  // An alternative, and its outcome on the emulated GPU when that is not "ok" (the emulator defines it).
  struct Alternative {
    std::string name;
    NvLaunchVariant variant;
    std::string expected_on_emulator = "ok";
  };
  auto run = [&](Experiment e, std::vector<Alternative> variants, const auto& body) {
    for (const Alternative& a : variants) {
      e.variants.push_back(run_variant(gpu_index, a.name, a.variant, body));
      e.variants.back().expected_on_emulator = a.expected_on_emulator;
    }
    e.verdict = verdict(e);
    print(e, out);
    all.push_back(std::move(e));
  };
  char normal[64], first[64];
  std::snprintf(normal, sizeof normal, "0x%llx (CUTLASS EVICT_NORMAL)", static_cast<unsigned long long>(nv::kCacheHintSm90EvictNormal));
  std::snprintf(first, sizeof first, "0x%llx (CUTLASS EVICT_FIRST)", static_cast<unsigned long long>(nv::kCacheHintSm90EvictFirst));
  // The alternatives that might wedge the GPU (a descriptor or QMD_TYPE it rejects) run last, so that a GPU that
  // does not recover from them still gave the other answers; the report lists the experiments a to e.
  run({"c", "register_count", "whether REGISTER_COUNT = EIATTR_REGCOUNT suffices or needs + 2", {}, ""},
      {{"EIATTR_REGCOUNT (as now, tinygrad)", NvLaunchVariant{}},
       {"EIATTR_REGCOUNT + 2 (Mesa NAK on SM70+)", with([](NvLaunchVariant& v) { v.register_count_extra = 2; })}},
      launches);
  run({"d", "order_after_barrier", "whether a grid after a memory barrier (chain broken) starts after the previous one ended", {}, ""},
      // The emulated compute engine runs a fresh SEND_PCAS grid before an earlier one that nothing waited for
      // (mockgpu/nv/mock_gpu_compute.cpp), so without the wait kernel B reads stale data there.
      {{"WAIT_FOR_IDLE + INVALIDATE_SHADER_CACHES_NO_WFI (as now)", NvLaunchVariant{}},
       {"INVALIDATE_SHADER_CACHES_NO_WFI only", with([](NvLaunchVariant& v) { v.wait_for_idle_after_barrier = false; }), "wrong"}},
      order);
  run({"e", "lost_doorbell", "whether any of 1000 separate submissions is lost or late", {}, ""},
      {{"fence, GPPut store, fence, doorbell store (as now)", NvLaunchVariant{}}}, loop);
  run({"b", "qmd_type", "which V04 QMD_TYPE launches a grid", {}, ""},
      {{"GRID_CTA 2 (as now, clcbc0qmd.h)", NvLaunchVariant{}},
       {"QUEUE 0 (Mesa NAK on V04)", with([](NvLaunchVariant& v) { v.qmd_type = nv::NVCBC0_QMDV04_00_QMD_TYPE_QUEUE; })}},
      launches);
  run({"a", "cbuf0_global_descriptor", "which c[0][0x208] lets sm_90 loads and stores work (data[i] = src[i] + 1, a matmul)", {}, ""},
      {{"0x0 (as now, tinygrad's zero fill)", NvLaunchVariant{}},
       {normal, with([](NvLaunchVariant& v) { v.global_memory_descriptor = nv::kCacheHintSm90EvictNormal; })},
       {first, with([](NvLaunchVariant& v) { v.global_memory_descriptor = nv::kCacheHintSm90EvictFirst; })}},
      launches);
  std::sort(all.begin(), all.end(), [](const Experiment& x, const Experiment& y) { return x.id < y.id; });
  return all;
}

std::vector<std::string> emulator_mismatches(const std::vector<Experiment>& experiments) {
  std::vector<std::string> lines;
  for (const Experiment& e : experiments)
    for (const VariantOutcome& v : e.variants)
      if (v.outcome != v.expected_on_emulator)
        lines.push_back(e.id + " " + e.name + " / " + v.name + ": " + v.outcome + ", expected " + v.expected_on_emulator +
                        " on the emulated GPU (" + v.detail + ")");
  return lines;
}

std::string experiments_json(const std::vector<Experiment>& experiments, int indent) {
  const std::string pad(indent, ' ');
  std::string j = "[\n";
  for (size_t i = 0; i < experiments.size(); i++) {
    const Experiment& e = experiments[i];
    j += pad + "  {\"id\": " + json_quote(e.id) + ", \"name\": " + json_quote(e.name) + ", \"question\": " + json_quote(e.question) +
         ",\n" + pad + "   \"verdict\": " + json_quote(e.verdict) + ",\n" + pad + "   \"variants\": [\n";
    for (size_t k = 0; k < e.variants.size(); k++) {
      const VariantOutcome& v = e.variants[k];
      j += pad + "     {\"name\": " + json_quote(v.name) + ", \"outcome\": " + json_quote(v.outcome) +
           ", \"expected_on_emulator\": " + json_quote(v.expected_on_emulator) + ", \"detail\": " + json_quote(v.detail) +
           ", \"figures\": {";
      for (size_t f = 0; f < v.figures.size(); f++)
        j += (f ? ", " : "") + json_quote(v.figures[f].first) + ": " + json_figure(v.figures[f].second);
      j += "}}" + std::string(k + 1 < e.variants.size() ? "," : "") + "\n";
    }
    j += pad + "   ]}" + (i + 1 < experiments.size() ? "," : "") + "\n";
  }
  return j + pad + "]";
}

}  // namespace doorbell
