#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with the folder
# bench/prepare_gpu_carry.sh made:
#   bench/gpu_device_run.sh CARRY_DIR OUT_DIR [what...]
# what: tests | plans | plans-mpi | mlp | pointwise | collectives | sanitizer
# (default: tests plans plans-mpi pointwise collectives).
# Every result goes to OUT_DIR as a log; a summary table is printed.
set -uo pipefail
carry="$1" out="$2"; shift 2
what="${*:-tests plans plans-mpi pointwise collectives}"
bin="$carry/bin"
mkdir -p "$out"
logs="$(mktemp -d)" # Per-plan logs; only unexpected ones are copied to OUT_DIR.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
gpus=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; nvcc --version | tail -1; } > "$out/machine.txt" 2>&1
echo "== machine: $gpus GPU(s)"; cat "$out/machine.txt"

run_plans() { # $1 = mode (one|mpi)
  local mode="$1" ok=0 bad=0
  for plan in "$carry"/plans/*.json; do
    local name n status=0
    name=$(basename "$plan" .json)
    n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['devices']))" "$plan")
    [ "$n" -le "$gpus" ] || continue
    local flags=(--backend nccl --bind-auto --quiet --timeout-s 60)
    [[ "$name" == nvfuser_* ]] && flags+=(--allow-unverified)
    if [ "$mode" = one ]; then
      timeout 300 "$bin/run-plan" "${flags[@]}" "$plan" > "$logs/plan-$mode-$name.log" 2>&1 || status=$?
    else
      timeout 300 mpirun --allow-run-as-root -np "$n" "$bin/run-plan" "${flags[@]}" "$plan" \
        > "$logs/plan-$mode-$name.log" 2>&1 || status=$?
    fi
    local want=0
    [[ "$name" == nvfuser_* ]] && want=1
    if [ "$status" -eq "$want" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "UNEXPECTED $mode $name: exit $status"; tail -5 "$logs/plan-$mode-$name.log"; cp "$logs/plan-$mode-$name.log" "$out/"; fi
    echo "$mode $name n=$n exit=$status $(grep '^result:' "$logs/plan-$mode-$name.log")" >> "$out/plans-$mode.txt"
  done
  echo "== plans ($mode process mode): $ok as expected, $bad unexpected"
}

for w in $what; do
  case "$w" in
    tests) "$bin/shardcheck_gpu_tests" > "$out/gpu-tests.log" 2>&1; echo "== gpu kernel tests: exit $? $(grep -E 'PASSED|FAILED' "$out/gpu-tests.log" | tail -2 | tr '\n' ' ')" ;;
    plans) run_plans one ;;
    plans-mpi) run_plans mpi ;;
    mlp) bash bench/megatron_mlp_bench.sh "$carry" "$out/mlp" ;;
    pointwise) "$bin/gpu-pointwise-bench" > "$out/pointwise.txt" 2>&1; echo "== pointwise: exit $?"; cat "$out/pointwise.txt" ;;
    collectives) "$bin/nccl-collectives-bench" --gpus "$gpus" ${COLLECTIVE_ARGS:-} > "$out/collectives.txt" 2>&1; echo "== collectives: exit $?"; cat "$out/collectives.txt" ;;
    sanitizer)
      for plan in "$carry"/plans/rule_allgather_1d_logical.json "$carry"/plans/op_linear_megatron_mlp.json; do
        compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/run-plan" --backend nccl --bind-auto --quiet "$plan" > "$out/sanitizer-$(basename "$plan" .json).log" 2>&1
        echo "== compute-sanitizer $(basename "$plan"): exit $? $(grep -E 'ERROR SUMMARY' "$out/sanitizer-$(basename "$plan" .json).log")"
      done ;;
  esac
done
