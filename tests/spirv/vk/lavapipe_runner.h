// A minimal Vulkan compute launch on lavapipe for the SPIR-V renderer's tests (not the Vulkan device, hcq/vk/): one
// device with the features the renderer uses (and the Khronos validation layer where installed), buffers with device
// addresses, one kernel per submit per compiler/spirv/spirv_kernel_abi.h; and the comparison of a kernel's outputs
// with the reference interpreter (hcq/ref/ref_interpreter.h) on the same edge-case and random inputs.
#pragma once
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/c_renderer.h"
#include "compiler/kernel_estimates.h"
#include "compiler/spirv/spirv_kernel_abi.h"
#include "compiler/spirv/spirv_renderer.h"
#include "compiler/spirv/spirv_target.h"
#include "hcq/ref/ref_interpreter.h"
#include "ir/kernel_variables.h"
#include "ir/printer.h"

namespace doorbell::spirv_test {

#define DOORBELL_TEST_VK_CHECK(call)                                                                                   \
  do {                                                                                                   \
    VkResult r_ = (call);                                                                                \
    if (r_ != VK_SUCCESS) throw std::runtime_error(std::string(#call) + " failed: " + std::to_string(r_)); \
  } while (0)

// A Vulkan create-info struct zeroed, with its type and chain.
template <class T>
inline T info(VkStructureType type, const void* next = nullptr) {
  T x{};
  x.sType = type;
  x.pNext = const_cast<void*>(next);
  return x;
}

// One lavapipe device with the features the renderer uses, and a way to run one module.
class Lavapipe {
 public:
  // The validation layer's errors and warnings since the last take_messages().
  static std::vector<std::string>& messages() {
    static std::vector<std::string> m;
    return m;
  }

  static Lavapipe* get() {
    static Lavapipe* l = [] {
      auto* p = new Lavapipe();
      if (!p->init()) {
        delete p;
        return static_cast<Lavapipe*>(nullptr);
      }
      return p;
    }();
    return l;
  }

  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* host = nullptr;
    uint64_t address = 0;
  };

  Buffer make_buffer(size_t bytes) {
    Buffer b;
    auto bi = info<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = std::max<size_t>(bytes, 16);
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    DOORBELL_TEST_VK_CHECK(vkCreateBuffer(device_, &bi, nullptr, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, b.buffer, &req);
    auto flags = info<VkMemoryAllocateFlagsInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    auto ai = info<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = host_type_;
    DOORBELL_TEST_VK_CHECK(vkAllocateMemory(device_, &ai, nullptr, &b.memory));
    DOORBELL_TEST_VK_CHECK(vkBindBufferMemory(device_, b.buffer, b.memory, 0));
    DOORBELL_TEST_VK_CHECK(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.host));
    auto di = info<VkBufferDeviceAddressInfo>(VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
    di.buffer = b.buffer;
    b.address = vkGetBufferDeviceAddress(device_, &di);
    return b;
  }
  void free_buffer(Buffer& b) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    vkFreeMemory(device_, b.memory, nullptr);
  }

  // Runs the module's entry `name` over `groups` workgroups with the argument block at `args`.
  void run(const std::vector<uint32_t>& words, const std::string& name, std::array<int64_t, 3> groups, uint64_t args) {
    auto si = info<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    si.codeSize = words.size() * 4;
    si.pCode = words.data();
    VkShaderModule module;
    DOORBELL_TEST_VK_CHECK(vkCreateShaderModule(device_, &si, nullptr, &module));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kSpirvPushConstantBytes};
    auto li = info<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &range;
    VkPipelineLayout layout;
    DOORBELL_TEST_VK_CHECK(vkCreatePipelineLayout(device_, &li, nullptr, &layout));
    auto pi = info<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    pi.stage = info<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pi.stage.module = module;
    pi.stage.pName = name.c_str();
    pi.layout = layout;
    VkPipeline pipeline;
    DOORBELL_TEST_VK_CHECK(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pi, nullptr, &pipeline));
    auto ci = info<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ci.commandPool = pool_;
    ci.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ci.commandBufferCount = 1;
    VkCommandBuffer cmd;
    DOORBELL_TEST_VK_CHECK(vkAllocateCommandBuffers(device_, &ci, &cmd));
    auto bi = info<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    DOORBELL_TEST_VK_CHECK(vkBeginCommandBuffer(cmd, &bi));
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kSpirvPushConstantBytes, &args);
    vkCmdDispatch(cmd, static_cast<uint32_t>(groups[0]), static_cast<uint32_t>(groups[1]), static_cast<uint32_t>(groups[2]));
    DOORBELL_TEST_VK_CHECK(vkEndCommandBuffer(cmd));
    auto sub = info<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    sub.commandBufferCount = 1;
    sub.pCommandBuffers = &cmd;
    DOORBELL_TEST_VK_CHECK(vkQueueSubmit(queue_, 1, &sub, VK_NULL_HANDLE));
    DOORBELL_TEST_VK_CHECK(vkQueueWaitIdle(queue_));
    vkFreeCommandBuffers(device_, pool_, 1, &cmd);
    vkDestroyPipeline(device_, pipeline, nullptr);
    vkDestroyPipelineLayout(device_, layout, nullptr);
    vkDestroyShaderModule(device_, module, nullptr);
  }

 private:
  bool init() {
    auto app = info<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.apiVersion = VK_API_VERSION_1_2;
    auto ii = info<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    ii.pApplicationInfo = &app;
    // The validation layer where it is installed: its errors and warnings (a launch that breaks a valid-usage rule)
    // fail the test.
    uint32_t layers = 0;
    vkEnumerateInstanceLayerProperties(&layers, nullptr);
    std::vector<VkLayerProperties> props(layers);
    vkEnumerateInstanceLayerProperties(&layers, props.data());
    static const char* kLayer = "VK_LAYER_KHRONOS_validation";
    static const char* kDebugUtils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    for (const VkLayerProperties& l : props) validation_ = validation_ || std::string(l.layerName) == kLayer;
    auto messenger_info = info<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
    messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    messenger_info.pfnUserCallback = [](VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                        const VkDebugUtilsMessengerCallbackDataEXT* data, void*) -> VkBool32 {
      Lavapipe::messages().push_back(std::string("validation layer: ") + (data->pMessage ? data->pMessage : ""));
      return VK_FALSE;
    };
    if (validation_) {
      ii.enabledLayerCount = 1;
      ii.ppEnabledLayerNames = &kLayer;
      ii.enabledExtensionCount = 1;
      ii.ppEnabledExtensionNames = &kDebugUtils;
      ii.pNext = &messenger_info;  // the messages of vkCreateInstance itself
    }
    if (vkCreateInstance(&ii, nullptr, &instance_) != VK_SUCCESS) return false;
    if (validation_) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
      if (!create || create(instance_, &messenger_info, nullptr, &messenger_) != VK_SUCCESS) return false;
    }
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance_, &n, nullptr);
    std::vector<VkPhysicalDevice> devices(n);
    vkEnumeratePhysicalDevices(instance_, &n, devices.data());
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(d, &p);
      if (std::string(p.deviceName).rfind("llvmpipe", 0) == 0) physical_ = d;
    }
    if (!physical_) return false;
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
      if ((mp.memoryTypes[i].propertyFlags & want) == want) { host_type_ = i; break; }
    auto f12 = info<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    f12.bufferDeviceAddress = VK_TRUE;
    f12.shaderInt8 = VK_TRUE;
    f12.storageBuffer8BitAccess = VK_TRUE;
    auto f11 = info<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12);
    f11.storageBuffer16BitAccess = VK_TRUE;
    auto f = info<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11);
    f.features.shaderInt64 = f.features.shaderInt16 = f.features.shaderFloat64 = VK_TRUE;
    float priority = 1;
    auto qi = info<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    qi.queueFamilyIndex = 0;  // lavapipe's one family: graphics | compute | transfer
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    auto di = info<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f);
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    if (vkCreateDevice(physical_, &di, nullptr, &device_) != VK_SUCCESS) return false;
    vkGetDeviceQueue(device_, 0, 0, &queue_);
    auto pi = info<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pi.queueFamilyIndex = 0;
    return vkCreateCommandPool(device_, &pi, nullptr, &pool_) == VK_SUCCESS;
  }

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;

 public:
  bool validation() const { return validation_; }

 private:
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  uint32_t host_type_ = 0;
};

// Input values: edge cases first, then random ones, as the dtype's bytes. No float32/float64 subnormals: lavapipe
// may flush them (firmware-notes/spirv-kernels.md §5), C does not.
inline void fill(void* p, DType d, int64_t count, std::mt19937_64& rng) {
  auto* bytes = static_cast<uint8_t*>(p);
  const int size = d.itemsize();
  static const double kFloatEdges[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, INFINITY, -INFINITY, NAN, 65504.0, 65520.0,
                                       1.00146484375, 3.0e38, -1.0e10, 2147483648.0, 255.5, -128.75, 4294967296.0};
  // float16: 0, -0, 1, -1, inf, -inf, NaN, the largest, the smallest subnormal, a value with a long mantissa
  static const uint16_t kHalfEdges[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x0001, 0x3555};
  std::uniform_real_distribution<double> real(-300.0, 300.0);
  for (int64_t i = 0; i < count; i++) {
    uint64_t bits = rng();
    const bool edge = i < 10;
    switch (d.scalar_type) {
      case ScalarType::Bool: bits &= 1; break;
      case ScalarType::Float16: bits = edge ? kHalfEdges[i] : bits & 0xffff; break;
      case ScalarType::BFloat16:
        bits &= 0xffff;
        if (((bits >> 7) & 0xff) == 0) bits |= 0x0080;  // a float32 subnormal otherwise
        break;
      case ScalarType::Float32: {
        float f = static_cast<float>(i < static_cast<int64_t>(std::size(kFloatEdges)) ? kFloatEdges[i] : real(rng));
        uint32_t u;
        std::memcpy(&u, &f, 4);
        bits = u;
        break;
      }
      case ScalarType::Float64: {
        double v = i < static_cast<int64_t>(std::size(kFloatEdges)) ? kFloatEdges[i] : real(rng);
        std::memcpy(&bits, &v, 8);
        break;
      }
      default: {  // integers: 0, all ones, 1, the signed minimum and maximum, 7; then random bits
        const uint64_t top = uint64_t{1} << (8 * size - 1);
        const uint64_t edges[] = {0, ~uint64_t{0}, 1, top, top - 1, 7};
        if (i < 6) bits = edges[i];
      }
    }
    std::memcpy(bytes + i * size, &bits, static_cast<size_t>(size));
  }
}

// The value of a float element as a double (16-bit floats through their float32 value).
inline double as_double(const uint8_t* p, DType d) {
  if (d.scalar_type == ScalarType::Float64) { double v; std::memcpy(&v, p, 8); return v; }
  uint32_t u;
  if (d.scalar_type == ScalarType::Float32) {
    std::memcpy(&u, p, 4);
  } else {
    uint16_t h;
    std::memcpy(&h, p, 2);
    if (d.scalar_type == ScalarType::BFloat16) {
      u = uint32_t{h} << 16;
    } else {  // float16 -> float32, exactly
      uint32_t sign = uint32_t{h & 0x8000u} << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
      if (exp == 0) return (sign ? -1.0 : 1.0) * std::ldexp(static_cast<double>(man), -24);
      u = exp == 0x1f ? (sign | 0x7f800000u | (man << 13)) : (sign | ((exp + 112) << 23) | (man << 13));
    }
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// `approximate`: a kernel whose float results depend on summation order (a grouped REDUCE adds in another order than
// the interpreter) or on a transcendental (decomposed in float32 by lower_late, the interpreter calls libm): values
// within 2^-12 of the larger of their magnitudes and `scale` (the output's largest finite magnitude: a sum that
// cancels keeps the absolute error of its terms), 16-bit floats within one unit of their last place.
inline bool same(const uint8_t* a, const uint8_t* b, DType d, bool approximate, double scale = 0) {
  const int size = d.itemsize();
  if (std::memcmp(a, b, static_cast<size_t>(size)) == 0) return true;
  if (approximate && d.is_float()) {
    double x = as_double(a, d), y = as_double(b, d);
    if (x == y) return true;
    double tolerance = (size == 2 ? std::ldexp(1.0, d.scalar_type == ScalarType::Float16 ? -10 : -7) : std::ldexp(1.0, -12)) *
                       std::max({std::fabs(x), std::fabs(y), size == 2 ? 0.0 : scale});
    if (std::fabs(x - y) <= tolerance) return true;
  }
  auto nan = [&](const uint8_t* p) {
    if (d.scalar_type == ScalarType::Float32) { float f; std::memcpy(&f, p, 4); return std::isnan(f); }
    if (d.scalar_type == ScalarType::Float64) { double f; std::memcpy(&f, p, 8); return std::isnan(f); }
    uint16_t h;
    std::memcpy(&h, p, 2);
    if (d.scalar_type == ScalarType::Float16) return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (d.scalar_type == ScalarType::BFloat16) return (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0;
    return false;
  };
  return d.is_float() && nan(a) && nan(b);
}

inline std::string hex(const uint8_t* p, int size) {
  std::string s = "0x";
  char buf[4];
  for (int i = size - 1; i >= 0; i--) std::snprintf(buf, sizeof buf, "%02x", p[i]), s += buf;
  return s;
}

// The kinds of op that make a kernel's float results depend on order or approximation: for the failure messages.
inline std::string kinds(const UOp& sink) {
  std::string k;
  for (const UOp& u : sink.toposort()) {
    if (u.op() == Ops::REDUCE && k.find(" REDUCE") == std::string::npos) k += " REDUCE";
    for (Ops o : {Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::POW, Ops::SQRT, Ops::FDIV, Ops::RECIPROCAL})
      if (u.op() == o && k.find(std::string(" ") + std::string(op_name(o))) == std::string::npos) k += std::string(" ") + std::string(op_name(o));
  }
  return " [" + k + " ]";
}

struct Comparison {
  int ran = 0, matched = 0, skipped = 0, approximate = 0, too_big = 0;  // too_big: over kMaxInterpretedOps
  double interpreter_s = 0, lavapipe_s = 0;  // wall time of the reference and of the launches (pipeline creation included)
  std::vector<std::string> failures;  // one per kernel that differs, and each validation-layer message
};

// Runs every kernel (without variables) on lavapipe and compares with the interpreter.
inline constexpr int64_t kMaxInterpretedOps = int64_t{1} << 21;

inline Comparison run_and_compare(Lavapipe* vk, const std::vector<UOp>& kernels, const char* what) {
  Comparison out;
  int too_big = 0;
  const SpirvDeviceCaps caps = lavapipe_caps();
  std::unique_ptr<Target> target = make_spirv_target(caps);
  int ran = 0, matched = 0, skipped = 0, approximate_kernels = 0;
  std::mt19937_64 rng(19);
  for (const UOp& sink : kernels) {
    if (!kernel_variables(sink).empty()) { skipped++; continue; }
    // the interpreter takes about a microsecond per op: the largest kernels would take it minutes
    if (estimate_kernel(sink).ops > kMaxInterpretedOps) { too_big++; continue; }
    std::map<int64_t, UOp> params;
    for (const UOp& u : sink.toposort())
      if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::GLOBAL) params.emplace(u.arg_as<ParamArg>().slot, u);
    const int64_t slots = params.empty() ? 0 : params.rbegin()->first + 1;
    std::vector<std::vector<uint8_t>> ref(static_cast<size_t>(slots));
    std::vector<void*> ref_ptrs(static_cast<size_t>(slots), nullptr);
    for (const auto& [slot, p] : params) {
      const int64_t count = p.arg_as<ParamArg>().vmax + 1;
      ref[slot].resize(static_cast<size_t>(count * p.dtype().itemsize()));
      fill(ref[slot].data(), p.dtype(), count, rng);
      ref_ptrs[slot] = ref[slot].data();
    }
    std::vector<std::vector<uint8_t>> inputs = ref;
    const std::string name = c_kernel_name(sink);
    try {
      auto t0 = std::chrono::steady_clock::now();
      interpret_kernel(sink, ref_ptrs.data(), {}, nullptr);
      out.interpreter_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const std::exception&) {
      skipped++;  // an input the IR leaves undefined (the interpreter refuses it): nothing to compare
      continue;
    }
    LoweredKernel k = target->lower(sink, true);
    std::vector<uint32_t> words = render_spirv(name, k, caps).words();
    std::vector<Lavapipe::Buffer> bufs;
    Lavapipe::Buffer args = vk->make_buffer(static_cast<size_t>(slots) * kSpirvArgumentWordBytes);
    for (int64_t s = 0; s < slots; s++) {
      bufs.push_back(vk->make_buffer(inputs[s].size()));
      std::memcpy(bufs.back().host, inputs[s].data(), inputs[s].size());
      static_cast<uint64_t*>(args.host)[s] = bufs.back().address;
    }
    if (const char* dump = std::getenv("DOORBELL_SPIRV_DUMP_KERNEL"); dump && name == dump) {  // debugging aid
      std::printf("%s\n", print_node(k.sink).c_str());
      std::string b = spirv::words_to_bytes(words);
      if (FILE* f = std::fopen((name + ".spv").c_str(), "wb")) std::fwrite(b.data(), 1, b.size(), f), std::fclose(f);
    }
    auto t1 = std::chrono::steady_clock::now();
    vk->run(words, name, k.global_size, args.address);
    out.lavapipe_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    ran++;
    bool ok = true;
    const std::string kind = kinds(sink);
    const bool approximate = kind != " [ ]" && kind != " [ SQRT ]" && kind != " [ FDIV ]" && kind != " [ RECIPROCAL ]";
    approximate_kernels += approximate;
    for (const auto& [slot, p] : params) {
      const int size = p.dtype().itemsize();
      const auto* got = static_cast<const uint8_t*>(bufs[slot].host);
      double scale = 0;
      if (approximate && p.dtype().is_float())
        for (size_t i = 0; i < ref[slot].size(); i += static_cast<size_t>(size))
          if (double v = std::fabs(as_double(ref[slot].data() + i, p.dtype())); std::isfinite(v)) scale = std::max(scale, v);
      for (size_t i = 0; i < ref[slot].size(); i += static_cast<size_t>(size)) {
        if (!same(got + i, ref[slot].data() + i, p.dtype(), approximate, scale)) {
          if (ok)
            out.failures.push_back(name + kinds(sink) + " slot " + std::to_string(slot) + " (" + p.dtype().name() + ") element " +
                                   std::to_string(i / size) + ": got " + hex(got + i, size) + ", reference " +
                                   hex(ref[slot].data() + i, size));
          ok = false;
        }
      }
    }
    matched += ok;
    for (auto& b : bufs) vk->free_buffer(b);
    vk->free_buffer(args);
  }
  std::printf("%s on lavapipe: %d kernels ran (%d with reductions or transcendentals, compared within "
              "tolerance; the rest bit for bit), %d match the reference, %d skipped (with variables, or the interpreter "
              "refused the inputs), %d too big to interpret\n", what, ran, approximate_kernels, matched, skipped, too_big);
  for (std::string& m : Lavapipe::messages()) out.failures.push_back(std::move(m));
  Lavapipe::messages().clear();
  out.ran = ran, out.matched = matched, out.skipped = skipped, out.approximate = approximate_kernels, out.too_big = too_big;
  return out;
}

}  // namespace doorbell::spirv_test
