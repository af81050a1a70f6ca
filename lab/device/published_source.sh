#!/usr/bin/env bash
# The published tropical GEMM kernel's source (CuTropicalGEMM.jl, MIT), for lab/device/speed_run.sh
# to build beside ringmm on the GPU machine, which has no network: run this where there is one and
# carry the folder (.carry/ is git-ignored). The code is never committed to this repository; the
# comparison is only meaningful against the public code as published.
# Usage: lab/device/published_source.sh [folder]   (default .carry/published)
#   PUBLISHED_CLONE=<an existing clone or mirror of the repository> skips the download.
set -euo pipefail
folder=${1:-.carry/published}
repo=https://github.com/TensorBFS/CuTropicalGEMM.jl
# The last commit whose deps/ held the kernel's CUDA source (later ones fetch a prebuilt library).
commit=fd54bbaf26f9e47e016df571336380f7639aef00
clone=${PUBLISHED_CLONE:-}
if [ -z "$clone" ]; then
  clone=$(mktemp -d)
  git clone --quiet "$repo" "$clone"
fi
mkdir -p "$folder"
git -C "$clone" show "$commit:deps/tropicalgemm_kernels.cu" > "$folder/tropicalgemm_kernels.cu"
echo "$folder/tropicalgemm_kernels.cu from $repo at $commit"
sha256sum "$folder/tropicalgemm_kernels.cu"
