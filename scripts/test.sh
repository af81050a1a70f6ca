#!/usr/bin/env bash
# Install what is missing, build with tests, and run every test (GPU tests skip without a device;
# MPI tests run through mpirun), then build the Python package (scripts/python.sh) and run its
# pytest suite, then builds a CPU wheel (scripts/wheel.sh) and tests it installed in a fresh
# virtual environment, then cross-compiles for aarch64 and runs the demo there under qemu
# (scripts/cross_aarch64.sh). Extra arguments go to ctest, e.g. scripts/test.sh -L gpu.
# The last line counts passed, failed and skipped tests of both; the lines before it say why tests
# skipped and how ctest and pytest each counted.
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
passed=$((${total:-0} - ${failed:-0} - skipped))
failed=${failed:-0}

# The Python package and its pytest suite (skipped, and said so, where its build requirements
# cannot be installed).
py_passed=0 py_failed=0 py_skipped=0 py_reasons=""
set +e
python=$("$ROOT/scripts/python.sh" "$BUILD_DIR")
py_build=$?
set -e
if [[ $py_build -eq 0 ]]; then
  set +e
  # tests/python/test_hmm_cli.py runs the tool built here.
  (cd "$ROOT" && RINGMM_CLI="${RINGMM_CLI:-$BUILD_DIR/tools/ringmm}" "$python" -m pytest -q -rs -p no:cacheprovider tests/python lab/tests) | tee Testing/pytest-output.log
  py_status=${PIPESTATUS[0]}
  set -e
  # pytest's last line: "3 failed, 180 passed, 20 skipped, 1 error in 2.04s"
  count() { local n; n=$(tail -1 Testing/pytest-output.log | grep -Eo "[0-9]+ $1" | cut -d" " -f1 || true); echo "${n:-0}"; }
  py_passed=$(count passed) py_skipped=$(count skipped)
  py_failed=$(($(count failed) + $(count error)))
  # -rs lists "SKIPPED [n] file:line: reason"; sum the counts per reason.
  py_reasons=$(awk '/^SKIPPED \[/ { n = $2; gsub(/[][]/, "", n); sub(/^SKIPPED \[[0-9]+\] [^ ]+: /, ""); r[$0] += n }
                    END { for (x in r) printf "%s%d %s", (k++ ? "; " : ""), r[x], x }' Testing/pytest-output.log)
  # pytest exits 5 when it ran no test: a missing suite is a failure too.
  [[ $py_status -ne 0 && $py_failed -eq 0 ]] && py_failed=1
  [[ $py_status -ne 0 ]] && status=1
elif [[ $py_build -eq 2 ]]; then
  echo "pytest: skipped: the Python package's build requirements could not be installed (see above)"
else
  py_failed=1  # the package did not build
  status=1
fi

# The CPU wheel (scripts/wheel.sh), installed into a fresh virtual environment and tested there
# (no compiler, no CUDA toolkit on PATH); skipped, and said so, where its build tools cannot be had.
wheel_status=0
RINGMM_WHEEL_CUDA=OFF "$ROOT/scripts/wheel.sh" --test "$BUILD_DIR/wheel" | tee Testing/wheel-output.log || wheel_status=${PIPESTATUS[0]}
if [[ $wheel_status -eq 2 ]]; then
  echo "wheel: skipped: its build tools could not be installed (see above)"
elif [[ $wheel_status -ne 0 ]]; then
  status=1
fi

# The library and the CLI cross-compiled for aarch64, and the demo run there under qemu
# (scripts/cross_aarch64.sh); skipped, and said so, where no cross compiler can be installed.
RINGMM_CROSS_OPTIONAL=1 "$ROOT/scripts/cross_aarch64.sh" "$BUILD_DIR-aarch64" > Testing/cross-aarch64.log 2>&1 || status=1
tail -2 Testing/cross-aarch64.log

[ "$skipped" -gt 0 ] && echo "skipped because: ${reasons:-see Testing/Temporary/LastTest.log}"
[ "$py_skipped" -gt 0 ] && echo "pytest skipped because: ${py_reasons:-see Testing/pytest-output.log}"
echo "ctest: $passed passed, $failed failed, $skipped skipped; pytest: $py_passed passed, $py_failed failed, $py_skipped skipped"
echo "tests: $((passed + py_passed)) passed, $((failed + py_failed)) failed, $((skipped + py_skipped)) skipped"
exit "$status"
