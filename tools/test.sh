#!/usr/bin/env bash
# Every test: installs what is missing, builds build/release and runs the benchmarks registered with the label
# `bench` there and `doorbell bench` (figures only), runs the NV device check on the emulated GPU in a build with every optional
# dependency off (build/nv-check), builds the hcq, frontend and scheduler tests with ThreadSanitizer (build/tsan) and
# runs them, then builds build/asan (ASan + UBSan, warnings are errors) and runs every ctest test there. The ASan tests
# run last so that ctest's closing summary counts all of them.
# Exits non-zero when a build, a benchmark or a test fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$DOORBELL_ROOT"

doorbell_install_packages

# Compiled kernels are cached on disk across processes (compiler/cpu/object_cache.h); the tests use a cache of
# their own, emptied here, so each run compiles every kernel at least once and never reads the user's cache.
export DOORBELL_CACHE_DIR="$DOORBELL_ROOT/build/kernel-cache"
rm -rf "$DOORBELL_CACHE_DIR"

doorbell_build build/release "${DOORBELL_RELEASE_OPTIONS[@]}"
bench_list="$(ctest --test-dir build/release -N -L bench)"
if [[ "$bench_list" == *"Total Tests: 0"* ]]; then
  doorbell_say "no benchmarks registered (ctest label bench) in build/release"
else
  doorbell_say "running the benchmarks (ctest label bench) in build/release; JSON in build/release/bench-results/"
  ctest --test-dir build/release -L bench -V
fi
# The main job's benchmark as users run it: the short suite's table in the log, every figure as JSON beside the rest.
doorbell_say "running doorbell bench (short); JSON in build/release/bench-results/doorbell_bench.json"
mkdir -p build/release/bench-results
build/release/tools/doorbell bench --json build/release/bench-results/doorbell_bench.json

# The NV device check as a lent GPU machine runs it (every optional dependency off), here on the emulated GPU.
doorbell_say "running the NV device check on the emulated GPU (tests/device/nv_check.sh, MOCKGPU=1)"
# Its time limits are for a lent machine's 16 cores and 15 minutes; here the build gets what a loaded 2-core machine
# needs (a shared CI machine once took over 300 s and the script stopped the build).
MOCKGPU=1 NV_CHECK_CONFIGURE_S=300 NV_CHECK_BUILD_S=2400 NV_CHECK_RUN_S=600 bash tests/device/nv_check.sh build/nv-check

# ThreadSanitizer on a subset (build time): the hcq, frontend and scheduler test binaries of DOORBELL_TSAN_TARGETS,
# with the threads stress tests (Threads.*, HcqThreads.*). Only those targets are built, so ctest knows only their
# tests under these labels (the doorbell command's tests are labelled hcq too and left out: `doorbell` is not built).
doorbell_build build/tsan "${DOORBELL_TSAN_OPTIONS[@]}" -- "${DOORBELL_TSAN_TARGETS[@]}"
doorbell_say "running the ThreadSanitizer subset in build/tsan (${DOORBELL_TSAN_TARGETS[*]})"
tsan_status=0
# Left out: DeepGraph.* (chains of 10^5..10^6 ops) and the large matmul packing test check graph depth and packing
# with one realize at a time, not concurrency; under TSan they took 2 of these 3 minutes (the million-add chain
# alone 74 s). ASan runs them.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --test-dir build/tsan --output-on-failure -j2 -L '^(hcq|frontend|scheduler)$' \
  -E '^doorbell_cli\.|^DeepGraph\.|^PackMatmulPanels\.A256x1024By1024x1024' ||
  tsan_status=$?

doorbell_build build/asan "${DOORBELL_ASAN_OPTIONS[@]}"
doorbell_say "running every test in build/asan"
# LeakSanitizer: what lavapipe and the Vulkan validation layer keep for a device open until exit (only those two
# modules are named; firmware-notes/vulkan-device.md §3.1). The gtest registrations set it too (cmake/DoorbellTesting.cmake).
# print_suppressions=0: the report of suppressions used would go to stderr, which the doorbell_cli tests match exactly.
export LSAN_OPTIONS="suppressions=$DOORBELL_ROOT/tests/lsan_vulkan.supp:print_suppressions=0"
ctest_status=0
ctest --test-dir build/asan --output-on-failure -j2 | tee build/asan/ctest-output.txt || ctest_status=$?

# ctest names skipped tests but not why; each DOORBELL_REQUIRE_DEVICE skip says what is missing.
skips="$(grep -A1 ': Skipped$' build/asan/Testing/Temporary/LastTest.log 2>/dev/null | grep -v -e '^--$' || true)"
if [[ -n "$skips" ]]; then
  doorbell_say "why tests were skipped:"
  echo "$skips"
fi
# One plain closing line: ctest counts skipped tests as passed, this line does not.
summary="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' build/asan/ctest-output.txt | tail -1 || true)"
if [[ -n "$summary" ]]; then
  failed="$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")"
  total="$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$summary")"
  skipped="$(grep -c ' (Skipped)$' build/asan/ctest-output.txt || true)"
  echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
fi
if [[ $tsan_status -ne 0 ]]; then
  echo "doorbell: tests failed in build/tsan (ctest exit code $tsan_status)" >&2
fi
if [[ $ctest_status -ne 0 ]]; then
  echo "doorbell: tests failed in build/asan (ctest exit code $ctest_status)" >&2
  exit "$ctest_status"
fi
if [[ $tsan_status -ne 0 ]]; then exit "$tsan_status"; fi
