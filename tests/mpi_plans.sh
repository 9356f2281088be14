#!/usr/bin/env bash
# The mpi backend over the corpus: every corpus fusion check-sharding can
# plan is run as one process per device under mpirun (the plans of 2, 3, 4
# and 8 devices as 2, 3, 4 and 8 processes) and must match the reference.
# Then the seed's refuted nvFuser Allgather must fail the same way under MPI,
# and a wrong process count must be a usage error (exit status 2).
#
#   tests/mpi_plans.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build="$1" source="$2"
bin="$build/bin"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# Containers often forbid the cross-memory attach OpenMPI uses by default.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Under the sanitizer build, OpenMPI's own allocations at exit are not ours.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
mpirun_np() { local n="$1"; shift; timeout 120 mpirun --allow-run-as-root --oversubscribe -np "$n" "$@"; }

ran=0 failed=0 ran4=0
for f in "$source"/corpus/*.txt; do
  plan="$dir/$(basename "$f").json"
  "$bin/check-sharding" --quiet --emit-plan "$plan" "$f" > /dev/null 2>&1
  [ -f "$plan" ] || continue
  n=$(grep -A40 '"devices": \[' "$plan" | head -1 | sed 's/.*\[//; s/\].*//' | tr ',' '\n' | grep -c '[0-9]')
  [ "$n" -ge 1 ] && [ "$n" -le 8 ] || continue
  status=0
  mpirun_np "$n" "$bin/run-plan" --backend mpi --bind-auto --quiet "$plan" > "$dir/out" 2>&1 || status=$?
  [ "$status" -eq 3 ] && continue # Rests on an unproved verdict.
  ran=$((ran + 1))
  [ "$n" -eq 4 ] && ran4=$((ran4 + 1))
  if [ "$status" -ne 0 ]; then
    failed=$((failed + 1))
    echo "FAIL $(basename "$f") (-np $n): exit status $status"
    cat "$dir/out"
  else
    echo "ok   $(basename "$f") (-np $n): $(grep '^result:' "$dir/out")"
  fi
done
echo "mpi: $ran plan(s) run ($ran4 as 4 processes), $failed failed"
[ "$failed" -eq 0 ] || exit 1
[ "$ran4" -ge 5 ] || { echo "expected at least 5 four-process plans"; exit 1; }

# The seed's refuted Allgather fails with nvFuser's count error under MPI too.
"$bin/check-sharding" --quiet --plan-lowerings compiler --emit-plan "$dir/nv.json" \
  "$source/corpus/seed_repro1_after_resharding.txt" > /dev/null 2>&1
status=0
mpirun_np 2 "$bin/run-plan" --backend mpi --allow-unverified "$dir/nv.json" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 1 ] || ! grep -q "all buffers must have the same number of elements" "$dir/out"; then
  echo "FAIL: the refuted Allgather under MPI: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   refuted Allgather fails under MPI: $(grep '^result:' "$dir/out")"

# A plan of 2 devices on 3 processes is a usage error on every process.
"$bin/check-sharding" --quiet --emit-plan "$dir/two.json" \
  "$source/corpus/rule_allgather_1d_logical.txt" > /dev/null 2>&1
status=0
mpirun_np 3 "$bin/run-plan" --backend mpi "$dir/two.json" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 2 ] || ! grep -q "run it with mpirun -np 2" "$dir/out"; then
  echo "FAIL: wrong process count: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   wrong process count is exit status 2"

# Timed repeats under MPI: every process runs them together (the failure
# agreement before each run is the barrier) and rank 0 reports the times.
status=0
mpirun_np 2 "$bin/run-plan" --backend mpi --warmup 1 --repeat 3 "$dir/two.json" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 0 ] || ! grep -q "^timing: 3 timed run(s) of each kind after 1 warmup" "$dir/out" \
   || ! grep -q "^result: match" "$dir/out"; then
  echo "FAIL: timed repeats under MPI: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   timed repeats under MPI: $(grep '^timing:' "$dir/out" | cut -c1-60)..."
