#!/usr/bin/env bash
# The end-to-end fusion oracle at scale: 10^5 random fusions, seeded,
# resumable, with progress shown (tools/fusion-oracle, tests/oracle/).
#
#   bash bench/fusion_oracle.sh [BUILD] [COUNT] [SEED] [STATE_DIR]
#
# BUILD: the build folder (default build), COUNT fusions (default 100000)
# with seeds SEED .. SEED+COUNT-1 (default 1), split into JOBS workers
# (environment, default: the number of cores), worker k running
# `fusion-oracle --resume STATE_DIR/worker-k.state --progress` over its own
# seed range (STATE_DIR default: fusion-oracle-state). Interrupted (Ctrl-C,
# a lost machine), the same command continues every worker where it stopped.
# At the end it prints the merged counts by outcome, construct and violation
# class; the first fusion of each violation class, minimized, is in
# STATE_DIR/reports/ and STATE_DIR/worker-k.state.violations.
#
# Exit status: 0 no violation, 1 violations, 2 a worker failed otherwise.
set -euo pipefail

BUILD=${1:-build}
COUNT=${2:-100000}
SEED=${3:-1}
STATE=${4:-fusion-oracle-state}
JOBS=${JOBS:-$(nproc)}
ORACLE="$BUILD/bin/fusion-oracle"

if [[ ! -x "$ORACLE" ]]; then
  echo "fusion_oracle.sh: $ORACLE not found; build it: cmake --build $BUILD --target fusion-oracle" >&2
  exit 2
fi
mkdir -p "$STATE/reports"
PER=$(( (COUNT + JOBS - 1) / JOBS ))
echo "fusion_oracle.sh: $COUNT fusions from seed $SEED in $JOBS workers of up to $PER, state in $STATE"

pids=()
states=()
trap 'kill -INT "${pids[@]}" 2>/dev/null; wait; echo "interrupted: run the same command to resume" >&2; exit 130' INT TERM
for (( k = 0; k < JOBS; k++ )); do
  first=$(( SEED + k * PER ))
  n=$(( COUNT - k * PER ))
  (( n > PER )) && n=$PER
  (( n <= 0 )) && break
  states+=("$STATE/worker-$k.state")
  "$ORACLE" --seed "$first" --count "$n" --resume "$STATE/worker-$k.state" --progress \
    --report-dir "$STATE/reports" > "$STATE/worker-$k.log" 2> >(sed "s/^/[worker $k] /" >&2) &
  pids+=($!)
done

status=0
for pid in "${pids[@]}"; do
  if wait "$pid"; then :; else
    rc=$?
    (( rc == 1 )) && (( status == 0 )) && status=1
    (( rc != 1 )) && status=2
  fi
done
"$ORACLE" --summarize "${states[@]}"
exit $status
