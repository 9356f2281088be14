#!/usr/bin/env bash
# One slice of the long fuzzing run (issue 13's 10^7 executions) on a machine
# without clang: the harnesses built here (scripts/dev.sh fuzz-build), carried
# as one archive, run under scripts/fuzz_long.sh, all four targets at once.
#
#   here:   scripts/fuzz_device_run.sh pack build-fuzz-carry/fuzz.tgz
#   there:  scripts/fuzz_device_run.sh run build-fuzz-carry/fuzz.tgz SECONDS SEED OUTDIR
#
# `pack` writes the stripped harnesses, libz3 and the seed corpora into the
# archive (about 25 MB). `run` unpacks it into build-fuzz/ and runs every
# target for SECONDS with a share of the machine's cores each (dump-reader
# 5/16, json-ir 4/16, plan-loader 5/16, pipeline 2/16, at least one), seeds
# from SEED; OUTDIR gets each target's summary.md, summary.tsv and findings.
# Slices with different seeds add up: bench/RESULTS.md sums their rows.
#
# This script does not build anything and does not minimize findings.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGETS=(dump-reader json-ir plan-loader pipeline)
SHARES=(5 4 5 2)

pack() {
  local archive="$1" stage
  stage="$(mktemp -d)"
  mkdir -p "$stage/bin" "$stage/lib" "$stage/fuzz"
  for t in "${TARGETS[@]}"; do strip -o "$stage/bin/fuzz-$t" "$ROOT/build-fuzz/bin/fuzz-$t"; done
  cp -L "$(ldd "$ROOT/build-fuzz/bin/fuzz-pipeline" | awk '/libz3/ { print $3 }')" "$stage/lib/"
  cp -r "$ROOT/build-fuzz/fuzz/seeds" "$stage/fuzz/seeds"
  mkdir -p "$(dirname "$archive")"
  tar czf "$archive" -C "$stage" .
  rm -rf "$stage"
}

run() {
  local archive="$1" seconds="$2" seed="$3" out="$4" cores i
  mkdir -p "$ROOT/build-fuzz" "$out"
  tar xzf "$archive" -C "$ROOT/build-fuzz"
  export LD_LIBRARY_PATH="$ROOT/build-fuzz/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  cores="$(nproc)"
  for i in "${!TARGETS[@]}"; do
    local t="${TARGETS[$i]}" workers=$((cores * SHARES[i] / 16))
    [ "$workers" -ge 1 ] || workers=1
    bash "$ROOT/scripts/fuzz_long.sh" --no-build --runs 100000000 --max-time "$seconds" \
      --workers "$workers" --seed "$seed" --out "/tmp/fuzz-slice-$seed/$t" "$t" \
      > "$out/$t.stdout" 2>&1 &
  done
  wait || true
  for t in "${TARGETS[@]}"; do
    local dir="/tmp/fuzz-slice-$seed/$t"
    mkdir -p "$out/$t"
    cp "$dir/summary.md" "$dir/summary.tsv" "$out/$t/" 2>/dev/null || true
    [ -d "$dir/findings" ] && cp -r "$dir/findings" "$out/$t/" || true
  done
  cat "$out"/*/summary.tsv
}

case "${1:-}" in
  pack) pack "$2" ;;
  run) run "$2" "$3" "$4" "$5" ;;
  *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
