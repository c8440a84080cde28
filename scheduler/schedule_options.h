// ScheduleOptions: the layout choices the scheduler makes for one device's target before rangeify. The target
// chooses them (compiler/target.h LoweringOptions has the same flags); the frontend copies them from the outputs'
// device, so nothing in the scheduler names a device. Part of the schedule cache key (scheduler/schedule.cpp): a
// graph scheduled with two option sets gives two schedules.
#pragma once

namespace doorbell {

struct ScheduleOptions {
  // A big reduction over axis 0 with rows of at most 4096 contiguous elements runs as parts of whole rows, then
  // the parts (scheduler/layout.h split_leading_reduce).
  bool split_leading_reduce = false;
  // A float32 (M, K) @ (K, N) whose rows of w are a multiple of 4 KiB apart first packs w into contiguous panels of
  // 32 columns (scheduler/layout.h pack_matmul_panels).
  bool pack_matmul_panels = false;

  bool operator==(const ScheduleOptions&) const = default;
};

}  // namespace doorbell
