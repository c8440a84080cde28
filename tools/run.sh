#!/usr/bin/env bash
# The main job: installs what is missing, builds build/release incrementally and runs the doorbell program.
# Arguments are passed to doorbell (e.g. `bash tools/run.sh devices`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$DOORBELL_ROOT"

doorbell_install_packages
doorbell_build build/release "${DOORBELL_RELEASE_OPTIONS[@]}"
doorbell_say "running build/release/tools/doorbell $*"
exec build/release/tools/doorbell "$@"
