#!/usr/bin/env bash
# The NV device check: configures a build with every optional dependency off (DOORBELL_MINIMAL: what a GPU machine
# with only g++, CMake, ninja and the CUDA toolkit can build), builds `doorbell` and runs `doorbell check --device NV`.
# On a machine with an NVIDIA GPU (driver 580) it checks the GPU, assembling kernels with ptxas; with MOCKGPU=1 it runs
# on the emulated driver and GPU (CI does that, so the check cannot rot). Exits with the check's status.
# Usage: tests/device/nv_check.sh [build-dir]   (default build/nv-check)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build/nv-check}"
export PATH="$PATH:/usr/local/cuda/bin"  # ptxas, where the CUDA toolkit puts it
start=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDOORBELL_MINIMAL=ON > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target doorbell -- -j"$(nproc)"
echo "nv_check: built in $(( $(date +%s) - start )) s"
status=0
"$build/tools/doorbell" check --device NV || status=$?
echo "nv_check: done in $(( $(date +%s) - start )) s, status $status"
exit $status
