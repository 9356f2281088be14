#!/usr/bin/env bash
# Which cuBLAS kernels the MLP block's two gemms run, in run-plan and in
# PyTorch (a diagnosis for bench/megatron_mlp_bench.sh's gemm gap). Runs on
# the GPU machine from the repository root:
#   bench/gemm_kernels.sh CARRY_DIR OUT_DIR
# cuBLASLt's trace log (CUBLASLT_LOG_LEVEL=2) names the algorithm of every
# matmul, the cublasGemmEx calls included; with nsys on the PATH, a profile
# of a few runs adds each kernel's name and time.
set -uo pipefail
carry="$1" out="$2"
mkdir -p "$out"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
plan="$carry/plans/bench_megatron_mlp_block.json"
full=(--bind i0=8192 --bind i1=8192 --bind i2=32768)
plan_run=("$carry/bin/run-plan" --backend nccl --no-check --quiet "${full[@]}" --warmup 2 --repeat 5 "$plan")
torch_run=(torchrun --standalone --nproc_per_node 2 bench/megatron_mlp_torch.py --warmup 2 --iters 5)
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$out/lt-plan-%i.log" "${plan_run[@]}" > "$out/plan.log" 2>&1
echo "plan: exit $?"
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$out/lt-torch-%i.log" "${torch_run[@]}" > "$out/torch.log" 2>&1
echo "torch: exit $?"
for f in "$out"/lt-*.log; do
  echo "== $(basename "$f"): $(wc -l < "$f") lines; distinct matmul lines (call counts):"
  grep -i 'matmul' "$f" | sed -E 's/^\[[^]]*\]//; s/(A|B|C|D)=0x[0-9a-f]+/\1=PTR/g; s/workspace=0x[0-9a-f]+/workspace=PTR/g; s/stream=0x[0-9a-f]+//g' \
    | sort | uniq -c | sort -rn | head -6 | cut -c1-1200
done
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$nsys" ]; then
  "$nsys" profile -o "$out/plan" --force-overwrite true --stats=false "${plan_run[@]}" > /dev/null 2>&1
  "$nsys" stats --report cuda_gpu_kern_sum --format csv "$out/plan.nsys-rep" 2>/dev/null | head -8 > "$out/kernels-plan.csv"
  "$nsys" profile -o "$out/torch" --force-overwrite true --stats=false "${torch_run[@]}" > /dev/null 2>&1
  "$nsys" stats --report cuda_gpu_kern_sum --format csv "$out/torch.nsys-rep" 2>/dev/null | head -8 > "$out/kernels-torch.csv"
  rm -f "$out"/*.nsys-rep "$out"/*.sqlite
  echo "== kernels (nsys):"; cat "$out"/kernels-*.csv | cut -c1-400
else
  echo "== no nsys on this machine"
fi
