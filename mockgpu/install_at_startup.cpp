// Installs mockgpu's emulators before main() (mockgpu/install.h), for programs that cannot call install() from a
// main of their own: test binaries on gtest_main and the examples' nv.* runs. Built as an object library
// (doorbell_mockgpu_installed), never into the doorbell_mockgpu archive: nothing refers to this file, so an archive
// would leave it out of the link.
#include "mockgpu/install.h"

namespace {

const bool installed = [] {
  doorbell::mockgpu::install();
  return true;
}();

}  // namespace
