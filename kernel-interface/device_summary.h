#pragma once
// One human-readable line per kind of device found by the probe, as `doorbell devices` prints them.

#include <string>
#include <vector>

#include "kernel-interface/device_probe.h"

namespace doorbell::kernel_interface {

std::string summarize_cpu(const CpuInfo& cpu);        // "CPU: 2 cores, AMD EPYC, avx2 fma"
std::string summarize_nvidia(const NvidiaInfo& nvidia);  // "NV: none (/dev/nvidiactl absent)"
// One line per GPU the driver listed: "  NV:1 /dev/nvidia1, PCI 0000:02:00.0 10de:2335, gpu_id 0x200, 141 GiB".
std::vector<std::string> summarize_nvidia_gpus(const NvidiaInfo& nvidia);
std::string summarize_amd(const AmdInfo& amd);        // "AMD: 1 GPU: gfx1100 (node 1, 96 CUs, /dev/dri/renderD128)"
std::vector<std::string> summarize_devices(const Devices& devices);

}  // namespace doorbell::kernel_interface
