// `doorbell check --device NV`: whether a device works with doorbell, for users and for the machines we are lent.
// It runs the HCQ contract on the device (signals, waits, a wait the host satisfies later, 64-bit values, timestamps
// bracketing a kernel, 1000 chained kernels, copies, a bound queue patched and resubmitted, a timeout naming the
// signal), a conformance subset realized on the device and compared with the host, and then measures dispatch
// latency (submit to kernel start, submit to completion, per kernel in a batch of 1000) and kernel-only times from
// the queue's own timestamps, and copy bandwidth. With `experiments` it also runs tools/nv_experiments.h, and with
// `json_path` it writes every figure, the device's identity and each experiment's outcome as JSON there. Assertions
// are its own (no test framework), so it builds with every optional dependency off. With MOCKGPU=1 it runs on the
// emulated driver and GPU.
#pragma once
#include <cstdio>
#include <string>

namespace doorbell {

struct DeviceCheckOptions {
  bool experiments = false;  // run the experiments (tools/nv_experiments.h) after the checks
  std::string json_path;     // "" writes no JSON; a path that cannot be written throws before anything runs
};

// Prints a line per check and the figures to `out`; returns 0 when every check passed (on the emulated GPU: and
// every experiment gave the outcome the emulator defines), 1 otherwise.
int run_device_check(const std::string& device, std::FILE* out, const DeviceCheckOptions& options = {});

}  // namespace doorbell
