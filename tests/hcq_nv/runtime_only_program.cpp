// A program on the runtime alone: it links doorbell_frontend and what that needs, never doorbell_mockgpu, and adds 1
// to two numbers on the device named by DEV. tests/hcq_nv/CMakeLists.txt checks that it holds no emulator and that
// under MOCKGPU=1 it fails naming what to link and call.
#include <cstdio>
#include <exception>
#include <vector>

#include "frontend/tensor.h"

int main() {
  try {
    const std::vector<float> got = (doorbell::Tensor({1.f, 2.f}) + 1).tolist<float>();
    std::printf("[%g, %g]\n", got[0], got[1]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runtime_only_program: %s\n", e.what());
    return 1;
  }
}
