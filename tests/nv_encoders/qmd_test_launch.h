// The launch the QMD tests encode: every field set to a distinct value that fits both V04 and V03 and survives a
// round trip (sizes on their granularity). Semaphore and constant buffer addresses stay below 2^40 for V03.
#pragma once
#include "hcq/nv/qmd.h"

namespace doorbell::nv::test {

inline QmdLaunch full_launch() {
  QmdLaunch q;
  q.program_address = 0x7f1234567880;
  q.program_prefetch_size = 0x1000;
  q.grid_x = 0x12345;
  q.grid_y = 0x678;
  q.grid_z = 9;
  q.block_x = 128;
  q.block_y = 4;
  q.block_z = 2;
  q.shared_memory_size = 0x3000;
  q.sm_config_shared_memory_min = 8 * 1024;
  q.sm_config_shared_memory_max = 100 * 1024;
  q.sm_config_shared_memory_target = 32 * 1024;
  q.register_count = 0x48;
  q.barrier_count = 1;
  q.constant_buffer0_address = 0x7f00001040;
  q.constant_buffer0_size = 0x230;
  q.releases[0] =
      QmdRelease{.enable = true, .address = 0x7f00002000, .payload = 0x100000005, .timestamp = true, .payload64 = true};
  q.releases[1] =
      QmdRelease{.enable = true, .address = 0x7f00002010, .payload = 7, .timestamp = false, .payload64 = true};
  q.releases[2] =
      QmdRelease{.enable = true, .address = 0x7f00002024, .payload = 9, .timestamp = false, .payload64 = false};
  q.dependent_qmd_address = 0xabcdef0100;
  q.shader_local_memory_low_size = 0x40;
  q.shader_local_memory_high_size = 0x120;
  q.sass_version = 0x90;
  q.qmd_group_id = 0x3f;
  q.qmd_type = NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA;
  q.invalidate_caches = true;
  return q;
}

}  // namespace doorbell::nv::test
