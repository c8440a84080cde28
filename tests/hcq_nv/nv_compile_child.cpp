// A second process for NvProgram.ASecondProcessReadsTheCubinFromTheDiskCache: compiles one kernel for the emulated NV
// device (DEV=NV MOCKGPU=1, with the disk cache its parent chose in DOORBELL_CACHE_DIR) and prints how many times it
// ran ptxas.
#include <cstdio>
#include <cstdlib>

#include "compiler/gpu/ptxas.h"
#include "compiler/subprocess.h"
#include "frontend/tensor.h"
#include "ir/environment.h"

int main() {
  using namespace doorbell;
  setenv("MOCKGPU", "1", 1);
  set_default_device_name("NV");
  try {
    Tensor x = Tensor(std::vector<float>{1, 2, 3, 4}).realize();
    (x * 123.5f + 9).realize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nv_compile_child: %s\n", e.what());
    return 1;
  }
  std::optional<std::string> ptxas = find_ptxas();
  std::printf("ptxas runs: %llu\n", static_cast<unsigned long long>(ptxas ? process_runs(*ptxas) : 0));
  return 0;
}
