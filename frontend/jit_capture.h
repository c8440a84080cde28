// The seam between realize and a Jit capturing on this thread (frontend/jit.h): while a capture is active, every
// LINEAR that Tensor::realize runs is also handed to it, and reading values back to the host (tolist, item) is an
// error, since a replay would keep the values read at capture (tinygrad raises JitError for .item() in capture too).
#pragma once
#include <vector>

#include "ir/uop.h"

namespace doorbell::frontend {

struct JitCapture {
  std::vector<UOp> linears;  // in the order they ran
};

// The capture active on this thread, or null.
JitCapture* active_jit_capture();
void set_active_jit_capture(JitCapture* capture);

// Throws JitError naming `what` when a capture is active on this thread.
void refuse_during_jit_capture(const char* what);

}  // namespace doorbell::frontend
