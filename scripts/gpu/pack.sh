#!/usr/bin/env bash
# Packs the executables a device run needs into <build>/carry/bins.tar.xz (stripped, with the
# runtime libraries the device image may lack), for scripts/gpu/device_pass.sh. Run on the
# development machine after building <build> with CUDA (90a), MPI and tests:
#   cmake -S . -B build-dev -G Ninja -DRINGMM_ENABLE_CUDA=ON -DRINGMM_ENABLE_MPI=ON -DRINGMM_ENABLE_BLAS=OFF \
#         -DCMAKE_CUDA_ARCHITECTURES=90a && ninja -C build-dev
#   scripts/gpu/pack.sh build-dev        # then carry build-dev/carry
set -euo pipefail
build=${1:-build-dev}
stage=$build/carry/stage
rm -rf "$build/carry" && mkdir -p "$stage"
cp "$build/tests/cuda/cuda_engine_test" "$build/tests/measure/measure_tests" "$build/tests/dist/dist_test" \
   "$build/tools/ringmm" "$stage/"
strip "$stage"/*
cp "$(g++ -print-file-name=libgomp.so.1)" "$stage/"
# The C++ bindings of Open MPI 4.1, in case the device's Open MPI was built without them.
cp "$(ldd "$build/tools/ringmm" | awk '/libmpi_cxx/ {print $3}')" "$stage/"
tar -C "$stage" -cJf "$build/carry/bins.tar.xz" .
rm -rf "$stage"
ls -la "$build/carry"
