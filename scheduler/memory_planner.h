// The memory planner: places the intermediate buffers of a LINEAR in one arena per device by lifetime
// (tinygrad schedule/memory.py). Two buffers share bytes only when their lifetimes do not overlap.
//
// Input: a LINEAR of CALLs (src[1..] of each CALL are its buffers). Candidates are BUFFER(UNIQUE, DEVICE) args
// not in `held` (held: inputs and outputs that live beyond the schedule). A candidate's lifetime is
// [first call using it, last call using it]; its bytes are free again from the call after its last use, so a
// buffer last used by call i and one first used by call i never share bytes, and one first used by call i+1 may.
// Sizes round up to 256 bytes; offsets are multiples of 256. Output: the LINEAR with each planned buffer replaced
// by a view
//   BUFFER(arena, CONST int64 byte_offset) with the planned buffer's dtype and arg (element count),
// where arena = new_buffer(uint8, peak bytes, device) (a fresh UNIQUE id). When several buffers of one dtype and
// count take the same place at different times, the second and later views carry tag 1, 2, ... so that each stays
// its own node (hash-consing would merge them into one buffer with both lifetimes). CALL bodies are not entered.
// Args that are not BUFFERs are left alone; a BUFFER reachable only inside such an arg (or a view) is not planned,
// since its uses there are not visible. A LINEAR without candidates comes back as the same node.
// The plan depends only on the LINEAR and `held`: the same input gives the same offsets and peaks.
// Throws std::invalid_argument naming the op when the input is not a LINEAR of CALLs, and naming the buffer when
// a candidate has no DEVICE, no element count, or a dtype without storage.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>

#include "ir/uop.h"

namespace doorbell {

struct MemoryPlanStats {
  std::map<std::string, int64_t> peak_bytes;      // per device: the arena's size
  std::map<std::string, int64_t> unplanned_bytes;  // per device: the candidates' rounded bytes without sharing
  int64_t buffers_planned = 0;
};

// `stats`, when given, is overwritten; devices without candidates have no entry.
UOp memory_plan(const UOp& linear, const std::unordered_set<const UOpNode*>& held, MemoryPlanStats* stats = nullptr);

// Checks a planned LINEAR: no two views whose lifetimes overlap share a byte, and every view lies inside its
// arena. Throws std::logic_error naming the two buffers (dtype, count, offset) and the call where they overlap, or
// the view and its arena. Views are BUFFER(BUFFER, CONST) args; one view node is one buffer, alive from its first
// to its last use (memory_plan tags views so that distinct buffers are distinct nodes).
void verify_memory_plan(const UOp& linear);

}  // namespace doorbell
