#!/usr/bin/env bash
# Checker benchmark: generates L-layer Megatron-style tensor-parallel dumps on
# DEVICES devices and times check-sharding over each (reading, lints, graph,
# every edge proved). Prints one table row per L.
#
#   bash bench/run_checker_bench.sh [BUILD_DIR] [DEVICES]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
DEVICES="${2:-8}"
cmake --build "$BUILD" --target megatron-gen check-sharding >/dev/null
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
printf "%-7s %-8s %-8s %-10s %-12s %-14s %s\n" layers edges proved wall_s edge_cache smt_queries smt_cache
for L in 1 32 126; do
  "$BUILD/bin/megatron-gen" "$L" "$DEVICES" > "$TMP/m$L.txt"
  start=$(date +%s.%N)
  "$BUILD/bin/check-sharding" --format json "$TMP/m$L.txt" > "$TMP/m$L.json" || true
  end=$(date +%s.%N)
  python3 - "$TMP/m$L.json" "$L" "$(echo "$end - $start" | bc)" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); s = doc["summary"]
print(f'{sys.argv[2]:<7} {s["edges"]:<8} {s["proved"]:<8} {float(sys.argv[3]):<10.2f} '
      f'{s["edge_cache_hits"]:<12} {s["smt_queries"]:<14} {s["smt_cache_hits"]}  exit={doc["exit_status"]}')
PY
done
