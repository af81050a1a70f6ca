#!/usr/bin/env bash
# Install what is missing, build with tests, and run every test (GPU tests skip without a device;
# MPI tests run through mpirun). Extra arguments go to ctest, e.g. scripts/test.sh -L gpu.
# The last line counts passed, failed and skipped tests; the line before it says why tests skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${RINGMM_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh" --tests "$BUILD_DIR"
cd "$BUILD_DIR"
mkdir -p Testing
set +e
ctest --output-on-failure -j "${RINGMM_JOBS:-$(nproc)}" --timeout 600 "$@" | tee Testing/ctest-output.log
status=${PIPESTATUS[0]}
set -e
# ctest counts a skipped test as passed; gtest prints the reason on the line after "Skipped".
total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' Testing/ctest-output.log | tail -1 || true)
failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' Testing/ctest-output.log | tail -1 || true)
skipped=$(grep -c '(Skipped)$' Testing/ctest-output.log || true)
reasons=$(awk '/^[0-9]+\/[0-9]+ Test: / { reason = "" }
               /: Skipped$/ { getline; if (reason == "") reason = $0 }
               /^Skip regular expression found/ { n[reason]++ }
               END { for (r in n) printf "%s%d %s", (k++ ? "; " : ""), n[r], r }' \
  Testing/Temporary/LastTest.log 2>/dev/null || true)
[ "$skipped" -gt 0 ] && echo "skipped because: ${reasons:-see Testing/Temporary/LastTest.log}"
echo "tests: $((${total:-0} - ${failed:-0} - skipped)) passed, ${failed:-0} failed, $skipped skipped"
exit "$status"
