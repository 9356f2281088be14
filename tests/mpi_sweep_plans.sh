#!/usr/bin/env bash
# A handful of DTensor sweep plans under mpirun in one start (issue 17): the
# 1-D mesh of 4 devices at both sizes, emitted by dtensor-sweep --emit-plans
# and run by `run-plan --backend mpi --batch` on 8 processes, so ranks 4-7 sit
# every plan out. Every plan must match and the total must name them all.
#
#   tests/mpi_sweep_plans.sh BUILD_DIR
#
# This script does not run the whole sweep (bench/dtensor_sweep_mpi.sh does).
set -uo pipefail
bin="$1/bin"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
"$bin/dtensor-sweep" --emit-plans "$dir" 4 > /dev/null || { echo "FAIL: dtensor-sweep"; exit 1; }
n=$(wc -l < "$dir/plans.txt")
[ "$n" -ge 10 ] || { echo "FAIL: only $n plans emitted"; exit 1; }
status=0
timeout 300 mpirun --allow-run-as-root --oversubscribe -np 8 "$bin/run-plan" --backend mpi \
  --bind-auto --quiet --batch "$dir/plans.txt" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 0 ] || ! grep -q "^batch: $n plan(s) run, $n matched, 0 did not" "$dir/out"; then
  echo "FAIL: the sweep's plans under mpirun -np 8: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   $n sweep plans of 4 devices under one mpirun -np 8: $(grep '^batch:' "$dir/out")"
