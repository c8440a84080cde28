#include "mockgpu/nv/mock_rm.h"

#include "mockgpu/nv/mock_rm_objects.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace doorbell::mockgpu::nv {

using namespace kernel_interface::nvidia;

namespace {

constexpr NvU64 kPageSize = 0x1000;
constexpr NvU64 kBigPageSize = 0x200000;
constexpr NvU64 kUserdSize = 512;  // the USERD block RM reserves per channel on Volta+
constexpr NvU64 kDefaultVirtualLimit = 0x1ffffffffffffull;  // what tinygrad asks for; 2^49 - 1

NvU64 align_up(NvU64 value, NvU64 alignment) { return (value + alignment - 1) / alignment * alignment; }

// Compute and copy engine objects, allocated on a GPFIFO channel.
bool is_engine_class(NvU32 c) {
  return c == HOPPER_COMPUTE_A || c == HOPPER_DMA_COPY_A || c == AMPERE_COMPUTE_B || c == ADA_COMPUTE_A || c == AMPERE_DMA_COPY_B;
}

// Compute objects: what RM's KernelGraphicsObject covers among the classes the mock emulates (a debugger's target).
bool is_compute_class(NvU32 c) { return c == HOPPER_COMPUTE_A || c == AMPERE_COMPUTE_B || c == ADA_COMPUTE_A; }

bool is_usermode_class(NvU32 c) {
  return c == HOPPER_USERMODE_A || c == AMPERE_USERMODE_A || c == TURING_USERMODE_A || c == VOLTA_USERMODE_A;
}
bool is_gpfifo_class(NvU32 c) {
  return c == HOPPER_CHANNEL_GPFIFO_A || c == AMPERE_CHANNEL_GPFIFO_A || c == TURING_CHANNEL_GPFIFO_A ||
         c == VOLTA_CHANNEL_GPFIFO_A;
}
bool is_memory_class(NvU32 c) {
  return c == NV1_MEMORY_USER || c == NV1_MEMORY_SYSTEM || c == NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
}

// Which parents a class may be allocated under, and the size of its alloc params (0: not checked).
struct ClassRule {
  std::vector<NvU32> parents;
  std::size_t params_size = 0;
  bool params_required = false;
};

std::optional<ClassRule> class_rule(NvU32 c) {
  const std::vector<NvU32> gpfifos = {HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A, TURING_CHANNEL_GPFIFO_A,
                                      VOLTA_CHANNEL_GPFIFO_A};
  if (c == NV01_DEVICE_0) return ClassRule{{NV01_ROOT_CLIENT}, sizeof(NV0080_ALLOC_PARAMETERS), true};
  if (c == NV20_SUBDEVICE_0) return ClassRule{{NV01_DEVICE_0}, sizeof(NV2080_ALLOC_PARAMETERS), false};
  if (c == HOPPER_USERMODE_A) return ClassRule{{NV20_SUBDEVICE_0}, sizeof(NV_HOPPER_USERMODE_A_PARAMS), false};
  if (is_usermode_class(c)) return ClassRule{{NV20_SUBDEVICE_0}, 0, false};
  if (c == NV01_MEMORY_VIRTUAL) {
    return ClassRule{{NV01_DEVICE_0}, sizeof(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS), false};
  }
  if (c == FERMI_VASPACE_A) {
    return ClassRule{{NV01_DEVICE_0, NV20_SUBDEVICE_0}, sizeof(NV_VASPACE_ALLOCATION_PARAMETERS), false};
  }
  if (c == KEPLER_CHANNEL_GROUP_A) {
    return ClassRule{{NV01_DEVICE_0, NV20_SUBDEVICE_0}, sizeof(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS), true};
  }
  if (c == FERMI_CONTEXT_SHARE_A) {
    return ClassRule{{KEPLER_CHANNEL_GROUP_A}, sizeof(NV_CTXSHARE_ALLOCATION_PARAMETERS), true};
  }
  if (is_gpfifo_class(c)) {
    return ClassRule{{KEPLER_CHANNEL_GROUP_A, NV01_DEVICE_0}, sizeof(NV_CHANNEL_ALLOC_PARAMS), true};
  }
  if (is_engine_class(c)) return ClassRule{gpfifos, 0, false};
  if (c == NV1_MEMORY_USER || c == NV1_MEMORY_SYSTEM) {
    return ClassRule{{NV01_DEVICE_0, NV20_SUBDEVICE_0}, sizeof(NV_MEMORY_ALLOCATION_PARAMS), true};
  }
  if (c == GT200_DEBUGGER) return ClassRule{{NV01_DEVICE_0}, sizeof(NV83DE_ALLOC_PARAMETERS), true};
  return std::nullopt;
}

}  // namespace

MockRm::MockRm(const std::vector<MockGpuConfig>& gpus, const std::vector<GpuMemory*>& memories) {
  if (gpus.empty() || gpus.size() != memories.size())
    throw std::invalid_argument("MockRm: " + std::to_string(gpus.size()) + " GPUs with " + std::to_string(memories.size()) +
                                " address spaces; expected at least one GPU and one address space each");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto gpu = std::make_unique<Gpu>();
    gpu->config = gpus[i];
    gpu->class_list = gpus[i].class_list.empty() ? gh100_class_list() : gpus[i].class_list;
    gpu->memory = memories[i];
    gpus_.push_back(std::move(gpu));
  }
}

MockRm::Gpu& MockRm::gpu_of(const Object& object) const {
  return *gpus_.at(object.gpu < 0 ? 0 : static_cast<std::size_t>(object.gpu));
}

MockRm::~MockRm() {
  while (!clients_.empty()) free_tree(*clients_.begin()->second, clients_.begin()->first);
}

MockRm::Client* MockRm::find_client(NvHandle client) {
  auto it = clients_.find(client);
  return it == clients_.end() ? nullptr : it->second.get();
}
const MockRm::Client* MockRm::find_client(NvHandle client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? nullptr : it->second.get();
}
MockRm::Object* MockRm::find(NvHandle client, NvHandle handle) {
  Client* owner = find_client(client);
  if (owner == nullptr) return nullptr;
  auto it = owner->objects.find(handle);
  return it == owner->objects.end() ? nullptr : &it->second;
}
const MockRm::Object* MockRm::find(NvHandle client, NvHandle handle) const {
  const Client* owner = find_client(client);
  if (owner == nullptr) return nullptr;
  auto it = owner->objects.find(handle);
  return it == owner->objects.end() ? nullptr : &it->second;
}

// ---- RM_ALLOC

void MockRm::alloc(NVOS21_PARAMETERS& args, int ctl_fd) {
  args.status = args.hClass == NV01_ROOT_CLIENT ? alloc_root_client(args, ctl_fd) : alloc_object(args);
}

NV_STATUS MockRm::alloc_root_client(NVOS21_PARAMETERS& args, int ctl_fd) {
  NvHandle handle = args.hObjectNew;
  if (handle == 0) {
    while (clients_.contains(next_client_)) ++next_client_;
    handle = next_client_++;
  }
  if (clients_.contains(handle)) return NV_ERR_INSERT_DUPLICATE_NAME;
  auto client = std::make_unique<Client>();
  client->handle = handle;
  client->ctl_fd = ctl_fd;
  Object& object = client->objects[handle];
  object.handle = handle;
  object.hclass = NV01_ROOT_CLIENT;
  clients_[handle] = std::move(client);
  args.hObjectNew = handle;
  return NV_OK;
}

NV_STATUS MockRm::alloc_object(NVOS21_PARAMETERS& args) {
  Client* client = find_client(args.hRoot);
  if (client == nullptr) return NV_ERR_INVALID_CLIENT;
  auto parent_it = client->objects.find(args.hObjectParent);
  const std::vector<NvU32>& class_list =
      parent_it != client->objects.end() ? gpu_of(parent_it->second).class_list : gpus_.front()->class_list;
  const bool offered = args.hClass == NV01_DEVICE_0 || args.hClass == NV20_SUBDEVICE_0 ||
                       std::find(class_list.begin(), class_list.end(), args.hClass) != class_list.end();
  if (!offered) return NV_ERR_INVALID_CLASS;
  const std::optional<ClassRule> rule = class_rule(args.hClass);
  if (!rule) return NV_ERR_NOT_SUPPORTED;  // offered by a GH100 but not emulated
  if (parent_it == client->objects.end()) return NV_ERR_OBJECT_NOT_FOUND;  // resserv clientGetResourceRef
  if (std::find(rule->parents.begin(), rule->parents.end(), parent_it->second.hclass) == rule->parents.end()) {
    return NV_ERR_INVALID_OBJECT_PARENT;
  }
  NvHandle handle = args.hObjectNew;
  if (handle == 0) {
    while (client->objects.contains(next_generated_handle_)) ++next_generated_handle_;
    handle = next_generated_handle_++;
  }
  if (client->objects.contains(handle)) return NV_ERR_INSERT_DUPLICATE_NAME;
  void* params = reinterpret_cast<void*>(static_cast<std::uintptr_t>(args.pAllocParms));
  if (rule->params_size != 0) {
    if (params == nullptr && rule->params_required) return NV_ERR_INVALID_ARGUMENT;
    if (params != nullptr && args.paramsSize != rule->params_size) return NV_ERR_INVALID_PARAM_STRUCT;
  }
  Object& object = client->objects[handle];
  object.handle = handle;
  object.parent = args.hObjectParent;
  object.hclass = args.hClass;
  object.gpu = client->objects.at(args.hObjectParent).gpu;
  const NV_STATUS status = construct(*client, object, client->objects.at(args.hObjectParent), params);
  if (status != NV_OK) {
    client->objects.erase(handle);
    return status;
  }
  client->objects.at(args.hObjectParent).children.push_back(handle);
  args.hObjectNew = handle;
  return NV_OK;
}

NV_STATUS MockRm::construct(Client& client, Object& object, const Object& parent, void* params) {
  const NvU32 c = object.hclass;
  if (c == NV01_DEVICE_0) {
    // deviceId: the device instance NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 gave for a GPU (its index here).
    const NvU32 instance = static_cast<NV0080_ALLOC_PARAMETERS*>(params)->deviceId;
    if (instance >= gpus_.size()) return NV_ERR_INVALID_ARGUMENT;
    object.gpu = static_cast<int>(instance);
  } else if (c == NV20_SUBDEVICE_0) {
    if (params != nullptr && static_cast<NV2080_ALLOC_PARAMETERS*>(params)->subDeviceId != 0) {
      return NV_ERR_INVALID_ARGUMENT;
    }
  } else if (c == NV01_MEMORY_VIRTUAL) {
    NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS defaults{};
    auto* p = params != nullptr ? static_cast<NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS*>(params) : &defaults;
    object.va_start = std::max<NvU64>(p->offset, kPageSize);
    object.va_limit = p->limit != 0 ? p->limit : kDefaultVirtualLimit;
    if (object.va_limit <= object.va_start) return NV_ERR_INVALID_LIMIT;
    p->limit = object.va_limit;
    // Unfixed mappings come from the upper half, away from the VAs callers pick for fixed ones.
    object.next_va = align_up(object.va_start + (object.va_limit - object.va_start) / 2, kBigPageSize);
  } else if (c == FERMI_CONTEXT_SHARE_A) {
    const auto* p = static_cast<NV_CTXSHARE_ALLOCATION_PARAMETERS*>(params);
    if (p->hVASpace != 0) {
      const Object* vaspace = find(client.handle, p->hVASpace);
      if (vaspace == nullptr || vaspace->hclass != FERMI_VASPACE_A) return NV_ERR_INVALID_OBJECT_HANDLE;
    }
  } else if (c == KEPLER_CHANNEL_GROUP_A) {
    const auto* p = static_cast<NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS*>(params);
    if (p->hVASpace != 0) {
      const Object* vaspace = find(client.handle, p->hVASpace);
      if (vaspace == nullptr || vaspace->hclass != FERMI_VASPACE_A) return NV_ERR_INVALID_OBJECT_HANDLE;
    }
  } else if (c == NV1_MEMORY_USER || c == NV1_MEMORY_SYSTEM) {
    return construct_memory(object, params);
  } else if (is_gpfifo_class(c)) {
    return construct_channel(client, object, parent, params);
  } else if (is_engine_class(c)) {
    return construct_engine(object, client.objects.at(object.parent));
  } else if (c == GT200_DEBUGGER) {
    return construct_debugger(client, object, params);
  } else if (is_usermode_class(c)) {
    object.host = gpu_of(object).usermode.backing().data();
    object.size = gpu_of(object).usermode.backing().size();
  }
  return NV_OK;
}

NV_STATUS MockRm::construct_memory(Object& object, void* params) {
  auto* p = static_cast<NV_MEMORY_ALLOCATION_PARAMS*>(params);
  if (p->size == 0) return NV_ERR_INVALID_ARGUMENT;
  const NvU64 size = align_up(p->size, kPageSize);
  Gpu& gpu = gpu_of(object);
  if (size < p->size || size > gpu.config.vram_bytes - gpu.vram_in_use) return NV_ERR_NO_MEMORY;
  try {
    object.backing = std::make_shared<SharedBacking>(size, "nv-memory-" + hex(object.handle));
  } catch (const std::exception&) {
    return NV_ERR_NO_MEMORY;
  }
  object.host = object.backing->data();
  object.size = size;
  if (object.hclass == NV1_MEMORY_USER) gpu.vram_in_use += size;
  p->limit = size - 1;
  return NV_OK;
}

NV_STATUS MockRm::construct_channel(Client& client, Object& object, const Object& parent, void* params) {
  const auto* p = static_cast<NV_CHANNEL_ALLOC_PARAMS*>(params);
  const NvU32 entries = p->gpFifoEntries;
  if (entries < 2 || (entries & (entries - 1)) != 0) return NV_ERR_INVALID_ARGUMENT;
  if (p->gpFifoOffset % 8 != 0) return NV_ERR_INVALID_ARGUMENT;
  auto is_memory = [&](NvHandle handle) {
    const Object* memory = find(client.handle, handle);
    return memory != nullptr && is_memory_class(memory->hclass);
  };
  if (p->hObjectError != 0 && !is_memory(p->hObjectError)) return NV_ERR_INVALID_OBJECT_HANDLE;
  if (p->hContextShare != 0) {
    const Object* share = find(client.handle, p->hContextShare);
    if (share == nullptr || share->hclass != FERMI_CONTEXT_SHARE_A || share->parent != parent.handle) {
      return NV_ERR_INVALID_OBJECT_HANDLE;
    }
  }
  MockChannel channel;
  channel.client = client.handle;
  channel.handle = object.handle;
  channel.hclass = object.hclass;
  channel.parent = parent.handle;
  channel.engine_type = p->engineType;
  channel.gpfifo_va = p->gpFifoOffset;
  channel.gpfifo_entries = entries;
  channel.userd_memory = p->hUserdMemory[0];
  channel.userd_offset = p->userdOffset[0];
  if (p->hObjectError != 0) {
    const Object* notifier = find(client.handle, p->hObjectError);
    if (notifier->size < 16) return NV_ERR_INVALID_OBJECT_HANDLE;  // one NvNotification at least
    channel.error_notifier = notifier->host;
    if (notifier->backing) channel.memory.push_back(notifier->backing);
  }
  if (channel.userd_memory != 0) {
    const Object* userd = find(client.handle, channel.userd_memory);
    if (userd == nullptr || !is_memory_class(userd->hclass)) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (channel.userd_offset > userd->size || userd->size - channel.userd_offset < kUserdSize) {
      return NV_ERR_INVALID_OFFSET;
    }
    channel.userd = userd->host + channel.userd_offset;
    if (userd->backing) channel.memory.push_back(userd->backing);
  } else {
    // RM allocates USERD itself when the caller gives none.
    try {
      object.internal_userd = std::make_shared<SharedBacking>(kPageSize, "nv-userd-" + hex(object.handle));
    } catch (const std::exception&) {
      return NV_ERR_NO_MEMORY;
    }
    channel.userd = object.internal_userd->data();
    channel.memory.push_back(object.internal_userd);
  }
  channel.gpu = object.gpu < 0 ? 0 : object.gpu;
  channel.work_submit_token = gpu_of(object).next_channel_id++;
  channel.scheduled = parent.scheduled;
  object.channel = std::move(channel);
  return NV_OK;
}

NV_STATUS MockRm::construct_engine(Object& object, Object& parent) {
  if (!parent.channel) return NV_ERR_INVALID_OBJECT_PARENT;
  parent.channel->engine_classes.push_back(object.hclass);
  parent.channel->engine_objects.push_back(object.handle);
  return NV_OK;
}

// The checks of RM's ksmdbgssnConstruct_IMPL (gpu/gr/kernel_sm_debugger_session.c), in its order: the obsolete
// field must be 0, hAppClient 0 means the calling client, an unknown client is NV_ERR_INVALID_OBJECT_HANDLE
// (resserv's _serverFindClient), an unknown object NV_ERR_INVALID_OBJECT_PARENT and a non-graphics one
// NV_ERR_INVALID_OBJECT.
NV_STATUS MockRm::construct_debugger(Client& client, Object& object, void* params) {
  const auto* p = static_cast<NV83DE_ALLOC_PARAMETERS*>(params);
  if (p->hDebuggerClient_Obsolete != 0) return NV_ERR_INVALID_ARGUMENT;
  const NvHandle app = p->hAppClient != 0 ? p->hAppClient : client.handle;
  if (find_client(app) == nullptr) return NV_ERR_INVALID_OBJECT_HANDLE;
  const Object* target = find(app, p->hClass3dObject);
  if (target == nullptr) return NV_ERR_INVALID_OBJECT_PARENT;
  if (!is_compute_class(target->hclass)) return NV_ERR_INVALID_OBJECT;
  object.debugged_client = app;
  object.debugged_object = target->handle;
  return NV_OK;
}

void MockRm::record_mmu_fault(NvHandle client, NvHandle channel, const NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& fault) {
  Object* object = find(client, channel);
  if (object == nullptr || !object->channel) return;
  // RM keeps them in a ring of NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES slots with one always empty
  // (kernel_graphics_context.c kgrctxRecordMmuFault_IMPL): the newest three come back, oldest first.
  object->mmu_faults.push_back(fault);
  if (object->mmu_faults.size() > NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES - 1) object->mmu_faults.pop_front();
}

// ---- RM_ALLOC_MEMORY

void MockRm::alloc_memory(NVOS02_PARAMETERS& args) {
  args.status = [&]() -> NV_STATUS {
    Client* client = find_client(args.hRoot);
    if (client == nullptr) return NV_ERR_INVALID_CLIENT;
    const Object* parent = find(args.hRoot, args.hObjectParent);
    const std::vector<NvU32>& class_list = parent != nullptr ? gpu_of(*parent).class_list : gpus_.front()->class_list;
    if (std::find(class_list.begin(), class_list.end(), args.hClass) == class_list.end()) {
      return NV_ERR_INVALID_CLASS;
    }
    if (args.hClass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) return NV_ERR_NOT_SUPPORTED;
    if (parent == nullptr) return NV_ERR_OBJECT_NOT_FOUND;
    if (parent->hclass != NV01_DEVICE_0) return NV_ERR_INVALID_OBJECT_PARENT;
    if (args.hObjectNew == 0) return NV_ERR_INVALID_OBJECT_NEW;
    if (client->objects.contains(args.hObjectNew)) return NV_ERR_INSERT_DUPLICATE_NAME;
    if (args.pMemory == 0 || args.pMemory % kPageSize != 0) return NV_ERR_INVALID_ADDRESS;
    if (args.limit == ~NvU64{0}) return NV_ERR_INVALID_LIMIT;
    Object& object = client->objects[args.hObjectNew];
    object.handle = args.hObjectNew;
    object.parent = args.hObjectParent;
    object.hclass = args.hClass;
    object.gpu = parent->gpu;
    object.host = reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(args.pMemory));
    object.size = args.limit + 1;
    client->objects.at(args.hObjectParent).children.push_back(args.hObjectNew);
    return NV_OK;
  }();
}

// ---- RM_FREE

void MockRm::free(NVOS00_PARAMETERS& args) {
  Client* client = find_client(args.hRoot);
  if (client == nullptr) {
    args.status = NV_ERR_INVALID_CLIENT;
  } else if (!client->objects.contains(args.hObjectOld)) {
    args.status = NV_ERR_OBJECT_NOT_FOUND;
  } else {
    free_tree(*client, args.hObjectOld);
    args.status = NV_OK;
  }
}

void MockRm::free_clients_of_fd(int ctl_fd) {
  std::vector<NvHandle> owned;
  for (const auto& [handle, client] : clients_) {
    if (client->ctl_fd == ctl_fd) owned.push_back(handle);
  }
  for (const NvHandle handle : owned) free_tree(*clients_.at(handle), handle);
}

bool MockRm::has_clients_of_fd(int ctl_fd) const {
  return std::any_of(clients_.begin(), clients_.end(), [ctl_fd](const auto& c) { return c.second->ctl_fd == ctl_fd; });
}

// Children first, so a channel still exists while its compute object is destroyed.
void MockRm::free_tree(Client& client, NvHandle handle) {
  const std::vector<NvHandle> children = client.objects.at(handle).children;
  for (const NvHandle child : children) {
    if (client.objects.contains(child)) free_tree(client, child);
  }
  Object& object = client.objects.at(handle);
  destroy(client, object);
  if (object.parent != 0 && client.objects.contains(object.parent)) {
    std::erase(client.objects.at(object.parent).children, handle);
  }
  if (handle == client.handle) {
    clients_.erase(handle);  // destroys `client`
    return;
  }
  client.objects.erase(handle);
}

void MockRm::destroy(Client& client, Object& object) {
  if (is_memory_class(object.hclass)) gpu_of(object).memory->unmap_owner(owner_tag(client.handle, object.handle));
  if (object.hclass == NV1_MEMORY_USER) gpu_of(object).vram_in_use -= object.size;
  if (is_engine_class(object.hclass)) {
    auto parent = client.objects.find(object.parent);
    if (parent != client.objects.end() && parent->second.channel) {
      MockChannel& channel = *parent->second.channel;
      auto at = std::find(channel.engine_objects.begin(), channel.engine_objects.end(), object.handle);
      if (at != channel.engine_objects.end()) {
        channel.engine_classes.erase(channel.engine_classes.begin() + (at - channel.engine_objects.begin()));
        channel.engine_objects.erase(at);
      }
    }
  }
}

// ---- RM_MAP_MEMORY / RM_UNMAP_MEMORY

std::optional<CpuMapContext> MockRm::map_memory(NVOS33_PARAMETERS& args) {
  std::optional<CpuMapContext> context;
  args.status = [&]() -> NV_STATUS {
    if (find_client(args.hClient) == nullptr) return NV_ERR_INVALID_CLIENT;
    const Object* device = find(args.hClient, args.hDevice);
    if (device == nullptr || (device->hclass != NV01_DEVICE_0 && device->hclass != NV20_SUBDEVICE_0)) {
      return NV_ERR_INVALID_OBJECT_HANDLE;
    }
    const Object* memory = find(args.hClient, args.hMemory);
    if (memory == nullptr || !(is_memory_class(memory->hclass) || is_usermode_class(memory->hclass))) {
      return NV_ERR_INVALID_OBJECT_HANDLE;
    }
    if (memory->hclass == NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) return NV_ERR_NOT_SUPPORTED;  // already CPU memory
    if (args.offset % kPageSize != 0) return NV_ERR_INVALID_OFFSET;
    if (args.length == 0 || args.offset > memory->size || args.length > memory->size - args.offset) {
      return NV_ERR_INVALID_LIMIT;
    }
    const int memfd = is_usermode_class(memory->hclass) ? gpu_of(*memory).usermode.backing().fd() : memory->backing->fd();
    context = CpuMapContext{memfd, args.offset, args.length, std::max(memory->gpu, 0), memory->hclass == NV1_MEMORY_SYSTEM};
    // RM ignores the caching type asked for (escape.c); report what it uses.
    args.flags = (args.flags & ~(7u << NVOS33_FLAGS_CACHING_TYPE_SHIFT)) |
                 (NVOS33_FLAGS_CACHING_TYPE_DEFAULT << NVOS33_FLAGS_CACHING_TYPE_SHIFT);
    args.pLinearAddress = 0;  // the mmap offset to use on the fd
    return NV_OK;
  }();
  return context;
}

void MockRm::unmap_memory(NVOS34_PARAMETERS& args) {
  if (find_client(args.hClient) == nullptr) {
    args.status = NV_ERR_INVALID_CLIENT;
  } else if (find(args.hClient, args.hDevice) == nullptr || find(args.hClient, args.hMemory) == nullptr) {
    args.status = NV_ERR_INVALID_OBJECT_HANDLE;
  } else {
    args.status = NV_OK;
  }
}

// ---- RM_MAP_MEMORY_DMA / RM_UNMAP_MEMORY_DMA

void MockRm::map_memory_dma(NVOS46_PARAMETERS& args) {
  args.status = [&]() -> NV_STATUS {
    if (find_client(args.hClient) == nullptr) return NV_ERR_INVALID_CLIENT;
    Object* dma = find(args.hClient, args.hDma);
    if (dma == nullptr || dma->hclass != NV01_MEMORY_VIRTUAL) return NV_ERR_INVALID_OBJECT_HANDLE;
    const Object* memory = find(args.hClient, args.hMemory);
    if (memory == nullptr || !is_memory_class(memory->hclass)) return NV_ERR_INVALID_OBJECT_HANDLE;
    if (args.offset > memory->size) return NV_ERR_INVALID_OFFSET;
    const NvU64 length = args.length != 0 ? args.length : memory->size - args.offset;
    if (length > memory->size - args.offset) return NV_ERR_INVALID_LIMIT;
    NvU64 va = args.dmaOffset;
    if ((args.flags & NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE) != 0) {
      if (va % kPageSize != 0) return NV_ERR_INVALID_OFFSET;
    } else {
      const NvU32 page = (args.flags >> NVOS46_FLAGS_PAGE_SIZE_SHIFT) & 0xf;
      va = align_up(dma->next_va, page == NVOS46_FLAGS_PAGE_SIZE_4KB ? 0x10000 : kBigPageSize);
      dma->next_va = va + length;
    }
    if (va < dma->va_start || va + length - 1 > dma->va_limit || va + length < va) return NV_ERR_INVALID_OFFSET;
    if (!gpu_of(*dma).memory->map(va, memory->host + args.offset, length, owner_tag(args.hClient, args.hMemory))) {
      return NV_ERR_INVALID_OFFSET;  // overlaps another mapping
    }
    args.dmaOffset = va;
    return NV_OK;
  }();
}

void MockRm::unmap_memory_dma(NVOS47_PARAMETERS& args) {
  args.status = [&]() -> NV_STATUS {
    if (find_client(args.hClient) == nullptr) return NV_ERR_INVALID_CLIENT;
    const Object* dma = find(args.hClient, args.hDma);
    const Object* memory = find(args.hClient, args.hMemory);
    if (dma == nullptr || memory == nullptr) return NV_ERR_INVALID_OBJECT_HANDLE;
    return gpu_of(*dma).memory->unmap(args.dmaOffset) ? NV_OK : NV_ERR_INVALID_OFFSET;
  }();
}

// ---- Lookups

bool MockRm::has_client(NvHandle client) const { return find_client(client) != nullptr; }

bool MockRm::has_object(NvHandle client, NvHandle handle) const { return find(client, handle) != nullptr; }

bool MockRm::is_object_of_class(NvHandle client, NvHandle handle, std::initializer_list<NvU32> classes) const {
  const Object* object = find(client, handle);
  return object != nullptr && std::find(classes.begin(), classes.end(), object->hclass) != classes.end();
}

bool MockRm::is_channel(NvHandle client, NvHandle handle) const {
  const Object* object = find(client, handle);
  return object != nullptr && object->channel.has_value();
}

NV_STATUS MockRm::memory_bytes(NvHandle client, NvHandle memory, NvU64 offset, NvU64 length,
                               std::uint8_t** host) const {
  if (find_client(client) == nullptr) return NV_ERR_INVALID_CLIENT;
  const Object* object = find(client, memory);
  if (object == nullptr || !is_memory_class(object->hclass)) return NV_ERR_OBJECT_NOT_FOUND;
  if (offset > object->size || length > object->size - offset) return NV_ERR_INVALID_LIMIT;
  *host = object->host + offset;
  return NV_OK;
}

std::vector<MockChannel> MockRm::channels() const {
  std::vector<MockChannel> all;
  for (const auto& [handle, client] : clients_) {
    for (const auto& [object_handle, object] : client->objects) {
      if (object.channel) all.push_back(*object.channel);
    }
  }
  std::sort(all.begin(), all.end(), [](const MockChannel& a, const MockChannel& b) {
    return a.work_submit_token < b.work_submit_token;
  });
  return all;
}

std::vector<MockChannel> MockRm::channels(int gpu) const {
  std::vector<MockChannel> all = channels();
  std::erase_if(all, [gpu](const MockChannel& c) { return c.gpu != gpu; });
  return all;
}

std::vector<MockChannel> MockRm::channels_freed_with(NvHandle client, NvHandle handle) const {
  std::vector<MockChannel> found;
  const Client* owner = find_client(client);
  if (owner == nullptr) return found;
  std::vector<NvHandle> pending = {handle};
  while (!pending.empty()) {
    const NvHandle at = pending.back();
    pending.pop_back();
    auto it = owner->objects.find(at);
    if (it == owner->objects.end()) continue;
    if (it->second.channel) found.push_back(*it->second.channel);
    pending.insert(pending.end(), it->second.children.begin(), it->second.children.end());
  }
  return found;
}

std::vector<MockChannel> MockRm::channels_of_fd(int ctl_fd) const {
  std::vector<MockChannel> found;
  for (const auto& [handle, client] : clients_) {
    if (client->ctl_fd != ctl_fd) continue;
    for (const auto& [object_handle, object] : client->objects) {
      if (object.channel) found.push_back(*object.channel);
    }
  }
  return found;
}

std::optional<MockChannel> MockRm::channel_by_token(NvU32 token, int gpu) const {
  for (const MockChannel& channel : channels(gpu)) {
    if (channel.work_submit_token == token) return channel;
  }
  return std::nullopt;
}

std::size_t MockRm::object_count() const {
  std::size_t count = 0;
  for (const auto& [handle, client] : clients_) count += client->objects.size();
  return count;
}

}  // namespace doorbell::mockgpu::nv
