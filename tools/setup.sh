#!/usr/bin/env bash
# Shared by tools/run.sh and tools/test.sh: installs the Debian packages doorbell needs (only those missing) and
# configures and builds a build directory incrementally.
#
# Sourced: defines doorbell_install_packages and doorbell_build. Run directly: installs packages and builds
# build/release.
set -euo pipefail

DOORBELL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# libopenblas-dev is for benchmarks only: `doorbell bench` and bench_cpu_limits load OpenBLAS at run time (dlopen) as
# the sgemm floor; nothing links it, and without it that floor reports "unavailable". libdrm-dev is for a check
# only: kernel-interface/amd reads the amdgpu render node with its own constants and, where libdrm's amdgpu_drm.h is
# installed, checks them against it at compile time (the GPU machines build without it). The Vulkan packages are for
# DEV=VK: the loader and headers (libvulkan-dev), Mesa's lavapipe, a Vulkan device on the CPU that CI runs the VK
# suites on (mesa-vulkan-drivers), the validation layer the VK tests enable (vulkan-validationlayers), and spirv-val,
# which the tests run on every SPIR-V module (spirv-tools).
DOORBELL_PACKAGES=(build-essential cmake ninja-build ccache git llvm-19-dev clang-19 lld-19
                   libgtest-dev libgmock-dev libbenchmark-dev pkg-config libpciaccess-dev
                   libopenblas-dev libdrm-dev
                   libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers spirv-tools)

# Each line with the time since the script started (bash SECONDS), so a CI log shows where its minutes go.
doorbell_say() { printf '==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Installs the packages of DOORBELL_PACKAGES that dpkg does not list as installed; does no apt work when none is
# missing. Off Debian (no dpkg-query) it installs nothing: the build then leaves out what it cannot find.
doorbell_install_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    doorbell_say "no dpkg-query: not a Debian system, installing nothing (optional parts are left out of the build)"
    return 0
  fi
  local missing=() package
  for package in "${DOORBELL_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)" != "install ok installed" ]]; then
      missing+=("$package")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    doorbell_say "Debian packages: all ${#DOORBELL_PACKAGES[@]} present"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "doorbell: missing Debian packages: ${missing[*]}" >&2
    echo "doorbell: run as root to install them, or install them with: apt-get install ${missing[*]}" >&2
    return 1
  fi
  doorbell_say "installing missing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y "${missing[@]}"
}

# doorbell_build <build dir relative to the repo root> <cmake -D options...> [-- <targets...>]
# Configures (cheap when nothing changed) and builds incrementally with Ninja: everything, or the targets after --.
doorbell_build() {
  local build_dir="$DOORBELL_ROOT/$1"
  shift
  local options=() targets=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do options+=("$1"); shift; done
  if [[ $# -gt 0 ]]; then shift; targets=(--target "$@"); fi
  set -- "${options[@]}"
  local generator=()
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    generator=(-G Ninja)
  fi
  doorbell_say "configuring $build_dir: $*"
  cmake -S "$DOORBELL_ROOT" -B "$build_dir" "${generator[@]}" "$@"
  doorbell_say "building $build_dir ${targets[*]}"
  cmake --build "$build_dir" "${targets[@]}"
}

# The two builds the README commands use; both scripts pass the same options so neither reconfigures the other's.
DOORBELL_RELEASE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DDOORBELL_WITH_TESTS=OFF)
# The sanitizer trees compile at -O1 with line tables only (-g1): half the compile time of -O2 -g on 2 cores, and
# reports still name file and line.
DOORBELL_SANITIZER_FLAGS="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
DOORBELL_ASAN_OPTIONS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DDOORBELL_SANITIZE=ON -DDOORBELL_WERROR=ON
                       -DDOORBELL_WITH_BENCH=OFF "$DOORBELL_SANITIZER_FLAGS")
# ThreadSanitizer: tools/test.sh builds only DOORBELL_TSAN_TARGETS there and runs their tests. LLVM is off: its
# code would not be instrumented, and none of those tests needs it.
DOORBELL_TSAN_OPTIONS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DDOORBELL_TSAN=ON -DDOORBELL_WERROR=ON
                       -DDOORBELL_WITH_BENCH=OFF -DDOORBELL_WITH_LLVM=OFF "$DOORBELL_SANITIZER_FLAGS")
DOORBELL_TSAN_TARGETS=(test_hcq test_frontend test_scheduler test_layout)

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  doorbell_install_packages
  doorbell_build build/release "${DOORBELL_RELEASE_OPTIONS[@]}"
fi
