#!/usr/bin/env bash
# The one device run: builds ringmm on the GPU machine, then runs the named steps in the order given.
# Usage, repository root on the GPU machine:
#   lab/device/device_run.sh <tag> <steps...>
# Steps:
#   build     configure and build build-device (CUDA 90a, tests, the lab; MPI and NCCL when found). The
#             machine has no googletest: GTEST_SRC (default .carry/googletest, copied from the
#             development machine's /usr/src/googletest) is built first. BUILD_TARGETS (a
#             space-separated list) builds only those targets.
#   tests     the GPU tests through ctest (-L gpu), then the MPI tests (-L mpi) when built
#   sanitize  compute-sanitizer memcheck and racecheck over typed tests picked by name
#   sass      opcode counts of the gemm kernels' inner loops (FMNMX, VIADDMNMX, LOP3, ...)
#   bench     the CUDA targets: lab/device/bench_targets.sh, then lab/reports/targets.py
#   apsp      ringmm apsp: the CUDA APSP tests, then lab/device/apsp_bench.sh (block sweep at 8192,
#             16384 vertices)
#   compare   builds OLD_SRC (a `git archive` .tar.gz of an earlier commit) and times it and this
#             tree's binary back to back on the targets' shapes; lab/reports/compare_runs.py checks them
#             against each other and against RECORDED (default: the latest targets campaign in lab/results);
#             COMPARE_CASES (lines of name:bench arguments) picks other cases
#   ladder    ringmm-lab microbench and ringmm-lab ladder
#   profile   lab/device/shapes_profile.sh: issue 12's rows under ncu (about 2 minutes); copy
#             $res/profile/shapes-profile-*.csv into lab/results and run lab/reports/make_docs.sh
#   tune      ringmm tune on issue 12's shapes; the later steps run with its cache (RINGMM_TUNE_CACHE)
#   sweep     every configuration × border (rebuilds with RINGMM_CUDA_ALL_CONFIGS=ON)
#   summa     lab/device/summa_scaling.sh with SUMMA_ARGS
#   seeds     lab/device/seeds_runs.sh: the seeds' experiments docs/seeds.md lacks (about 5 min);
#             copy $res/seeds/seeds-h100-*.json into lab/results and run lab/reports/make_docs.sh
#   orand     issue 13's or-and: the tensor-core tests, the recorded runs of docs/perf/boolean.md
#             (auto and int8 routes; ORAND_TAG tags the files: copy $res/orand/or-and-h100-*.json
#             into lab/results and point lab/reports/make_docs.sh at them), two more rounds of
#             4096³ / 4097³, and ncu's time of each kernel (packing, product) at both sizes
#   shapes    lab/device/shapes_runs.sh: issue 12's table (batches of small products, small and
#             skinny shapes, 8192³, every pair at 4096³ and 4097³, host to host; about 2.5 min),
#             SHAPES_TAG tags the files; copy $res/shapes/shapes-h100-*.json into lab/results
#             and run lab/reports/make_docs.sh (docs/perf/shapes.md)
# Everything lands in $OUT/device-<tag>.tar.gz (after every step, so a run cut off keeps what it
# did); the summary is printed last and also saved as $OUT/summary-<tag>.txt.
set -uo pipefail
tag=${1:?usage: device_run.sh <tag> <steps...>}
shift
steps=${*:?usage: device_run.sh <tag> <steps...>}
root=$(pwd)
here=$root/lab/device
build=$root/build-device
res=/tmp/device-$tag
out=${OUT:-/tmp}
mkdir -p "$res"
summary=$res/summary.txt
nccl=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc)
note() { echo "$*" | tee -a "$summary"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$summary"

# configure_and_build <source> <build dir> <cmake options...>
configure_and_build() {
  local src=$1 dir=$2
  shift 2
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DRINGMM_ENABLE_CUDA=ON -DRINGMM_ENABLE_BLAS=OFF "$@" > "$res/configure-$(basename "$dir").log" 2>&1 &&
    cmake --build "$dir" -j "$jobs" ${BUILD_TARGETS:+--target $BUILD_TARGETS} > "$res/build-$(basename "$dir").log" 2>&1
}

# opcode counts per gemm kernel of one executable: "opcode count kernel"
sass_counts() {
  cuobjdump -sass "$1" | awk -v ops="VIADDMNMX,VIMNMX,IMNMX,FMNMX,FADD,FMUL,FSETP,FSEL,DSETP,DADD,DMUL,FFMA,DFMA,LOP3,ISETP,LDS,LDG,STL,LDL" '
    BEGIN { n = split(ops, op, ",") }
    /Function :/ { fn = $3 }
    fn ~ /gemm_kernel/ { for (i = 1; i <= n; i++) if (index($0, " " op[i]) > 0) cnt[fn, op[i]]++ }
    END { for (k in cnt) { split(k, p, SUBSEP); printf "%s %d %s\n", p[2], cnt[k], p[1] } }' | sort -k3,3 -k1,1 | c++filt
}

for step in $steps; do
  case $step in
    build)
      gtest_src=${GTEST_SRC:-$root/.carry/googletest}
      gtest_prefix=/tmp/gtest-prefix
      if [ ! -d "$gtest_prefix" ] && [ -d "$gtest_src" ]; then
        cmake -S "$gtest_src" -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$gtest_prefix \
          > "$res/gtest.log" 2>&1 && cmake --build /tmp/gtest-build -j "$jobs" --target install >> "$res/gtest.log" 2>&1
      fi
      start=$SECONDS
      configure_and_build "$root" "$build" -DRINGMM_BUILD_TESTS=ON -DRINGMM_BUILD_LAB=ON -DCMAKE_PREFIX_PATH=$gtest_prefix
      note "build rc=$? in $((SECONDS - start)) s: $(grep -o 'ringmm [0-9.]*: .*' "$res/configure-build-device.log")"
      grep -E 'error|warning' "$res/build-build-device.log" | sort -u | head -10 | tee -a "$summary"
      ;;
    tests)
      (cd "$build" && ctest -L gpu -j 4 --timeout 600 --output-on-failure > "$res/ctest-gpu.log" 2>&1)
      note "ctest -L gpu rc=$?: $(grep -E 'tests passed|tests failed' "$res/ctest-gpu.log")"
      grep -E '\(Failed\)|\(Not Run\)|\(Timeout\)' "$res/ctest-gpu.log" | head -20 | tee -a "$summary"
      note "gpu tests skipped: $(grep -c '(Skipped)' "$res/ctest-gpu.log")"
      if [ -f "$build/tests/dist/dist_test" ]; then
        (cd "$build" && ctest -L mpi --timeout 600 --output-on-failure > "$res/ctest-mpi.log" 2>&1)
        note "ctest -L mpi rc=$?: $(grep -E 'tests passed|tests failed' "$res/ctest-mpi.log")"
      fi
      ;;
    sanitize)
      test_bin=$build/tests/cuda/cuda_engine_test
      memcheck='CudaEngine/MaxPlus_f32.*:CudaEngine/MaxPlus_i16x2.*:CudaEngine/OrAnd_u8.*:CudaEngine/MaxTimes_f64.*:CudaEngine/MinMax_i32.*:CudaEngineRefusals*'
      timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$test_bin" --gtest_brief=1 --gtest_filter="$memcheck" > "$res/memcheck.log" 2>&1
      note "memcheck ($memcheck) rc=$?: $(grep -E 'ERROR SUMMARY' "$res/memcheck.log" | tail -1)"
      racecheck='CudaEngine/MaxPlus_f32.EveryConfigurationAndBorder*:CudaEngine/MinMax_f32.Batched*'
      timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$test_bin" --gtest_brief=1 --gtest_filter="$racecheck" > "$res/racecheck.log" 2>&1
      note "racecheck ($racecheck) rc=$?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$res/racecheck.log" | tail -1)"
      ;;
    sass)
      sass_counts "$build/tests/cuda/cuda_engine_test" > "$res/sass_counts.txt"
      note "== SASS opcodes of the 128x128 pad kernels (opcode count kernel)"
      grep "Tile<128, 128" "$res/sass_counts.txt" | grep "Border)0" | grep -E "FMNMX|VIADDMNMX|LOP3|FFMA|DSETP" |
        sed -e 's/ringmm::cuda_detail::gemm_kernel<ringmm::\([A-Za-z]*<[a-z0-9:_]*>\|OrAnd\).*/\1/' | tee -a "$summary"
      ;;
    tune)
      # ringmm tune on issue 12's shapes (f32 max-plus; about a second); the later steps of this
      # call (shapes) then run with the cache it writes.
      mkdir -p "$res/tune"
      "$build/tools/ringmm" tune --semiring max-plus --type f32 --reps 5 --out "$res/tune/" --classes \
        256x256x256,512x512x512,1000x1000x1000,2000x2000x2000,4096x512x512,65536x64x64,64x64x65536,131072x16x16,8192x8192x32,64x64x64x4096,32x32x32x4096,16x16x16x100000 \
        > "$res/tune-$tag.log" 2>&1
      note "tune rc=$?: $(grep -c 'x' "$res"/tune/ringmm-tune-*.txt) cache lines"
      sed -n '/^class/,$p' "$res/tune-$tag.log" | tee -a "$summary"
      export RINGMM_TUNE_CACHE=$res/tune/
      ;;
    profile)
      OUT=$res/profile "$here/shapes_profile.sh" "$build/tools/ringmm" "$tag" > "$res/profile.log" 2>&1
      note "shapes profile rc=$? (copy $res/profile/shapes-profile-*.csv into lab/results; lab/reports/make_docs.sh)"
      grep '^| ' "$res/profile.log" | cut -c1-160 | tee -a "$summary"
      ;;
    bench)
      OUT=$res/bench "$here/bench_targets.sh" "$build/tools/ringmm" "$tag" > "$res/bench.log" 2>&1
      note "bench rc=$?"
      sed -n '/== targets/,$p' "$res/bench.log" | tee -a "$summary"
      ;;
    apsp)
      "$build/tests/graph/cuda_apsp_test" > "$res/apsp-tests.log" 2>&1
      note "apsp tests rc=$? ($(grep -c '^\[       OK \]' "$res/apsp-tests.log") passed)"
      OUT=$res/apsp "$here/apsp_bench.sh" "$build/tools/ringmm" "$tag" > "$res/apsp-bench.log" 2>&1
      note "apsp bench rc=$?"
      grep -E '^== |^backend|^time|^rate' "$res/apsp-bench.log" | tee -a "$summary"
      ;;
    compare)
      old_src=${OLD_SRC:?compare needs OLD_SRC, a git archive .tar.gz of the earlier commit}
      rm -rf /tmp/ringmm-old && mkdir -p /tmp/ringmm-old && tar -C /tmp/ringmm-old -xzf "$old_src"
      start=$SECONDS
      BUILD_TARGETS=ringmm-cli configure_and_build /tmp/ringmm-old /tmp/ringmm-old/build -DRINGMM_BUILD_TESTS=OFF -DRINGMM_ENABLE_MPI=OFF
      note "old build rc=$? in $((SECONDS - start)) s"
      # The targets' shapes, each timed with the old binary and then the new one; COMPARE_CASES
      # (lines of name:bench arguments) replaces them.
      cases=("all-4096-4097:--semiring all --type all --shapes 4096,4097"
             "targets-8192:--semiring max-plus,min-plus,plus-times --type f32,i32,i16x2,f64 --shapes 8192"
             "batched:--product batched --batch 20 --shapes 1024 --semiring max-plus,plus-times --type f32,i32"
             "syrk:--product syrk --shapes 4096,8192 --semiring max-plus,plus-times --type f32,f64")
      [ -n "${COMPARE_CASES:-}" ] && mapfile -t cases <<< "$COMPARE_CASES"
      mkdir -p "$res/compare"
      for c in "${cases[@]}"; do
        name=${c%%:*}
        for which in old new; do
          tool=$build/tools/ringmm
          [ "$which" = old ] && tool=/tmp/ringmm-old/build/tools/ringmm
          # shellcheck disable=SC2086
          timeout 400 "$tool" bench --backend cuda ${c#*:} --out "$res/compare/$which-$name.json" >> "$res/compare.log" 2>&1 ||
            note "compare: $which $name failed"
        done
      done
      recorded=${RECORDED:-$root/$(python3 "$root"/lab/reports/campaigns.py latest targets)}
      # shellcheck disable=SC2086
      python3 "$root/lab/reports/compare_runs.py" --new "$res"/compare/new-*.json --old "$res"/compare/old-*.json \
        --recorded $recorded --out "$res/compare/table.md" > "$res/compare.txt" 2>&1
      note "compare rc=$? (new vs old binary and vs recorded, tolerance 3 %)"
      cat "$res/compare.txt" | tee -a "$summary"
      ;;
    ladder)
      timeout 200 "$build/lab/kernels/ringmm-lab" microbench --out "$res/microbench.json" > "$res/ladder.log" 2>&1
      note "microbench rc=$?"
      timeout 300 "$build/lab/kernels/ringmm-lab" ladder --shapes 1024,4096 --reps 10 --out "$res/ladder.json" >> "$res/ladder.log" 2>&1
      note "ladder rc=$?"
      ;;
    sweep)
      configure_and_build "$root" "$root/build-device-all" -DRINGMM_BUILD_TESTS=OFF -DRINGMM_CUDA_ALL_CONFIGS=ON
      note "all-configs build rc=$?"
      OUT=$res/sweep "$here/config_sweep.sh" "$root/build-device-all/tools/ringmm" "${SWEEP_SHAPES:-1000,2000,8192x8192x32,131072x16x16}" > "$res/sweep.log" 2>&1
      note "sweep rc=$?"
      ;;
    summa)
      # shellcheck disable=SC2086
      OUT=$res/summa "$here/summa_scaling.sh" "$build/tools/ringmm" ${SUMMA_ARGS:-16384,32768 plus-times:f32,max-plus:f32 1x1 broadcast} > "$res/summa.log" 2>&1
      note "summa rc=$?"
      sed -n '/^record file  /,$p' "$res/summa/summary.txt" 2>/dev/null | tee -a "$summary"
      ;;
    seeds)
      OUT=$res/seeds "$here/seeds_runs.sh" "$build/tools/ringmm" > "$res/seeds.log" 2>&1
      note "seeds rc=$?"
      sed -n '/^== summary/,$p' "$res/seeds.log" | tee -a "$summary"
      grep -E '^!!|error' "$res/seeds.log" | head -10 | tee -a "$summary"
      ;;
    orand)
      mkdir -p "$res/orand"
      "$build/tests/cuda/cuda_engine_test" --gtest_brief=1 --gtest_filter='*OrAnd*:*B1*' > "$res/orand-tests.log" 2>&1
      note "or-and tests rc=$?: $(grep -E '^\[  PASSED  \]|FAILED TEST' "$res/orand-tests.log" | head -3 | tr '\n' ' ')"
      grep -E '^\[  FAILED  \]' "$res/orand-tests.log" | head -10 | tee -a "$summary"
      day=$(date +%F)
      for route in auto int8; do
        args=(); [ $route = int8 ] && args=(--boolean-mma int8)
        timeout 300 "$build/tools/ringmm" bench --backend cuda --semiring or-and --type u8 --shapes 8192,4096,4097,2048,1024 \
          --reps 10 "${args[@]}" --out "$res/orand/or-and-h100-$day-${ORAND_TAG:-x}-$route.json" >> "$res/orand.log" 2>&1 ||
          note "or-and $route run failed"
      done
      for round in 1 2; do
        timeout 120 "$build/tools/ringmm" bench --backend cuda --semiring or-and --type u8 --shapes 4096,4097 --reps 30 \
          --out "$res/orand/odd-$round.json" >> "$res/orand.log" 2>&1 || note "or-and round $round failed"
      done
      python3 - "$res"/orand/*.json <<'PY' | tee -a "$summary"
import json, sys
for path in sys.argv[1:]:
    t = {r["m"]: r["seconds"] for r in json.load(open(path)) if r["backend"] == "cuda" and r["kernel"] == "ringmm" and r["m"] in (4096, 4097)}
    if 4096 in t and 4097 in t:
        print(f"{path.rsplit('/', 1)[-1]}: 4096^3 {t[4096] * 1e6:.1f} us, 4097^3 {t[4097] * 1e6:.1f} us, ratio {t[4097] / t[4096]:.3f}")
PY
      for n in 4096 4097; do
        timeout 200 ncu --kernel-name regex:'pack|or_and' --launch-skip 6 --launch-count 6 --metrics gpu__time_duration.sum --csv \
          "$build/tools/ringmm" bench --backend cuda --semiring or-and --type u8 --shapes $n --reps 3 \
          > "$res/orand/ncu-$n.csv" 2> "$res/orand/ncu-$n.err"
        note "ncu $n rc=$?: $(python3 -c "
import csv, sys
rows = [r for r in csv.reader(open('$res/orand/ncu-$n.csv')) if len(r) > 10 and r[-3] == 'gpu__time_duration.sum']
print('; '.join(r[4].split('(')[0].split('::')[-1][:40] + ' ' + r[-1] for r in rows[-3:]))" 2>&1)"
      done
      ;;
    shapes)
      OUT=$res/shapes "$here/shapes_runs.sh" "$build/tools/ringmm" "${SHAPES_TAG:-}" > "$res/shapes.log" 2>&1
      note "shapes rc=$?"
      sed -n '/^== summary/,$p' "$res/shapes.log" | tee -a "$summary"
      grep -E '^!!|error' "$res/shapes.log" | head -10 | tee -a "$summary"
      ;;
    *)
      note "unknown step '$step' (steps: build tests sanitize sass bench compare ladder sweep summa seeds shapes)"
      ;;
  esac
  tar -C "$res" -czf "$out/device-$tag.tar.gz" .
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$summary"
cp "$summary" "$out/summary-$tag.txt"
echo "================ summary ================"
cat "$summary"
