// Backends: how a device comes to exist (DESIGN.md "Backends"). A backend is one folder and one registration: a
// device-name prefix, the renderers it offers, and a factory for its Device, whose target() (compiler/target.h)
// renders and compiles and whose load() turns a PROGRAM into what its queues launch. The runtime (run_linear,
// compile_linear, buffers) talks only to Device; it never names a backend. Each backend registers itself from its
// folder (hcq/cpu/cpu_backend.cpp, hcq/nv/nv_backend.cpp, hcq/ref/ref_backend.cpp), a test can add one from its own
// file:
//   static const bool registered = register_backend({.prefix = "TOY", .renderers = {"C"}, .open = ...});
//
// Device names, parsed in one place: PREFIX[:INDEX][:RENDERER], upper case; "NV" is the first GPU, "NV:1" the
// second, "CPU:C" the CPU with its C renderer (the default, named by the first renderer a backend lists). The
// canonical name leaves out index 0 and the default renderer: "NV:0" and "NV:0:PTX" are "NV".
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell {

class Device;

struct DeviceName {
  std::string prefix;    // "CPU", "NV"
  int index = 0;         // which device of that backend: 0 the first
  std::string renderer;  // "" for the backend's default
  std::string canonical() const;
};

struct Backend {
  std::string prefix;                  // upper-case letters and digits, starting with a letter
  std::string description;             // one line for `doorbell devices` and errors
  std::vector<std::string> renderers;  // the renderer suffixes it accepts; the first is the default
  // Makes the device named `name` (renderer already resolved to one of `renderers`). Throws naming what is missing
  // (no such GPU, no driver) when it cannot.
  std::function<std::unique_ptr<Device>(const DeviceName& name)> open;
};

// Adds a backend; returns true so a registration can initialize a static. Throws std::invalid_argument for a bad or
// duplicate prefix.
bool register_backend(Backend backend);

// Parses and resolves a device name against the registered backends: the renderer defaults to the backend's first.
// Throws std::invalid_argument naming the text and what was expected (an unknown prefix lists the known ones; an
// unknown renderer lists the backend's).
DeviceName parse_device_name(std::string_view text);

// The registered backends' prefixes, sorted; and one backend's registration (nullptr when unknown).
std::vector<std::string> backend_prefixes();
const Backend* find_backend(std::string_view prefix);

}  // namespace doorbell
