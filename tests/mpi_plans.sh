#!/usr/bin/env bash
# The mpi backend over the corpus: every corpus fusion check-sharding can
# plan is run as one process per device under mpirun (the plans of 2, 3, 4
# and 8 devices as 2, 3, 4 and 8 processes) and must match the reference;
# the four uneven plans (padded collectives) must be among them.
# Then the seed's refuted nvFuser Allgather must fail the same way under MPI,
# and a wrong process count must be a usage error (exit status 2).
#
# With `stopped-rank`, only this: one of 4 processes stops itself (SIGSTOP,
# the SHARDCHECK_TEST_MPI_STOP hook of executor/mpi/MpiCoordinator.h) before a
# step; the others must end the job within --timeout-s plus a few seconds,
# with exit status 4 and a message naming the rank and the step, and no
# process may be left behind.
#
#   tests/mpi_plans.sh BUILD_DIR SOURCE_DIR [stopped-rank]
#
# This script does not run the plans on the sim backend (plan_corpus_test.cpp
# does) or on GPUs.
set -uo pipefail
build="$1" source="$2" mode="${3:-corpus}"
bin="$build/bin"
dir="$(mktemp -d)"
stopped_pid=""
# The stopped process, should mpirun have left it: continued, then killed.
cleanup() {
  if [ -n "$stopped_pid" ] && kill -0 "$stopped_pid" 2> /dev/null; then
    kill -CONT "$stopped_pid" 2> /dev/null
    kill -KILL "$stopped_pid" 2> /dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
# Containers often forbid the cross-memory attach OpenMPI uses by default.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Under the sanitizer build, OpenMPI's own allocations at exit are not ours.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
mpirun_np() { local n="$1"; shift; timeout 120 mpirun --allow-run-as-root --oversubscribe -np "$n" "$@"; }

# Rank 2 of 4 stops itself before step 1 (an Allreduce over (0 1)(2 3));
# the job must end within --timeout-s (3 s) plus 12 s of mpirun start and
# teardown, with MpiCoordinator::kTimeoutExitStatus.
# True when PID has exited (or is a zombie) within SECONDS seconds.
process_gone_within() {
  local seconds="$1" pid="$2" i
  for ((i = 0; i < seconds * 10; i++)); do
    kill -0 "$pid" 2> /dev/null || return 0
    [ "$(ps -o stat= -p "$pid" | cut -c1)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}

stopped_rank() {
  local limit=3 status=0 start elapsed
  "$bin/check-sharding" --quiet --emit-plan "$dir/four.json" \
    "$source/corpus/mesh2d_reducescatter_didx.txt" > /dev/null 2>&1
  start=$(date +%s%N)
  mpirun_np 4 -x SHARDCHECK_TEST_MPI_STOP=2:1 "$bin/run-plan" --backend mpi --timeout-s "$limit" \
    "$dir/four.json" > "$dir/out" 2>&1 || status=$?
  elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
  stopped_pid=$(sed -n 's/.*SHARDCHECK_TEST_MPI_STOP: rank 2 (pid \([0-9]*\)).*/\1/p' "$dir/out")
  local fail=""
  [ -n "$stopped_pid" ] || fail="the test hook did not stop rank 2"
  [ "$status" -eq 4 ] || fail="exit status $status, expected 4"
  [ "$elapsed" -le $(( (limit + 12) * 1000 )) ] || fail="the job took $elapsed ms"
  grep -q "mpi rank [013] (plan device [013]) waited $limit s (--timeout-s) for .*step 1 (Allreduce" \
    "$dir/out" || fail="no message naming a waiting rank and step 1"
  # mpirun may return while the kernel still delivers its SIGKILL to the
  # stopped process: allow it 10 s to die before calling it left behind.
  if [ -n "$stopped_pid" ] && ! process_gone_within 10 "$stopped_pid"; then
    fail="the stopped process $stopped_pid was left behind (still alive 10 s after mpirun returned)"
  fi
  if [ -n "$fail" ]; then
    echo "FAIL: a stopped rank under MPI: $fail"; cat "$dir/out"; exit 1
  fi
  echo "ok   a stopped rank ends the job: exit status 4 after $elapsed ms (--timeout-s $limit)"
}
if [ "$mode" = stopped-rank ]; then
  stopped_rank
  exit 0
fi

ran=0 failed=0 ran4=0 ran_uneven=0
for f in "$source"/corpus/*.txt "$source"/corpus/planner/*.json; do
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
  case "$(basename "$f")" in uneven_*) ran_uneven=$((ran_uneven + 1)) ;; esac
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
# The padded collectives of uneven splits (uneven_*.txt: Allgather+pad,
# AllToAll+pad, ReduceScatter+pad) run under MPI too.
[ "$ran_uneven" -ge 4 ] || { echo "expected the 4 uneven corpus plans to run, ran $ran_uneven"; exit 1; }

# The seed's refuted Allgather fails with nvFuser's count error under MPI too.
"$bin/check-sharding" --quiet --plan-lowerings compiler --emit-plan "$dir/nv.json" \
  "$source/corpus/seed_repro1_after_resharding.txt" > /dev/null 2>&1
status=0
mpirun_np 2 "$bin/run-plan" --backend mpi --allow-unverified "$dir/nv.json" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 1 ] || ! grep -q "all buffers must have the same number of elements" "$dir/out"; then
  echo "FAIL: the refuted Allgather under MPI: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   refuted Allgather fails under MPI: $(grep '^result:' "$dir/out")"

# Host loops under MPI (docs/plan-format.md, "Loops"): the Allgather per
# stream iteration feeding a matmul, at several trip counts i0, must match;
# its wrong-bound variant, run anyway, must miss the last slice.
"$bin/check-sharding" --quiet --emit-plan "$dir/loop.json" \
  "$source/corpus/pipeline_stream_allgather_matmul_hostir.txt" > /dev/null 2>&1
grep -q '"kind": "loop"' "$dir/loop.json" || { echo "FAIL: the pipeline's plan has no loop step"; exit 1; }
for trips in 1 3 6; do
  status=0
  mpirun_np 2 "$bin/run-plan" --backend mpi --bind i0=$trips --bind i3=4 --bind i6=3 "$dir/loop.json" \
    > "$dir/out" 2>&1 || status=$?
  if [ "$status" -ne 0 ] || ! grep -q "^result: match" "$dir/out"; then
    echo "FAIL: the looped pipeline under MPI, i0=$trips: exit status $status"; cat "$dir/out"; exit 1
  fi
done
echo "ok   looped Allgather + matmul pipeline under MPI at i0 = 1, 3, 6"
"$bin/check-sharding" --quiet --plan-lowerings compiler --emit-plan "$dir/loopwrong.json" \
  "$source/corpus/pipeline_stream_allgather_wrong_bound_hostir.txt" > /dev/null 2>&1
status=0
mpirun_np 2 "$bin/run-plan" --backend mpi --bind i3=4 --bind i6=3 "$dir/loopwrong.json" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 3 ] || ! grep -q "iteration i18 = 2 is missing" "$dir/out"; then
  echo "FAIL: the wrong loop bound was not refused under MPI: exit status $status"; cat "$dir/out"; exit 1
fi
status=0
mpirun_np 2 "$bin/run-plan" --backend mpi --allow-unverified --bind i3=4 --bind i6=3 "$dir/loopwrong.json" \
  > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 1 ] || ! grep -q "T3\[2, 0, 0\], expected nan" "$dir/out"; then
  echo "FAIL: the wrong loop bound run anyway under MPI: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   wrong loop bound refused, and run anyway leaves T3[2] unwritten under MPI"

# The CollectivePermute ring (docs/plan-format.md, "Rings") under MPI: its
# per-iteration pairs as Isend/Irecv, the swizzled slots on every process.
"$bin/check-sharding" --quiet --emit-plan "$dir/ring.json" \
  "$source/corpus/adversarial_ring_collective_permute_hostir.txt" > /dev/null 2>&1
grep -q '"swizzle_team"' "$dir/ring.json" || { echo "FAIL: the ring's plan has no swizzled slice"; exit 1; }
status=0
mpirun_np 2 "$bin/run-plan" --backend mpi "$dir/ring.json" > "$dir/out" 2>&1 || status=$?
if [ "$status" -ne 0 ] || ! grep -q "^result: match" "$dir/out"; then
  echo "FAIL: the ring pipeline under MPI: exit status $status"; cat "$dir/out"; exit 1
fi
echo "ok   CollectivePermute ring + linear pipeline under MPI: $(grep '^result:' "$dir/out")"

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
