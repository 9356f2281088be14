#!/usr/bin/env bash
# Which cuBLAS kernels the MLP block's two gemms run, in run-plan and in
# PyTorch (a diagnosis for bench/megatron_mlp_bench.sh's gemm gap). Runs on
# the GPU machine from the repository root:
#   bench/gemm_kernels.sh CARRY_DIR OUT_DIR
# cuBLASLt's trace log (CUBLASLT_LOG_LEVEL=2) names the algorithm of every
# matmul, the cublasGemmEx calls included. Pointers and streams are dropped
# from the lines so equal calls count together.
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
  grep -i 'matmul' "$f" | sed -E 's/^\[[^]]*\]//; s/(A|B|C|D|workSpace)=0[xX][0-9a-fA-F]+/\1=PTR/g; s/ stream=0[xX][0-9a-fA-F]+//g' \
    | sort | uniq -c | sort -rn | head -6 | cut -c1-1200
done
