#!/usr/bin/env bash
# A long fuzzing run: N executions per libFuzzer harness (fuzz/README.md),
# seeded, with a summary to keep (executions, exec/s, crashes per target).
#
#   scripts/fuzz_long.sh [--runs N] [--seed S] [--workers W] [--max-crashes K]
#                        [--timeout SECS] [--max-time SECS] [--out DIR] [--no-build]
#                        [TARGET[=N]...]
#
#   --runs N         executions per target (default 2500000: 10^7 over the
#                    four targets); TARGET=N sets one target's count
#   --seed S         libFuzzer's -seed for the first process (default 1); each
#                    later process of a target (another worker, or a restart
#                    after a crash) takes the next seed, so a run is repeatable
#   --workers W      processes per target at once, sharing its corpus (default 1)
#   --max-crashes K  a worker stops after K findings (default 10)
#   --timeout SECS   libFuzzer's per-input -timeout (default 60)
#   --max-time SECS  stop each target's workers after SECS seconds even if
#                    their executions are not done (default: no limit); the
#                    summary counts the executions actually run
#   --out DIR        where corpora, reproducers, logs and the summary go
#                    (default build-fuzz/fuzz/long-YYYYmmdd-HHMMSS)
#   TARGET           dump-reader json-ir plan-loader pipeline (default all), one
#                    after another
#
# A worker that finds a crash, leak or timeout records it and starts again
# (next seed) until its executions are done. DIR/summary.md has one row per
# target (executions, average exec/s, wall seconds, corpus size, findings) and
# every finding with its reproducer; DIR/summary.tsv the same rows for tools.
# Exit status: 0 nothing found, 1 findings, 2 bad usage.
#
# This script does not minimize reproducers (run the target with
# -minimize_crash=1 on one) and does not change the harnesses' limits.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
# shellcheck source=../fuzz/fuzz_targets.sh
source "$ROOT/fuzz/fuzz_targets.sh"

RUNS=2500000 SEED=1 WORKERS=1 MAX_CRASHES=10 TIMEOUT=60 MAX_TIME=0 OUT="" BUILD_FIRST=1
declare -A TARGET_RUNS=()
TARGETS=()

usage() {
  sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

parse_args() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --runs) RUNS="${2:?}"; shift ;;
      --seed) SEED="${2:?}"; shift ;;
      --workers) WORKERS="${2:?}"; shift ;;
      --max-crashes) MAX_CRASHES="${2:?}"; shift ;;
      --timeout) TIMEOUT="${2:?}"; shift ;;
      --max-time) MAX_TIME="${2:?}"; shift ;;
      --out) OUT="${2:?}"; shift ;;
      --no-build) BUILD_FIRST=0 ;;
      -h | --help) usage ;;
      -*) echo "fuzz_long.sh: unknown option $1" >&2; usage ;;
      *=*) TARGETS+=("${1%%=*}"); TARGET_RUNS["${1%%=*}"]="${1#*=}" ;;
      *) TARGETS+=("$1") ;;
    esac
    shift
  done
  [ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${FUZZ_TARGETS[@]}")
  local t
  for t in "${TARGETS[@]}"; do
    [[ " ${FUZZ_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz_long.sh: no target $t" >&2; usage; }
  done
  [ -n "$OUT" ] || OUT="$BUILD/fuzz/long-$(date +%Y%m%d-%H%M%S)"
}

# One worker of a target: processes until `runs` executions are done or
# MAX_CRASHES findings were made. Appends "execs" lines and "finding" lines
# (TAB-separated: finding, reproducer) to its state file.
worker() {
  local t="$1" w="$2" runs="$3" state="$4" done=0 attempt=0 crashes=0 start
  start=$(date +%s)
  while [ "$done" -lt "$runs" ] && [ "$crashes" -lt "$MAX_CRASHES" ]; do
    local log="$OUT/logs/$t.w$w.$attempt.log" status=0 seed=$((SEED + attempt * WORKERS + w))
    local time_flags=()
    if [ "$MAX_TIME" -gt 0 ]; then
      local left=$((MAX_TIME - ($(date +%s) - start)))
      [ "$left" -gt 0 ] || break
      time_flags=(-max_total_time="$left")
    fi
    fuzz_run "$BUILD" "$t" "$OUT/corpus/$t" "$OUT/findings/$t" "$log" -runs=$((runs - done)) \
      -seed="$seed" -timeout="$TIMEOUT" -reload=1 "${time_flags[@]}" || status=$?
    local execs
    execs="$(fuzz_stat "$log" number_of_executed_units)"
    echo "execs ${execs:-0}" >> "$state"
    [ "${execs:-0}" -gt 0 ] || { echo "finding	no executions (see $log)	-" >> "$state"; break; }
    done=$((done + execs))
    if [ "$status" -ne 0 ]; then
      crashes=$((crashes + 1))
      local reproducer
      reproducer="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
      printf 'finding\t%s\t%s\n' "$(fuzz_finding "$log")" "${reproducer:--}" >> "$state"
    fi
    attempt=$((attempt + 1))
  done
}

# Runs a target's workers and prints its summary row (TSV).
run_target() {
  local t="$1" runs="${TARGET_RUNS[$1]:-$RUNS}" w start
  start=$(date +%s)
  echo "== fuzz-$t: $runs executions, $WORKERS worker(s), seed $SEED" >&2
  for ((w = 0; w < WORKERS; w++)); do
    : > "$OUT/state/$t.w$w"
    worker "$t" "$w" $(((runs + WORKERS - 1) / WORKERS)) "$OUT/state/$t.w$w" &
  done
  wait
  local wall=$(($(date +%s) - start)) execs findings units
  execs=$(cat "$OUT/state/$t".w* | awk '$1 == "execs" { n += $2 } END { print n + 0 }')
  findings=$(cat "$OUT/state/$t".w* | grep -c '^finding' || true)
  units=$(find "$OUT/corpus/$t" -type f | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$execs" "$((execs / (wall > 0 ? wall : 1)))" "$wall" \
    "$units" "$findings"
}

write_summary() {
  local rows="$1"
  {
    echo "# Fuzzing run $(basename "$OUT")"
    echo
    echo "Commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
      git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (with local changes)'), seed $SEED, $WORKERS" \
      "worker(s) per target, -timeout=$TIMEOUT, on $(nproc) core(s) of $(uname -n)."
    echo
    echo "| target | executions | exec/s | wall s | corpus units | findings |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$rows"
    awk -F'\t' '{ n += $2; f += $6 } END { printf "| total | %d | | | | %d |\n", n, f }' "$rows"
    echo
    echo "## Findings"
    echo
    local any=0 t
    for t in "${TARGETS[@]}"; do
      while IFS=$'\t' read -r _ what reproducer; do
        any=1
        echo "- $t: $what (reproducer: $reproducer)"
      done < <(cat "$OUT/state/$t".w* | grep '^finding' | sort -u -t$'\t' -k2,2)
    done
    [ "$any" -eq 1 ] || echo "None."
  } > "$OUT/summary.md"
  cp "$rows" "$OUT/summary.tsv"
}

main() {
  parse_args "$@"
  [ "$BUILD_FIRST" -eq 0 ] || bash "$ROOT/scripts/dev.sh" fuzz-build
  mkdir -p "$OUT/logs" "$OUT/state" "$OUT/corpus" "$OUT/findings"
  local rows="$OUT/rows.tsv" t
  : > "$rows"
  for t in "${TARGETS[@]}"; do run_target "$t" >> "$rows"; done
  write_summary "$rows"
  cat "$OUT/summary.md"
  [ "$(awk -F'\t' '{ f += $6 } END { print f + 0 }' "$rows")" -eq 0 ] || exit 1
}

main "$@"
