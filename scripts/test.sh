#!/usr/bin/env bash
# README command two: installs what is missing, builds, and runs the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
ctest --test-dir "${HEXIR_BUILD_DIR:-$root/build}" --output-on-failure -j 2
