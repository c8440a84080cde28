// RM_CONTROL for the emulated RM: the controls tinygrad's bring-up uses, answered for a GH100.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "mockgpu/nv/mock_rm.h"
#include "mockgpu/nv/mock_rm_objects.h"

namespace doorbell::mockgpu::nv {

using namespace kernel_interface::nvidia;

namespace {

// Each command's params size (RM requires paramsSize to match exactly) and the kind of object it runs on.
enum class Target { kClient, kDevice, kSubdevice, kChannelGroup, kChannel, kDebugger };
struct ControlRule {
  NvU32 cmd;
  std::size_t size;
  Target target;
};
constexpr ControlRule kControls[] = {
    {NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, sizeof(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS),
     Target::kClient},
    {NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, sizeof(NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS), Target::kClient},
    {NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, sizeof(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS), Target::kClient},
    {NV0080_CTRL_CMD_GPU_GET_CLASSLIST, sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS), Target::kDevice},
    {NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS), Target::kDevice},
    {NV2080_CTRL_CMD_GPU_GET_GID_INFO, sizeof(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS), Target::kSubdevice},
    {NV2080_CTRL_CMD_GR_GET_INFO, sizeof(NV2080_CTRL_GR_GET_INFO_PARAMS), Target::kSubdevice},
    {NV2080_CTRL_CMD_PERF_BOOST, sizeof(NV2080_CTRL_PERF_BOOST_PARAMS), Target::kSubdevice},
    {NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS), Target::kChannelGroup},
    {NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, sizeof(NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS), Target::kChannel},
    {NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, sizeof(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS),
     Target::kChannel},
    {NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, sizeof(NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS), Target::kDebugger},
};

const ControlRule* find_rule(NvU32 cmd) {
  for (const ControlRule& rule : kControls) {
    if (rule.cmd == cmd) return &rule;
  }
  return nullptr;
}

void copy_text(char (&buffer)[256], const std::string& text) {
  std::memset(buffer, 0, sizeof buffer);
  std::memcpy(buffer, text.data(), std::min(text.size(), sizeof buffer - 1));
}

std::string uuid_text(const std::array<std::uint8_t, 16>& uuid) {
  std::string text = "GPU-";
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", uuid[i]);
    text += byte;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

}  // namespace

void MockRm::control(NVOS54_PARAMETERS& args) {
  // The order of RM's checks (rmapi/control.c _rmapiRmControl, then resserv): pointer/size consistency and the size
  // of a known command first, then the client and the object, then whether the object exports the command.
  args.status = [&]() -> NV_STATUS {
    void* params = reinterpret_cast<void*>(static_cast<std::uintptr_t>(args.params));
    if ((params == nullptr) != (args.paramsSize == 0)) return NV_ERR_INVALID_ARGUMENT;
    const ControlRule* rule = find_rule(args.cmd);
    if (rule != nullptr && args.paramsSize != rule->size) return NV_ERR_INVALID_ARGUMENT;
    Client* client = find_client(args.hClient);
    if (client == nullptr) return NV_ERR_INVALID_CLIENT;
    Object* object = find(args.hClient, args.hObject);
    if (object == nullptr) return NV_ERR_OBJECT_NOT_FOUND;
    return run_control(*client, *object, args.cmd, params, args.paramsSize);
  }();
}

NV_STATUS MockRm::run_control(Client& client, Object& object, NvU32 cmd, void* params, NvU32 size) {
  const ControlRule* rule = find_rule(cmd);
  if (rule == nullptr) return NV_ERR_NOT_SUPPORTED;
  const bool on_right_object =
      (rule->target == Target::kClient && object.hclass == NV01_ROOT_CLIENT) ||
      (rule->target == Target::kDevice && object.hclass == NV01_DEVICE_0) ||
      (rule->target == Target::kSubdevice && object.hclass == NV20_SUBDEVICE_0) ||
      (rule->target == Target::kChannelGroup && object.hclass == KEPLER_CHANNEL_GROUP_A) ||
      (rule->target == Target::kChannel && object.channel.has_value()) ||
      (rule->target == Target::kDebugger && object.hclass == GT200_DEBUGGER);
  if (!on_right_object) return NV_ERR_NOT_SUPPORTED;
  if (size != rule->size || params == nullptr) return NV_ERR_INVALID_ARGUMENT;
  switch (rule->target) {
    case Target::kClient: return control_client(client, cmd, params);
    case Target::kDevice: return control_device(object, cmd, params);
    case Target::kSubdevice: return control_subdevice(object, cmd, params);
    case Target::kChannelGroup:
    case Target::kChannel: return control_channel(client, object, cmd, params);
    case Target::kDebugger: return control_debugger(object, cmd, params);
  }
  return NV_ERR_NOT_SUPPORTED;
}

NV_STATUS MockRm::control_client(Client& client, NvU32 cmd, void* params) {
  (void)client;
  const MockGpuConfig& driver = gpus_.front()->config;  // the driver's version is the machine's, not a GPU's
  if (cmd == NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2) {
    auto* p = static_cast<NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS*>(params);
    const std::string major = driver.driver_version.substr(0, driver.driver_version.find('.'));
    copy_text(p->driverVersionBuffer, driver.driver_version);
    copy_text(p->versionBuffer, driver.driver_version);
    copy_text(p->driverBranch, "r" + major + "_00");
    copy_text(p->titleBuffer, "doorbell mockgpu emulated NVIDIA driver " + driver.driver_version);
    p->changelistNumber = 0;
    p->officialChangelistNumber = 0;
    return NV_OK;
  }
  if (cmd == NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS) {
    auto* p = static_cast<NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS*>(params);
    std::fill(std::begin(p->gpuIds), std::end(p->gpuIds), NV0000_CTRL_GPU_INVALID_ID);
    for (std::size_t i = 0; i < gpus_.size() && i < std::size(p->gpuIds); ++i) p->gpuIds[i] = gpus_[i]->config.gpu_id;
    return NV_OK;
  }
  auto* p = static_cast<NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS*>(params);  // GPU_GET_ID_INFO_V2
  auto gpu = std::find_if(gpus_.begin(), gpus_.end(), [&](const auto& g) { return g->config.gpu_id == p->gpuId; });
  if (gpu == gpus_.end()) return NV_ERR_INVALID_ARGUMENT;
  p->gpuFlags = 0;
  p->deviceInstance = static_cast<NvU32>(gpu - gpus_.begin());
  p->subDeviceInstance = 0;
  p->sliStatus = 0;
  p->boardId = 0;
  p->gpuInstance = 0;
  p->numaId = -1;
  return NV_OK;
}

NV_STATUS MockRm::control_device(const Object& device, NvU32 cmd, void* params) {
  const std::vector<NvU32>& classes = gpu_of(device).class_list;
  const NvU32 count = static_cast<NvU32>(classes.size());
  if (cmd == NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2) {
    auto* p = static_cast<NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS*>(params);
    p->numClasses = count;
    std::copy(classes.begin(), classes.end(), p->classList);
    return NV_OK;
  }
  auto* p = static_cast<NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS*>(params);  // GET_CLASSLIST: count, then the list
  auto* list = reinterpret_cast<NvU32*>(static_cast<std::uintptr_t>(p->classList));
  if (list != nullptr) {
    if (p->numClasses < count) return NV_ERR_INVALID_PARAM_STRUCT;
    std::copy(classes.begin(), classes.end(), list);
  }
  p->numClasses = count;
  return NV_OK;
}

NV_STATUS MockRm::control_subdevice(const Object& subdevice, NvU32 cmd, void* params) {
  const MockGpuConfig& gpu = gpu_of(subdevice).config;
  if (cmd == NV2080_CTRL_CMD_GPU_GET_GID_INFO) {
    auto* p = static_cast<NV2080_CTRL_GPU_GET_GID_INFO_PARAMS*>(params);
    const NvU32 format = p->flags & 3;
    std::memset(p->data, 0, sizeof p->data);
    if (format == NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY) {
      std::copy(gpu.uuid.begin(), gpu.uuid.end(), p->data);
      p->length = static_cast<NvU32>(gpu.uuid.size());
    } else if (format == NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_ASCII) {
      const std::string text = uuid_text(gpu.uuid);
      std::memcpy(p->data, text.data(), text.size());
      p->length = static_cast<NvU32>(text.size() + 1);
    } else {
      return NV_ERR_INVALID_FLAGS;
    }
    return NV_OK;
  }
  if (cmd == NV2080_CTRL_CMD_GR_GET_INFO) {
    auto* p = static_cast<NV2080_CTRL_GR_GET_INFO_PARAMS*>(params);
    auto* list = reinterpret_cast<NV2080_CTRL_GR_INFO*>(static_cast<std::uintptr_t>(p->grInfoList));
    if (list == nullptr || p->grInfoListSize == 0 || p->grInfoListSize > NV2080_CTRL_GR_INFO_INDEX_MAX + 1) {
      return NV_ERR_INVALID_ARGUMENT;
    }
    for (NvU32 i = 0; i < p->grInfoListSize; ++i) {
      NV2080_CTRL_GR_INFO& entry = list[i];
      switch (entry.index) {
        case NV2080_CTRL_GR_INFO_INDEX_SM_VERSION: entry.data = gpu.sm_version; break;
        case NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM: entry.data = gpu.max_warps_per_sm; break;
        case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS: entry.data = gpu.num_gpcs; break;
        case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC: entry.data = gpu.num_tpc_per_gpc; break;
        case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC: entry.data = gpu.num_sm_per_tpc; break;
        default:
          if (entry.index > NV2080_CTRL_GR_INFO_INDEX_MAX) return NV_ERR_INVALID_ARGUMENT;
          entry.data = 0;  // an index the emulation does not model
      }
    }
    return NV_OK;
  }
  return NV_OK;  // PERF_BOOST: nothing to emulate
}

NV_STATUS MockRm::control_channel(Client& client, Object& object, NvU32 cmd, void* params) {
  if (cmd == NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN) {
    static_cast<NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS*>(params)->workSubmitToken =
        object.channel->work_submit_token;
    return NV_OK;
  }
  const bool enable = static_cast<NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS*>(params)->bEnable != 0;
  if (cmd == NVA06F_CTRL_CMD_GPFIFO_SCHEDULE) {
    object.channel->scheduled = enable;
    return NV_OK;
  }
  object.scheduled = enable;  // NVA06C on the group: every channel in it
  for (const NvHandle child : object.children) {
    Object& channel = client.objects.at(child);
    if (channel.channel) channel.channel->scheduled = enable;
  }
  return NV_OK;
}

// READ_MMU_FAULT_INFO, the one debugger control emulated: the faults recorded for the channel of the compute object
// the debugger was made for (RM reads its graphics context's ring; kgrctxLookupMmuFaultInfo_IMPL). Reading does not
// clear them.
NV_STATUS MockRm::control_debugger(const Object& debugger, NvU32 cmd, void* params) const {
  (void)cmd;
  auto* p = static_cast<NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS*>(params);
  const Object* target = find(debugger.debugged_client, debugger.debugged_object);
  const Object* channel = target != nullptr ? find(debugger.debugged_client, target->parent) : nullptr;
  if (channel == nullptr || !channel->channel) return NV_ERR_INVALID_STATE;  // the object it debugs is gone
  p->count = 0;
  for (const auto& fault : channel->mmu_faults) p->mmuFaultInfoList[p->count++] = fault;
  return NV_OK;
}

}  // namespace doorbell::mockgpu::nv
