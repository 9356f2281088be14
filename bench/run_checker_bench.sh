#!/usr/bin/env bash
# Checker benchmark: generates L-layer Megatron-style tensor-parallel dumps on
# DEVICES devices (bench/megatron_gen.cpp) and times check-sharding over each
# (reading, lints, graph, every edge decided). Prints one table row per L.
#
#   bash bench/run_checker_bench.sh [BUILD_DIR] [DEVICES]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
DEVICES="${2:-8}"
cmake --build "$BUILD" --target megatron-gen check-sharding >/dev/null
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

field() { grep -o "\"$1\": [0-9][0-9]*" "$2" | head -1 | grep -o '[0-9]*$'; }

printf "%-7s %-7s %-7s %-9s %-16s %-12s %s\n" layers edges proved wall_s edges_from_cache smt_queries smt_cached
for L in 1 32 126; do
  "$BUILD/bin/megatron-gen" "$L" "$DEVICES" > "$TMP/m$L.txt"
  start=$EPOCHREALTIME
  status=0
  "$BUILD/bin/check-sharding" --format json "$TMP/m$L.txt" > "$TMP/m$L.json" || status=$?
  end=$EPOCHREALTIME
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  j="$TMP/m$L.json"
  printf "%-7s %-7s %-7s %-9s %-16s %-12s %s  (exit %s)\n" "$L" "$(field edges "$j")" \
    "$(field proved "$j")" "$wall" "$(field edge_cache_hits "$j")" "$(field smt_queries "$j")" \
    "$(field smt_cache_hits "$j")" "$status"
done
