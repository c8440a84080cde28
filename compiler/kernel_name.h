// Readable kernel names in tinygrad's style: the kind of kernel and its shape, so DEBUG=2 lines and profiles say
// what a kernel is. "E" is an elementwise kernel, "r" one with a reduction; then the sizes, separated by "_":
//  - on a GPU, the launch: the grid's blocks (x, y, z, those above 1), then the threads of a block;
//  - on the CPU, the output loops of the scheduler's kernel;
//  then the sizes of the reduce loops (a variable's name where a size is symbolic). E_4_16 is 4 blocks of 16
// threads; r_256_32 reduces 32 elements into each of 256 outputs. The name is also the function's symbol in the
// source; two different kernels may share it: caches key on the kernel's content, never on the name.
#pragma once
#include <string>

#include "compiler/target.h"
#include "ir/uop.h"

namespace doorbell {

// `sink`: the scheduler's kernel; `lowered`: what the target's pipeline made of it (its launch sizes); `gpu`: whether
// the target launches blocks of threads.
std::string kernel_name(const UOp& sink, const LoweredKernel& lowered, bool gpu);

}  // namespace doorbell
