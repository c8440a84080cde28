#!/usr/bin/env bash
# The NV device check, in one run for a lent GPU: configures a build with every optional dependency off
# (DOORBELL_MINIMAL: what a GPU machine with only g++, CMake, ninja and the CUDA toolkit can build), builds `doorbell`
# alone and runs `doorbell check --device NV --experiments --json FILE`: the HCQ contract, a conformance subset,
# dispatch latency, kernel-only times, copy bandwidth and the experiments (tools/nv_experiments.h). Every step runs
# under `timeout`, so a hang cannot eat the lease. It leaves ONE JSON file with every figure, the device and each
# experiment's outcome, plus this script's own timings and status (or, when the check wrote none, the error and the
# end of its log), checks it with tests/device/check_nv_report.cmake and prints it last, so it comes back in the
# output tail. On a machine with an NVIDIA GPU (driver 580) it checks the GPU, assembling kernels with ptxas; with
# MOCKGPU=1 it runs on the emulated driver and GPU (CI does that, so the script cannot rot). Exits with the check's
# status (124 when a step timed out).
# Usage: tests/device/nv_check.sh [build-dir [json-file]]   (defaults build/nv-check and <build-dir>/nv_check.json)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build/nv-check}"
report="${2:-$build/nv_check.json}"
export PATH="$PATH:/usr/local/cuda/bin"  # ptxas, where the CUDA toolkit puts it
# Seconds each step may take: a run should take under 2 minutes; together the limits stay under the 600 s one command
# may run on a lent machine (whose lease is 15 minutes, all tries together), so a hang still leaves a report.
configure_limit=${NV_CHECK_CONFIGURE_S:-60}
build_limit=${NV_CHECK_BUILD_S:-300}
check_limit=${NV_CHECK_RUN_S:-200}
mkdir -p "$build" "$(dirname "$report")"
rm -f "$report"
log="$build/nv_check.log"
start=$(date +%s)
stage=configure
status=0

# A JSON string of the text (backslash, quote, tab and control characters escaped; lines joined with \n).
json_text() {
  LC_ALL=C sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/[[:cntrl:]]//g' | awk 'BEGIN { ORS = "" } { if (NR > 1) print "\\n"; print }'
}

finish() {
  local now total
  now=$(date +%s)
  total=$(( now - start ))
  local script="\"script\": {\"stage\": \"$stage\", \"status\": $status, \"build_s\": ${build_s:-null}, \"check_s\": ${check_s:-null}, \"total_s\": $total}"
  if [ -s "$report" ] && head -c 2 "$report" | grep -q '^{'; then
    # The check's report starts with "{\n": this script's figures go in as its first member.
    { printf '{\n  %s,\n' "$script"; tail -c +3 "$report"; } > "$report.tmp" && mv "$report.tmp" "$report"
  else
    printf '{\n  %s,\n  "error": "%s",\n  "log_tail": "%s"\n}\n' "$script" \
      "$(printf '%s' "${error:-the check wrote no report}" | json_text)" "$(tail -n 40 "$log" 2>/dev/null | json_text)" > "$report"
  fi
  echo "nv_check: done in ${total} s, stage $stage, status $status; report $report"
  if command -v cmake > /dev/null && [ "$stage" = done ]; then
    timeout 30 cmake -DREPORT="$report" -P "$root/tests/device/check_nv_report.cmake" 2>&1 | tail -n 30 || true
  fi
  echo "nv_check: JSON report follows"
  cat "$report"
  exit "$status"
}

run_step() {  # run_step <limit seconds> <command...>: output to the log and this terminal
  timeout --kill-after=10 "$1" "${@:2}" 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

: > "$log"
if ! timeout "$configure_limit" cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDOORBELL_MINIMAL=ON \
    >> "$log" 2>&1; then
  status=$?
  error="cmake configure failed (status $status, limit ${configure_limit} s)"
  tail -n 40 "$log"
  finish
fi
stage=build
run_step "$build_limit" cmake --build "$build" --target doorbell -- -j"$(nproc)"
status=$?
build_s=$(( $(date +%s) - start ))
echo "nv_check: built in ${build_s} s"
if [ "$status" -ne 0 ]; then
  error="the build of doorbell failed (status $status, limit ${build_limit} s)"
  finish
fi
stage=check
check_start=$(date +%s)
run_step "$check_limit" "$build/tools/doorbell" check --device NV --experiments --json "$report"
status=$?
check_s=$(( $(date +%s) - check_start ))
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  error="doorbell check ran past ${check_limit} s"
elif [ ! -s "$report" ]; then
  error="doorbell check exited with status $status and wrote no report"
else
  stage=done  # status 1: it ran to the end and some check failed; the report says which
fi
finish
