#!/usr/bin/env bash
# Builds what the GPU machine runs (DESIGN section 8: it has no Z3, so plans
# are emitted here) into one small folder to carry to it:
#   bench/prepare_gpu_carry.sh BUILD_DIR CARRY_DIR
# CARRY_DIR gets run-plan, the GPU kernel tests, the GPU benchmarks, and the
# plan of every provable corpus fusion of at most 2 devices (plans/).
set -euo pipefail
build="$1" carry="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$build" --target run-plan check-sharding shardcheck_gpu_tests \
  gpu-pointwise-bench nccl-collectives-bench >/dev/null
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/plans"
cp "$build"/bin/{run-plan,shardcheck_gpu_tests,gpu-pointwise-bench,nccl-collectives-bench} "$carry/bin/"
strip "$carry"/bin/* 2>/dev/null || true
for f in "$root"/corpus/*.txt; do
  plan="$carry/plans/$(basename "$f" .txt).json"
  "$build/bin/check-sharding" --quiet --emit-plan "$plan" "$f" >/dev/null 2>&1 || true
  [ -f "$plan" ] || continue
  n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['devices']))" "$plan")
  [ "$n" -le 2 ] || rm -f "$plan"
done
# The seed's refuted nvFuser lowering, to reproduce its failure on GPUs.
"$build/bin/check-sharding" --quiet --plan-lowerings compiler \
  --emit-plan "$carry/plans/nvfuser_seed_repro1_allgather.json" \
  "$root/corpus/seed_repro1_after_resharding.txt" >/dev/null 2>&1 || true
du -sh "$carry"
