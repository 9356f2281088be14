#!/usr/bin/env bash
# The Megatron tensor-parallel MLP block (issue 5's benchmark) on 2 GPUs:
# shardcheck's verified plan run by the nccl backend vs the same computation
# in PyTorch + torch.distributed, on the same GPUs in the same job.
#
# Runs on the GPU machine from the repository root, with the folder
# bench/prepare_gpu_carry.sh made (it holds the plan of
# corpus/bench_megatron_mlp_block.txt, emitted where Z3 is):
#   bench/megatron_mlp_bench.sh CARRY_DIR OUT_DIR
# Environment: ROUNDS (3), WARMUP (5), ITERS (20), SIZES ("8192 8192 32768":
# tokens hidden ffn), TORCH_ARGS (extra arguments of megatron_mlp_torch.py,
# e.g. --fp32-inputs).
#
# 1. The plan is checked on the GPUs against the host reference at small
#    sizes (the double-precision reference of the full block would take
#    hours on the host), in both launch modes: same plan, same code path
#    (dense boxes, cuBLAS gemms, the GeLU kernel, NCCL Allreduce).
# 2. ROUNDS rounds, alternating: the plan at full size, one process driving
#    both GPUs; PyTorch under torchrun (one process per GPU); the plan at full
#    size under mpirun (one process per GPU). Each prints the median and
#    minimum time of one run of the whole block over ITERS runs after WARMUP.
# 3. A table: per round, each median and the ratio plan / PyTorch (<= 1: the
#    plan is no slower).
# PyTorch brings its own cuBLAS and NCCL (pip wheels); run-plan links the
# system's. Each round also runs the plan in one process with PyTorch's
# cuBLAS and NCCL first on the library path (column "plan-torchlibs"), which
# separates the libraries' share of a difference from the executor's.
set -uo pipefail
carry="$1" out="$2"
bin="$carry/bin" plan="$carry/plans/bench_megatron_mlp_block.json"
rounds="${ROUNDS:-3}" warmup="${WARMUP:-5}" iters="${ITERS:-20}"
read -r tokens hidden ffn <<< "${SIZES:-8192 8192 32768}"
mkdir -p "$out"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
full=(--bind "i0=$tokens" --bind "i1=$hidden" --bind "i2=$ffn")
small=(--bind i0=256 --bind i1=128 --bind i2=512)
mpi=(mpirun --allow-run-as-root -np 2)

echo "== check at small sizes (i0=256 i1=128 i2=512) against the host reference"
"$bin/run-plan" --backend nccl "${small[@]}" --report "$out/mlp-check-one.json" "$plan" \
  > "$out/mlp-check-one.log" 2>&1
echo "one process: exit $? $(grep '^result:' "$out/mlp-check-one.log")"
"${mpi[@]}" "$bin/run-plan" --backend nccl "${small[@]}" --report "$out/mlp-check-mpi.json" "$plan" \
  > "$out/mlp-check-mpi.log" 2>&1
echo "mpirun -np 2: exit $? $(grep '^result:' "$out/mlp-check-mpi.log")"

# $1 = report, $2 = timing key
median_of() { python3 -c "import json,sys; print('%.3f' % (json.load(open(sys.argv[1]))['timing'][sys.argv[2]]*1e3))" "$1" "${2:-median_seconds}" 2>/dev/null || echo nan; }
ratio() { python3 -c "import sys; a,b=map(float,sys.argv[1:]); print('%.3f' % (a/b))" "$1" "$2" 2>/dev/null || echo nan; }
torchlibs=$(python3 - <<'PY' 2>/dev/null
import glob, os, torch
root = os.path.dirname(os.path.dirname(torch.__file__))
dirs = {os.path.dirname(p) for pat in ("libcublas.so.*", "libnccl.so.*")
        for p in glob.glob(os.path.join(root, "nvidia", "**", pat), recursive=True)}
print(":".join(sorted(dirs)))
PY
)
echo "== libraries: PyTorch's cuBLAS/NCCL in: ${torchlibs:-not found}"
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" 2>&1
ldd "$bin/run-plan" | grep -E "cublas|nccl"
timed=(--backend nccl --no-check --quiet "${full[@]}" --warmup "$warmup" --repeat "$iters")
echo "== full size: tokens=$tokens hidden=$hidden ffn=$ffn, bf16, $rounds rounds of $iters runs after $warmup warmup"
echo "pipelined (as each framework runs; ms per block), then with a synchronization after every step/op:"
printf "%-6s %12s %12s %10s %12s %13s %14s %13s %15s\n" round "plan-1proc" "plan-mpirun" "torch" "1proc/torch" "mpirun/torch" "plan-1proc-sync" "torch-sync" "plan-torchlibs"
for r in $(seq 1 "$rounds"); do
  "$bin/run-plan" "${timed[@]}" --report "$out/mlp-plan-one-$r.json" "$plan" > "$out/mlp-plan-one-$r.log" 2>&1
  torchrun --standalone --nproc_per_node 2 bench/megatron_mlp_torch.py --tokens "$tokens" \
    --hidden "$hidden" --ffn "$ffn" --warmup "$warmup" --iters "$iters" ${TORCH_ARGS:-} \
    > "$out/mlp-torch-$r.log" 2>&1
  "${mpi[@]}" "$bin/run-plan" "${timed[@]}" --report "$out/mlp-plan-mpi-$r.json" "$plan" \
    > "$out/mlp-plan-mpi-$r.log" 2>&1
  if [ -n "$torchlibs" ]; then
    LD_LIBRARY_PATH="$torchlibs:${LD_LIBRARY_PATH:-}" "$bin/run-plan" "${timed[@]}" \
      --report "$out/mlp-plan-tl-$r.json" "$plan" > "$out/mlp-plan-tl-$r.log" 2>&1
  fi
  one=$(median_of "$out/mlp-plan-one-$r.json")
  one_sync=$(median_of "$out/mlp-plan-one-$r.json" synced_median_seconds)
  mpirun_ms=$(median_of "$out/mlp-plan-mpi-$r.json")
  torch_ms=$(grep -o ' median_ms=[0-9.]*' "$out/mlp-torch-$r.log" | cut -d= -f2)
  torch_sync=$(grep -o 'synced_median_ms=[0-9.]*' "$out/mlp-torch-$r.log" | cut -d= -f2)
  torch_ms="${torch_ms:-nan}" torch_sync="${torch_sync:-nan}"
  printf "%-6s %12s %12s %10s %12s %13s %14s %13s %15s\n" "$r" "$one" "$mpirun_ms" "$torch_ms" \
    "$(ratio "$one" "$torch_ms")" "$(ratio "$mpirun_ms" "$torch_ms")" "$one_sync" "$torch_sync" \
    "$(median_of "$out/mlp-plan-tl-$r.json")"
done
echo "== per step, synchronized, last round (ms): plan steps 0-3 = linear, gelu, linear [partial], Allreduce"
grep -h '^timing:' "$out/mlp-plan-one-$rounds.log" || tail -5 "$out/mlp-plan-one-$rounds.log"
grep -h 'torch-mlp' "$out/mlp-torch-$rounds.log" || tail -5 "$out/mlp-torch-$rounds.log"
grep -h '^timing:' "$out/mlp-plan-tl-$rounds.log" 2>/dev/null | sed 's/^/with PyTorch libraries: /'
rm -f "$out"/*.json # the logs hold the same numbers
