// DEBUG=N from the environment, read once (tinygrad's levels: 1 schedule, 2 kernels, 4 source, 5+ rewrites).
#pragma once

namespace doorbell {

int debug_level();
void set_debug_level(int level);  // for tests and tools; overrides the environment

}  // namespace doorbell
