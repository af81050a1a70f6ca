#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang, ASan and UBSan, then runs each for a
# bounded time, single-process, on the seed corpus (tests/fuzz/corpus/<target>/).
#
#   scripts/fuzz.sh [seconds per target, default 60] [npy|args|mtx ...]
#
# New inputs go to <build>/corpus/<target>/ (the seed corpus is only read); a finding is saved as
# <build>/artifacts/<target>/crash-* (or leak-, oom-, timeout-) and the script exits 1. The build
# directory is $RINGMM_FUZZ_BUILD_DIR or build-fuzz; it builds with $RINGMM_JOBS jobs (default 1).
# With RINGMM_FUZZ_OPTIONAL=1 a machine without clang or libFuzzer skips (exit 0) instead of failing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_EACH="${1:-60}"
[[ $# -gt 0 ]] && shift
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(npy args mtx)
BUILD_DIR="${RINGMM_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
CLANG="${RINGMM_FUZZ_CXX:-clang++}"

log() { echo "[ringmm fuzz] $*"; }
unavailable() {
  if [[ "${RINGMM_FUZZ_OPTIONAL:-0}" == 1 ]]; then log "skipped: $*"; exit 0; fi
  log "error: $*"
  exit 1
}
[[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || { log "error: seconds must be a whole number, got '$SECONDS_EACH'"; exit 2; }
for t in "${TARGETS[@]}"; do
  [[ -d "$ROOT/tests/fuzz/corpus/$t" ]] || { log "error: unknown target '$t' (targets: npy, args, mtx)"; exit 2; }
done

# libFuzzer ships with clang's runtime libraries (Debian: libclang-rt-<v>-dev), not with clang itself.
command -v "$CLANG" >/dev/null || unavailable "$CLANG not found (apt-get install clang)"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$probe/p.cpp"
"$CLANG" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>/dev/null ||
  unavailable "$CLANG cannot link -fsanitize=fuzzer,address,undefined (install libclang-rt-dev)"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  log "configuring in $BUILD_DIR"
  GENERATOR=()
  command -v ninja >/dev/null && GENERATOR=(-G Ninja)
  CXX="$CLANG" cmake -S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRINGMM_BUILD_FUZZ=ON -DRINGMM_BUILD_TESTS=OFF -DRINGMM_BUILD_TOOLS=OFF -DRINGMM_BUILD_EXAMPLES=OFF \
    -DRINGMM_ENABLE_CUDA=OFF -DRINGMM_ENABLE_MPI=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" -j "${RINGMM_JOBS:-1}" --target "${TARGETS[@]/#/fuzz_}"

export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
status=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD_DIR/corpus/$t" artifacts="$BUILD_DIR/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  log "fuzz_$t for ${SECONDS_EACH}s"
  if ! "$BUILD_DIR/tests/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -max_len=4096 -timeout=10 \
    -dict="$ROOT/tests/fuzz/$t.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$corpus" "$ROOT/tests/fuzz/corpus/$t"; then
    log "fuzz_$t found a problem: see $artifacts/"
    status=1
  fi
done
exit "$status"
