#!/usr/bin/env bash
# The DTensor sweep's plans under mpirun (issue 17's Done-when: the plans run
# to a match under mpirun, not only on sim): dtensor-sweep --emit-plans writes
# every plan it builds, then one `mpirun -np 8` start runs them all with
# run-plan --backend mpi --batch (a plan of n devices runs on ranks 0..n-1,
# the other ranks sit it out). Prints the sweep's table, the batch's total
# and the wall time of each part.
#
#   bench/dtensor_sweep_mpi.sh BUILD_DIR [MESH...]   (default: 4 2x2 4x2 2x2x2)
#
# This script does not compare with the sim runs (the sweep's own `sim
# match` column does) and does not run DTensor.
set -euo pipefail
build="${1:?usage: bench/dtensor_sweep_mpi.sh BUILD_DIR [MESH...]}"
shift
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# Containers often forbid the cross-memory attach OpenMPI uses by default.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
start=$(date +%s)
"$build/bin/dtensor-sweep" --emit-plans "$dir" "$@" > "$dir/sweep.md"
swept=$(date +%s)
cat "$dir/sweep.md"
echo "plans emitted: $(wc -l < "$dir/plans.txt") in $((swept - start)) s"
status=0
mpirun --allow-run-as-root --oversubscribe -np 8 "$build/bin/run-plan" --backend mpi --bind-auto \
  --quiet --batch "$dir/plans.txt" > "$dir/mpi.out" 2>&1 || status=$?
# The plans that did not match (--quiet prints only those), then the total.
grep -v '^batch:' "$dir/mpi.out" | head -20 || true
grep '^batch:' "$dir/mpi.out" || echo "no batch total (exit status $status)"
echo "mpirun -np 8: exit status $status in $(($(date +%s) - swept)) s"
exit "$status"
