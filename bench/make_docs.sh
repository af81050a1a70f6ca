#!/usr/bin/env bash
# Regenerates every generated table in docs/ from the records in bench/results/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 bench/report.py
python3 bench/targets.py bench/results/bench-h100-2026-11-23-f-{all-4096-4097,targets-8192,batched,syrk,published-shapes}.json --out docs/perf/cuda-targets.md > /dev/null
python3 bench/summa_table.py bench/results/summa-h100-2026-11-23.json bench/results/summa-h200x2-2026-11-23.json \
  bench/results/summa-h200x2-2026-11-23-cublas.json \
  --out docs/perf/summa-scaling.md > /dev/null
echo "wrote docs/perf/cuda-targets.md, docs/perf/summa-scaling.md"
