#pragma once
// One human-readable line per kind of device found by the probe, as `doorbell devices` prints them.

#include <string>
#include <vector>

#include "kernel-interface/device_probe.h"

namespace doorbell::kernel_interface {

std::string summarize_cpu(const CpuInfo& cpu);        // "CPU: 2 cores, AMD EPYC, avx2 fma"
std::string summarize_nvidia(const NvidiaInfo& nvidia);  // "NV: none (/dev/nvidiactl absent)"
std::string summarize_amd(const AmdInfo& amd);        // "AMD: 1 GPU: gfx1100 (node 1, 96 CUs, /dev/dri/renderD128)"
std::vector<std::string> summarize_devices(const Devices& devices);

}  // namespace doorbell::kernel_interface
