#!/usr/bin/env bash
# The main job: install what is missing, build, and run the demo — example products over every
# semiring, checked against the CPU reference, with throughput (on the GPU when there is one) —
# then build the Python package (scripts/python.sh) and run one product from Python.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${RINGMM_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh" "$BUILD_DIR"
"$BUILD_DIR/tools/ringmm" demo "$@"
echo
set +e
python=$("$ROOT/scripts/python.sh" "$BUILD_DIR")
built=$?
set -e
case $built in
  0) "$python" "$ROOT/examples/python/quickstart.py" ;;
  2) echo "the Python package was not built: its build requirements could not be installed" ;;
  *) exit "$built" ;;
esac
