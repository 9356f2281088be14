#!/usr/bin/env bash
# Checker benchmark: generates Megatron-style transformer dumps on DEVICES
# devices (bench/megatron_gen.cpp) and times check-sharding over each
# (reading, lints, graph, every edge decided), with the structural edge cache
# (as users run it) and with --no-cache (every edge encoded and asked anew:
# the cold path of a fusion without repeated layers). Then the random-edge
# mix (bench/edge_throughput.cpp). One row per dump.
#
#   bash bench/run_checker_bench.sh [BUILD_DIR] [DEVICES]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
DEVICES="${2:-8}"
cmake --build "$BUILD" --target megatron-gen check-sharding edge-throughput >/dev/null
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

field() { grep -o "\"$1\": [0-9][0-9]*" "$2" | head -1 | grep -o '[0-9]*$'; }

# Prints "wall user maxrss_kb" of one check-sharding run; its JSON goes to $2.
timed() {
  local out="$1"; shift
  /usr/bin/time -f "%e %U %M" -o "$TMP/time" "$BUILD/bin/check-sharding" --format json "$@" \
    > "$out" || true
  cat "$TMP/time"
}

printf "%-34s %-7s %-7s %-20s %-20s %s\n" dump edges proved "cached: s, user, KB" \
  "no-cache: s, user, KB" "no-cache queries/solved"
row() {
  local name="$1"; shift
  "$BUILD/bin/megatron-gen" "$@" > "$TMP/m.txt"
  local cached cold
  cached=$(timed "$TMP/c.json" "$TMP/m.txt")
  cold=$(timed "$TMP/n.json" --no-cache "$TMP/m.txt")
  local q s
  q=$(field smt_queries "$TMP/n.json"); s=$((q - $(field smt_cache_hits "$TMP/n.json")))
  printf "%-34s %-7s %-7s %-20s %-20s %s\n" "$name" "$(field edges "$TMP/c.json")" \
    "$(field proved "$TMP/c.json")" "$cached" "$cold" "$q/$s"
}
for L in 1 32 126; do row "forward L=$L" "$L" "$DEVICES"; done
row "fwd+bwd L=126" 126 "$DEVICES" --backward
row "fwd+bwd, sequence parallel L=126" 126 "$DEVICES" --backward --sequence-parallel
row "fwd+bwd, sequence parallel L=200" 200 "$DEVICES" --backward --sequence-parallel

echo
echo "random-edge mix (edge-throughput 2000):"
"$BUILD/bin/edge-throughput" 2000
