#!/usr/bin/env bash
# The Megatron tensor-parallel MLP block (issue 5's benchmark) on 2 GPUs:
# shardcheck's verified plan run by the nccl backend vs the same computation
# in PyTorch + torch.distributed, on the same GPUs in the same job.
#
# Runs on the GPU machine from the repository root, with the folder
# bench/prepare_gpu_carry.sh made (it holds the plan of
# corpus/bench_megatron_mlp_block.txt, emitted where Z3 is):
#   bench/megatron_mlp_bench.sh CARRY_DIR OUT_DIR
# Environment: ROUNDS (3), WARMUP (100), ITERS (50), SIZES ("8192 8192 32768":
# tokens hidden ffn), TORCHLIBS (1: also run the plan with PyTorch's cuBLAS
# and NCCL first on the library path, column "plan-torchlibs").
#
# 1. The plan is checked on the GPUs against the host reference at small
#    sizes (the double-precision reference of the full block would take
#    hours on the host), in both launch modes: same plan, same code path
#    (dense boxes, cuBLAS gemms, the GeLU kernel, NCCL Allreduce).
# 2. ROUNDS rounds, alternating: the plan at full size, one process driving
#    both GPUs; PyTorch under torchrun (one process per GPU); the plan under
#    mpirun (one process per GPU); PyTorch again with its inputs drawn by
#    torch.rand in bfloat16 (column "torch-bf16draw"). Each prints the median
#    and minimum time of one run of the whole block over ITERS runs after
#    WARMUP.
# 3. A table: per round, each median and the ratio plan / PyTorch (<= 1: the
#    plan is no slower); then the GPUs' clocks while each run was busy.
#
# Why the input draw matters: an H200 running these gemms sits at its power
# cap, so its SM clock, and with it the gemm's time, depends on how many bits
# the operands toggle. run-plan draws uniform [-1, 1) values in high
# precision and rounds them to bf16; the PyTorch baseline draws the same way
# (float32, rounded), which is the fair comparison. torch.rand in bf16 gives
# coarser values (fewer mantissa bits set), higher clocks and faster gemms:
# the "torch-bf16draw" column shows how much. Both sides run the same cuBLAS
# kernel (bench/gemm_kernels.sh shows cuBLASLt's trace of each).
#
# WARMUP is long (100 blocks, ~0.7 s) so that every run is timed at the
# steady power-capped clock rather than while clocks settle.
set -uo pipefail
carry="$1" out="$2"
bin="$carry/bin" plan="$carry/plans/bench_megatron_mlp_block.json"
rounds="${ROUNDS:-3}" warmup="${WARMUP:-100}" iters="${ITERS:-50}"
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
torch_field() { grep -o " $2=[0-9.]*" "$1" 2>/dev/null | head -1 | cut -d= -f2 | grep . || echo nan; }
ratio() { python3 -c "import sys; a,b=map(float,sys.argv[1:]); print('%.3f' % (a/b))" "$1" "$2" 2>/dev/null || echo nan; }
torchlibs=""
if [ "${TORCHLIBS:-0}" = 1 ]; then
  torchlibs=$(python3 - <<'PY' 2>/dev/null
import glob, os, torch
root = os.path.dirname(os.path.dirname(torch.__file__))
dirs = {os.path.dirname(p) for pat in ("libcublas.so.*", "libnccl.so.*")
        for p in glob.glob(os.path.join(root, "nvidia", "**", pat), recursive=True)}
print(":".join(sorted(dirs)))
PY
  )
  echo "== PyTorch's cuBLAS/NCCL in: ${torchlibs:-not found}"
fi
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())" 2>&1
ldd "$bin/run-plan" | grep -E "cublas|nccl"

# Each timed run's start and end go to windows.txt; with nvidia-smi, the GPUs'
# clocks and power are sampled every 20 ms meanwhile (clock_windows.py).
window() { # LABEL command... : runs the command, records its window
  local label="$1" start
  shift
  start=$(date +%s.%N)
  "$@"
  echo "$label $start $(date +%s.%N)" >> "$out/windows.txt"
}
rm -f "$out/windows.txt"
sampler=""
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,utilization.gpu,temperature.gpu \
    --format=csv,noheader,nounits -lms 20 > "$out/clocks.csv" 2>/dev/null &
  sampler=$!
  trap 'kill "$sampler" 2>/dev/null' EXIT # also when the script is interrupted
fi

timed=(--backend nccl --no-check --quiet "${full[@]}" --warmup "$warmup" --repeat "$iters")
torch=(torchrun --standalone --nproc_per_node 2 bench/megatron_mlp_torch.py --tokens "$tokens"
  --hidden "$hidden" --ffn "$ffn" --warmup "$warmup" --iters "$iters")
echo "== full size: tokens=$tokens hidden=$hidden ffn=$ffn, bf16, $rounds rounds of $iters runs after $warmup warmup"
echo "pipelined (as each framework runs; ms per block), then with a synchronization after every step/op:"
printf "%-6s %11s %12s %8s %12s %13s %16s %11s %15s %15s\n" round plan-1proc plan-mpirun torch \
  1proc/torch mpirun/torch plan-1proc-sync torch-sync torch-bf16draw plan-torchlibs
for r in $(seq 1 "$rounds"); do
  window "plan-1proc-$r" "$bin/run-plan" "${timed[@]}" --report "$out/mlp-plan-one-$r.json" "$plan" \
    > "$out/mlp-plan-one-$r.log" 2>&1
  window "torch-$r" "${torch[@]}" > "$out/mlp-torch-$r.log" 2>&1
  window "plan-mpirun-$r" "${mpi[@]}" "$bin/run-plan" "${timed[@]}" \
    --report "$out/mlp-plan-mpi-$r.json" "$plan" > "$out/mlp-plan-mpi-$r.log" 2>&1
  window "torch-bf16draw-$r" "${torch[@]}" --draw bfloat16 > "$out/mlp-torch-bf16-$r.log" 2>&1
  if [ -n "$torchlibs" ]; then
    LD_LIBRARY_PATH="$torchlibs:${LD_LIBRARY_PATH:-}" window "plan-torchlibs-$r" "$bin/run-plan" \
      "${timed[@]}" --report "$out/mlp-plan-tl-$r.json" "$plan" > "$out/mlp-plan-tl-$r.log" 2>&1
  fi
  one=$(median_of "$out/mlp-plan-one-$r.json")
  mpirun_ms=$(median_of "$out/mlp-plan-mpi-$r.json")
  torch_ms=$(torch_field "$out/mlp-torch-$r.log" median_ms)
  printf "%-6s %11s %12s %8s %12s %13s %16s %11s %15s %15s\n" "$r" "$one" "$mpirun_ms" "$torch_ms" \
    "$(ratio "$one" "$torch_ms")" "$(ratio "$mpirun_ms" "$torch_ms")" \
    "$(median_of "$out/mlp-plan-one-$r.json" synced_median_seconds)" \
    "$(torch_field "$out/mlp-torch-$r.log" synced_median_ms)" \
    "$(torch_field "$out/mlp-torch-bf16-$r.log" median_ms)" \
    "$(median_of "$out/mlp-plan-tl-$r.json")"
done
if [ -n "$sampler" ]; then
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  echo "== GPU clocks while busy (utilization >= 90%), per timed run (bench/clock_windows.py):"
  python3 bench/clock_windows.py "$out/clocks.csv" "$out/windows.txt"
  rm -f "$out/clocks.csv"
fi
echo "== per step, synchronized, last round (ms): plan steps 0-3 = linear, gelu, linear [partial], Allreduce"
grep -h '^timing:' "$out/mlp-plan-one-$rounds.log" || tail -5 "$out/mlp-plan-one-$rounds.log"
grep -h 'torch-mlp' "$out/mlp-torch-$rounds.log" || tail -5 "$out/mlp-torch-$rounds.log"
grep -h 'torch-mlp' "$out/mlp-torch-bf16-$rounds.log" | sed 's/^/torch.rand in bf16: /'
grep -h '^timing:' "$out/mlp-plan-tl-$rounds.log" 2>/dev/null | sed 's/^/with PyTorch libraries: /'
rm -f "$out"/*.json # the logs hold the same numbers
