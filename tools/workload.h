// The `doorbell` program's workload: a small MLP forward pass run end to end on the default device (schedule,
// compile, HCQ dispatch), checked against a float64 host computation, with tinygrad's DEBUG=2 table of kernels.
#pragma once
#include <cstdio>

namespace doorbell {

// Prints to `out` (the DEBUG=2 kernel lines go to stderr); returns 0 when the results check out, 1 otherwise.
int run_workload(std::FILE* out);

}  // namespace doorbell
