// rangeify: turns a tensor graph into kernels (tinygrad schedule/rangeify.py and indexing.py, seed 000).
// Each stored value becomes one kernel that loops over its shape with explicit RANGEs; movement ops become index
// arithmetic on those ranges (PAD also becomes a validity mask that gates loads), so no view is ever stored.
// What is stored: the outputs, CONTIGUOUS values, assigns, reduces whose result is broadcast or used by more than
// one consumer, and an assign's value when it reads its own target through another view (the store hazard).
// Everything else, elementwise values with several consumers included, is recomputed where it is used.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/uop.h"

namespace doorbell {

struct StateRead {
  UOp storage;   // BUFFER or placeholder PARAM
  int producer;  // index of the kernel whose write is read; -1: the state before this schedule
};

struct Kernel {
  UOp body;                  // SINK(END(STORE(INDEX(PARAM 0, idx), value), ranges...))
  std::vector<UOp> args;     // storage bound to PARAM slots; args[0] is written
  std::vector<StateRead> reads;
  int prev_state = -1;       // the state of args[0] this kernel's write replaces
  bool is_assign = false;
};

struct KernelGraph {
  std::vector<Kernel> kernels;                       // in creation order (producers before consumers)
  std::vector<std::pair<UOp, UOp>> becomes;          // output value -> view of the storage that holds it
  std::vector<UOp> intermediates;                    // storage created for values that are not outputs
};

// The longest chain of ops one kernel computes, EXP2, LOG2, SIN and POW counting 16 (the float arithmetic they
// become): a value further from the nearest stored value is stored. Long enough that no common program is split,
// short enough that the C compiler takes each kernel in well under a second; a chain of a million ops becomes
// kernels of this depth, the same kernel for each link of a repeated pattern, compiled once.
inline constexpr int64_t kMaxFusedDepth = 256;

// Storage leaves: a BUFFER with a UNIQUE identity, or a GLOBAL PARAM standing for one (schedule cache keys).
bool is_storage(const UOp& u);
KernelGraph rangeify(const std::vector<UOp>& outputs);

}  // namespace doorbell
