// ptxas: PTX text -> an NVIDIA cubin (ELF) by running NVIDIA's ptxas, found at run time (PATH, then
// /usr/local/cuda/bin), so the build needs no CUDA. The `-v` report is parsed into PtxasReport; its lines look like
//   ptxas info    : Function properties for NAME
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 8 registers, used 0 barriers, 372 bytes cmem[0]
// (CUDA 12.x and 13.x; fields a version does not print stay 0 / not seen).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace doorbell {

// ptxas is missing or failed: the command line, exit status and its diagnostics.
class PtxasError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PtxasFunctionReport {
  int registers = 0;
  int barriers = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t shared_bytes = 0;   // "N bytes smem"
  int64_t cmem0_bytes = -1;   // "N bytes cmem[0]"; -1 when this ptxas does not print it
};

struct PtxasReport {
  std::map<std::string, PtxasFunctionReport> functions;  // by entry name
  std::string text;  // the whole -v output
};

struct PtxasResult {
  std::string cubin;  // the bytes of the ELF
  PtxasReport report;
  double ms = 0;      // wall time of the ptxas process
};

// The full path of ptxas, or nullopt when neither PATH nor /usr/local/cuda/bin has one.
std::optional<std::string> find_ptxas();
inline bool ptxas_available() { return find_ptxas().has_value(); }

// Runs `ptxas -arch=<arch> -v -o out.cubin in.ptx`. Throws PtxasError when ptxas is absent or rejects the PTX.
PtxasResult assemble_ptx(const std::string& ptx, const std::string& arch);

// Parses ptxas -v output (exposed for tests).
PtxasReport parse_ptxas_report(const std::string& text);

}  // namespace doorbell
