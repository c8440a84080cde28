// create_schedule: orders kernels so that every read sees the state it names (tinygrad schedule/__init__.py).
//  - read-after-write: a kernel runs after the kernel whose write it reads;
//  - write-after-read: a kernel that overwrites a state runs after every other kernel that reads that state;
//  - an assign runs after the previous writer of its target.
// Ties keep creation order (Kahn's algorithm with a FIFO), so the order is deterministic.
#pragma once
#include <vector>

#include "scheduler/rangeify.h"

namespace doorbell {

// Kernel indices in execution order. Throws std::runtime_error("cycle detected in assign graph: ...") naming
// the kernels when the dependencies form a cycle.
std::vector<int> order_kernels(const std::vector<Kernel>& kernels);

}  // namespace doorbell
