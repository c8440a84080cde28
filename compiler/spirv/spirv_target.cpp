#include "compiler/spirv/spirv_target.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "compiler/gpu/gpu_target.h"
#include "compiler/pipeline.h"
#include "compiler/spirv/spirv_module.h"
#include "compiler/spirv/spirv_renderer.h"
#include "compiler/subprocess.h"

namespace doorbell {
namespace {

// DOORBELL_SPIRV_VAL=1: every compiled module is checked by spirv-val (the vk.* CI runs set it).
bool validate_enabled() {
  const char* e = std::getenv("DOORBELL_SPIRV_VAL");
  return e != nullptr && *e != '\0' && std::string(e) != "0";
}

// `spirv-val --target-env vulkan1.2` of the words; throws naming the kernel and spirv-val's message.
void validate(const std::vector<uint32_t>& words, const std::string& name) {
  const std::optional<std::string> tool = find_executable({"spirv-val"});  // looked up each time: PATH may change
  if (!tool)
    throw std::runtime_error("SPIRV target: DOORBELL_SPIRV_VAL=1 but spirv-val is not on PATH to validate kernel '" + name +
                             "'; install the Debian package spirv-tools");
  ScratchDir dir("doorbell-spirv-val");
  const auto module = dir.path() / "kernel.spv", log = dir.path() / "spirv-val.log";
  {
    std::ofstream out(module, std::ios::binary);
    std::string bytes = spirv::words_to_bytes(words);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("SPIRV target: cannot write " + module.string() + " for spirv-val");
  }
  ProcessResult r = run_process({*tool, "--target-env", "vulkan1.2", module.string()}, log);
  if (!r.ok())
    throw std::runtime_error("SPIRV target: spirv-val rejects kernel '" + name + "' (" + r.how() + "): " + read_whole_file(log));
}

class SpirvTarget final : public Target {
 public:
  explicit SpirvTarget(const SpirvDeviceCaps& caps) : caps_(caps) {
    if (!caps_.int64)
      throw std::invalid_argument("SPIRV target: device '" + caps_.device_name +
                                  "' lacks shaderInt64, which every kernel needs for its 64-bit buffer addresses");
    gpu_ = GpuTarget{GpuVendor::VK, "vulkan1.2", static_cast<int>(caps_.subgroup_size), caps_.max_threads_per_block,
                     caps_.max_local, caps_.max_global, caps_.max_shared_bytes};
    options_.renderer = "SPIRV";
    options_.gpu = &gpu_;
    options_.late = spirv_lowering_options();
    name_ = "SPIRV " + gpu_.arch + " " + caps_.device_name;
    auto flag = [](bool b) { return b ? '1' : '0'; };
    cache_key_ = "SPIRV|" + gpu_.arch + "|" + caps_.device_name + "|" + caps_.driver + "|sg" + std::to_string(caps_.subgroup_size) +
                 "|t" + std::to_string(caps_.max_threads_per_block) + "|l" + std::to_string(caps_.max_local[0]) + "," +
                 std::to_string(caps_.max_local[1]) + "," + std::to_string(caps_.max_local[2]) + "|g" +
                 std::to_string(caps_.max_global[0]) + "," + std::to_string(caps_.max_global[1]) + "," +
                 std::to_string(caps_.max_global[2]) + "|s" + std::to_string(caps_.max_shared_bytes) + "|" +
                 flag(caps_.int8) + flag(caps_.int16) + flag(caps_.int64) + flag(caps_.float16) + flag(caps_.float64) +
                 flag(caps_.storage8) + flag(caps_.storage16) + flag(caps_.preserve_nan16) + flag(caps_.preserve_nan32) +
                 flag(caps_.preserve_nan64);
  }

  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  const LoweringOptions& options() const override { return options_; }

  LoweredKernel lower(const UOp& sink, bool optimize) const override {
    return gpu_pipeline(sink, gpu_, {.optimize = optimize, .dims = {}, .late_lowering = true, .late = &options_.late});
  }

  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>& statements) const override {
    (void)statements;  // the renderer linearizes the kernel itself, as the PTX renderer does
    return render_spirv(name, kernel, caps_).text();
  }

  // The words of exactly the SOURCE text (what is printed is what runs); no external tool unless validating.
  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<uint32_t> words = spirv::assemble(source);
    if (validate_enabled()) validate(words, name);
    CompiledBinary b;
    b.bytes = spirv::words_to_bytes(words);
    b.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return b;
  }

 private:
  SpirvDeviceCaps caps_;
  GpuTarget gpu_;
  LoweringOptions options_;
  std::string name_, cache_key_;
};

}  // namespace

std::unique_ptr<Target> make_spirv_target(const SpirvDeviceCaps& caps) { return std::make_unique<SpirvTarget>(caps); }

SpirvDeviceCaps lavapipe_caps() {
  // vulkaninfo on Debian 12 (mesa-vulkan-drivers 22.3.6, lavapipe): see firmware-notes/spirv-kernels.md
  SpirvDeviceCaps c;
  c.device_name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  c.driver = "Mesa 22.3.6";
  c.subgroup_size = 8;
  c.max_threads_per_block = 1024;
  c.max_local = {1024, 1024, 1024};
  c.max_global = {65535, 65535, 65535};
  c.max_shared_bytes = 32768;
  c.int8 = c.int16 = c.int64 = c.float16 = c.float64 = true;
  c.storage8 = c.storage16 = true;
  c.preserve_nan16 = c.preserve_nan32 = c.preserve_nan64 = true;
  return c;
}

}  // namespace doorbell
