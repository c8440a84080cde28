// The memory planner: places the intermediate buffers of a LINEAR in one arena per device by lifetime
// (tinygrad schedule/memory.py). Two buffers share bytes only when their lifetimes do not overlap.
//
// Input: a LINEAR of CALLs (src[1..] of each CALL are its buffers). Candidates are BUFFER(UNIQUE, DEVICE) args
// not in `held` (held: inputs and outputs that live beyond the schedule). A candidate's lifetime is
// [first call using it, last call using it]; its bytes are free again from the call after its last use.
// Sizes round up to 256 bytes. Output: the LINEAR with each planned buffer replaced by a view
//   BUFFER(arena, CONST int64 byte_offset) with the planned buffer's dtype and arg (element count),
// where arena = BUFFER(UNIQUE, DEVICE) of dtype uint8 and arg = the arena's peak bytes.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>

#include "ir/uop.h"

namespace doorbell {

struct MemoryPlanStats {
  std::map<std::string, int64_t> peak_bytes;      // per device: the arena's size
  std::map<std::string, int64_t> unplanned_bytes;  // per device: the candidates' bytes without sharing
  int64_t buffers_planned = 0;
};

UOp memory_plan(const UOp& linear, const std::unordered_set<const UOpNode*>& held, MemoryPlanStats* stats = nullptr);

// Checks a planned LINEAR: no two views whose lifetimes overlap share a byte, and every view lies inside its
// arena. Throws std::logic_error naming the two buffers and the calls where they overlap.
void verify_memory_plan(const UOp& linear);

}  // namespace doorbell
