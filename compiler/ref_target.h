// The reference target (compiler/target.h) of the REF device (hcq/ref/ref_device.h): no lowering, no compiler. Its
// "source" is the scheduler's kernel printed one node per line (what DEBUG=4 shows) and its binary is empty: the REF
// device interprets the PROGRAM's SINK element by element with the IR's own semantics (ir/exec_alu.h), the
// reference every compiled target is tested against.
#pragma once
#include "compiler/target.h"

namespace doorbell {

const Target& ref_target();

}  // namespace doorbell
