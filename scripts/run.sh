#!/usr/bin/env bash
# The main job: install what is missing, build, and run the demo — example products over every
# semiring, checked against the CPU reference, with throughput (on the GPU when there is one).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${RINGMM_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh" "$BUILD_DIR"
exec "$BUILD_DIR/tools/ringmm" demo "$@"
