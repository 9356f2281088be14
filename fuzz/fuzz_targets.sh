# shellcheck shell=bash
# The fuzz targets and how one of them runs, sourced by scripts/dev.sh (fuzz,
# fuzz-ci) and scripts/fuzz_long.sh so that all of them run a target alike.
#
#   FUZZ_TARGETS                 the targets: dump-reader json-ir plan-loader pipeline
#                                dtensor-reader
#   fuzz_run BUILD TARGET WORK ARTIFACTS LOG [FLAG...]
#                                runs BUILD/bin/fuzz-TARGET with its dictionary
#                                over WORK (new inputs are written there) and its
#                                seed corpus (BUILD/fuzz/seeds/...); reproducers
#                                go to ARTIFACTS, output to LOG; FLAGs go to
#                                libFuzzer. Returns libFuzzer's exit status.
#   fuzz_stat LOG NAME           a final stat of a run: number_of_executed_units,
#                                average_exec_per_sec, new_units_added, peak_rss_mb
#   fuzz_finding LOG             one line naming what a failed run found
#
# This file does not build the targets, choose durations or run several
# targets at once; its callers do.

FUZZ_SOURCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FUZZ_TARGETS=(dump-reader json-ir plan-loader pipeline dtensor-reader)

# The seed corpus (under BUILD/fuzz/seeds) and dictionaries of a target. A
# plan embeds its fusion as JSON IR, so the plan loader gets both.
fuzz_seed_dir() {
  case "$1" in
    dump-reader | pipeline) echo dump ;;
    json-ir) echo json-ir ;;
    plan-loader) echo plan ;;
    dtensor-reader) echo dtensor ;;
  esac
}
fuzz_dicts() {
  case "$1" in
    dump-reader | pipeline) echo nvfuser_dump ;;
    json-ir) echo json_ir ;;
    plan-loader) echo "plan json_ir" ;;
    dtensor-reader) echo dtensor ;;
  esac
}

fuzz_run() {
  local build="$1" target="$2" work="$3" artifacts="$4" log="$5"
  shift 5
  mkdir -p "$work" "$artifacts"
  local dict="$work.dict" d
  : > "$dict"
  for d in $(fuzz_dicts "$target"); do cat "$FUZZ_SOURCE_DIR/dicts/$d.dict" >> "$dict"; done
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    "$build/bin/fuzz-$target" -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$@" "$work" "$build/fuzz/seeds/$(fuzz_seed_dir "$target")" > "$log" 2>&1
}

fuzz_stat() {
  sed -n "s/^stat::$2: *//p" "$1" | tail -1
}

# The property that failed (with its detail line), or the sanitizer's or
# libFuzzer's summary line; then the first stack frame in shardcheck's code
# outside fuzz/.
fuzz_finding() {
  local what frame
  what="$(grep -m1 -A1 '^==shardcheck-fuzz== property violated' "$1" | tr -s ' \n' ' ')"
  [ -n "$what" ] || what="$(grep -m1 -E '^SUMMARY: |^==[0-9]+== ERROR: libFuzzer' "$1" || tail -1 "$1")"
  frame="$(grep -E '^ *#[0-9]+ 0x[0-9a-f]+ in shardcheck::' "$1" | grep -v 'shardcheck::fuzz::' |
    grep -oE ' in shardcheck::[^ ]+' | head -1 || true)"
  echo "${what:0:240}${frame:+ (at${frame#' in'})}"
}
