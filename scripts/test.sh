#!/usr/bin/env bash
# Install what is missing, build with tests, and run every test (GPU tests skip without a device;
# MPI tests run through mpirun). Extra arguments go to ctest, e.g. scripts/test.sh -L gpu.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${RINGMM_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh" --tests "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure -j "${RINGMM_JOBS:-$(nproc)}" --timeout 600 "$@"
