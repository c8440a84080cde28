// The scheduler's entry point: tensor-graph values in, a LINEAR of kernel CALLs out (tinygrad schedule/, seed 000).
//
// The tensor graph it consumes (built by frontend/):
//  - storage: BUFFER(UNIQUE(id), DEVICE(name)) with arg = element count and dtype = element dtype; shape (count,).
//    new_buffer() makes one with a fresh id. A realized tensor is a movement view of a BUFFER (usually RESHAPE).
//  - CONST has shape (); the frontend RESHAPEs and EXPANDs it to a tensor shape.
//  - elementwise ops take sources of equal shape; EXPAND is numpy-style (same rank, 1 -> n);
//    PAD arg (before, after) per axis fills with 0; SHRINK arg (begin, end) per axis; FLIP arg = axes;
//    REDUCE arg ReduceArg{op, axes} keeps reduced axes as size 1.
//  - CONTIGUOUS(x): x is stored. DETACH and CONTIGUOUS_BACKWARD pass their value through.
//  - assign: AFTER(target, STORE(target, value)) where target is a view of a BUFFER; readers of the AFTER see
//    the new value, readers of the BUFFER itself see the old one.
//
// The kernels it produces: CALL(SINK(...), buf0, buf1, ...), where CALL src[0] is the kernel body and src[i+1]
// is the buffer bound to PARAM slot i. In the body a buffer parameter is PARAM(ParamArg{slot, GLOBAL, "",
// 0, count - 1}): [vmin, vmax] is the range of valid element indices. Each output is
// END(STORE(INDEX(PARAM, index), value), RANGE...); loads are LOAD(INDEX(PARAM, index)) or, gated,
// LOAD(INDEX(PARAM, index, valid)) which reads 0 where valid is false.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ir/environment.h"
#include "ir/uop.h"
#include "scheduler/schedule_options.h"

namespace doorbell {

// `device` defaults to DEV (ir/environment.h).
UOp new_buffer(DType dtype, int64_t count, const std::string& device = default_device_name());
// The BUFFER behind a view (through movement ops, AFTER, CONTIGUOUS views...), or a null UOp.
UOp base_buffer(const UOp& view);

struct ScheduleResult {
  UOp linear;                                // Ops::LINEAR of Ops::CALL, in a dependency-correct order
  std::vector<std::pair<UOp, UOp>> becomes;  // each scheduled output value -> the buffer view that now holds it
  int64_t peak_bytes = 0;                    // of the memory plan's arenas, all devices together
  bool cache_hit = false;
};

// Schedules everything needed to store `outputs`, with the layout choices of `options` (scheduler/layout.h: the
// tensor-graph passes that run before rangeify; the default chooses none, as the REF and NV targets do). Throws
// std::runtime_error naming the cycle when kernels depend on each other in a circle ("cycle detected in assign
// graph").
ScheduleResult schedule(const std::vector<UOp>& outputs, const ScheduleOptions& options = {});

}  // namespace doorbell
