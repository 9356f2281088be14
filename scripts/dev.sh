#!/usr/bin/env bash
# shardcheck's developer entry point: installs dependencies, builds, runs.
#
#   scripts/dev.sh main            install deps, build, check every corpus file
#   scripts/dev.sh test            install deps, build, run the whole test suite
#   scripts/dev.sh test-sanitize   the same under AddressSanitizer + UBSan
#   scripts/dev.sh deps | build    the individual steps
#   scripts/dev.sh fuzz-ci         build the libFuzzer harnesses (fuzz/), run each
#                                  for FUZZ_SECONDS (30), FUZZ_JOBS (2) at a time
#   scripts/dev.sh fuzz [TARGET]   run one harness (or all) for FUZZ_SECONDS (600),
#                                  keeping its corpus in build-fuzz/fuzz/corpus/
#   scripts/dev.sh fuzz-build      build the harnesses and their seed corpora only
#   scripts/dev.sh format-check    clang-format (.clang-format) over every tracked
#                                  C++/CUDA file; fails naming the files it would change
#   scripts/dev.sh format          rewrite them in place
#   scripts/dev.sh report-screenshot
#                                  check-sharding --report-html over the seed and
#                                  run-plan --report-html of its plans (a match, the
#                                  failing nvFuser Allgather, refused), opened in
#                                  headless Chromium (installed on demand; CI does
#                                  not need it): fails on a console error, writes
#                                  docs/report-seed.png and docs/report-run-plan.png
#
# Works on a fresh Debian 12 machine as root (or with sudo) with only the
# package registry reachable. Set SHARDCHECK_SKIP_DEPS=1 to skip apt.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${JOBS:-$(nproc)}"

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libz3-dev libboost-graph-dev nlohmann-json3-dev libgtest-dev
  openmpi-bin libopenmpi-dev ccache
  python3 python3-jsonschema  # tests validate --format sarif against its schema
  clang libclang-rt-dev llvm  # the fuzz build: clang, libFuzzer + sanitizers, llvm-symbolizer
  clang-format                # scripts/dev.sh format-check (CI)
  graphviz                    # check-sharding --report-html lays graphs out with dot (tests too)
)

deps() {
  [ "${SHARDCHECK_SKIP_DEPS:-0}" = 1 ] && return 0
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "== installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# ccache keeps compiled objects across clones (CI builds a fresh clone on the
# machine the commit was developed on): paths are made relative to the
# checkout so that another clone's objects hit. BUILD_TARGET, when set, builds
# that target only.
build() {
  local dir="$1"; shift
  local launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
}

run_tests() {
  local dir="$1"
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" --timeout 600
}

# Emits the verified plan of every corpus fusion that has one and runs it on
# the sim backend, symbolic sizes bound by --bind-auto. Fails on a mismatch
# or a crash; a fusion without a plan (exit 1 from check-sharding, or a plan
# resting on unproved verdicts, exit 3) is skipped.
run_corpus_plans() {
  local bin="$ROOT/build/bin" dir ran=0 failed=0
  dir="$(mktemp -d)"
  echo "== run-plan --backend sim over the corpus plans"
  shopt -s nullglob
  for f in "$ROOT"/corpus/*.txt "$ROOT"/corpus/*.json; do
    local plan="$dir/$(basename "$f").plan.json"
    "$bin/check-sharding" --quiet --emit-plan "$plan" "$f" >/dev/null 2>&1 || true
    [ -f "$plan" ] || continue
    grep -q '"status": "proved"' "$plan" || continue
    local status=0
    "$bin/run-plan" --quiet --bind-auto "$plan" > "$dir/out" 2>&1 || status=$?
    if [ "$status" -eq 3 ]; then continue; fi  # rests on an unproved verdict
    ran=$((ran + 1))
    if [ "$status" -ne 0 ]; then
      failed=$((failed + 1))
      echo "$(basename "$f"): run-plan exit status $status"; cat "$dir/out"
    else
      echo "$(basename "$f"): $(tail -1 "$dir/out")"
    fi
  done
  rm -rf "$dir"
  echo "== run-plan: $ran plan(s) run, $failed failed"
  [ "$failed" -eq 0 ]
}

# The libFuzzer harnesses and their seed corpora (fuzz/README.md), in their
# own build folder: clang, every library instrumented, GPU and tests off.
FUZZ_BUILD="$ROOT/build-fuzz"
fuzz_build() {
  BUILD_TARGET=fuzz build "$FUZZ_BUILD" -DSHARDCHECK_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++
}

# Runs the targets $@ (default: all), FUZZ_JOBS at a time, each with the
# libFuzzer flags in FUZZ_FLAGS, over the corpus folder CORPUS/TARGET; prints
# one line per target and fails when any found something (reproducers in
# FINDINGS/TARGET, logs in FINDINGS/TARGET.log).
fuzz_targets() {
  local corpus="$1" findings="$2" t
  shift 2
  # shellcheck source=../fuzz/fuzz_targets.sh
  source "$ROOT/fuzz/fuzz_targets.sh"
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=("${FUZZ_TARGETS[@]}")
  mkdir -p "$findings"
  for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-2}" ]; do wait -n || true; done
    echo "== fuzz-$t: ${FUZZ_FLAGS[*]}"
    (
      status=0
      fuzz_run "$FUZZ_BUILD" "$t" "$corpus/$t" "$findings/$t" "$findings/$t.log" \
        "${FUZZ_FLAGS[@]}" || status=$?
      echo "$status" > "$findings/$t.status"
    ) &
  done
  wait
  local failed=0
  for t in "${targets[@]}"; do
    local status log="$findings/$t.log"
    status="$(cat "$findings/$t.status")"
    printf '%-12s exit %s, %s execs, %s exec/s, %s new units\n' "$t" "$status" \
      "$(fuzz_stat "$log" number_of_executed_units)" "$(fuzz_stat "$log" average_exec_per_sec)" \
      "$(fuzz_stat "$log" new_units_added)"
    if [ "$status" -ne 0 ]; then
      failed=$((failed + 1))
      echo "  found: $(fuzz_finding "$log")"
      echo "  reproducer(s): $(ls "$findings/$t"/* 2>/dev/null | tr '\n' ' ')(log: $log)"
    fi
  done
  [ "$failed" -eq 0 ]
}

# Every tracked C++/CUDA source, for clang-format.
cxx_sources() { git -C "$ROOT" ls-files -- '*.cpp' '*.h' '*.cu' '*.cuh'; }

format_check() {
  local bad=()
  while read -r f; do
    clang-format --dry-run -Werror "$ROOT/$f" >/dev/null 2>&1 || bad+=("$f")
  done < <(cxx_sources)
  if [ ${#bad[@]} -ne 0 ]; then
    echo "clang-format would change ${#bad[@]} file(s) (run: bash scripts/dev.sh format):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    return 1
  fi
  echo "== clang-format: every tracked C++/CUDA source is formatted"
}

# Loads PAGE in headless Chromium (Debian's chromium) at WIDTHxHEIGHT,
# writing its screenshot to PNG; fails when the page logs a console error.
chromium_load() {
  local page="$1" png="$2" size="$3" log="$4"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --window-size="$size" \
    --screenshot="$png" "file://$page" 2> "$log"
  if grep ':CONSOLE' "$log"; then
    echo "$page logged errors in Chromium (above); log: $log" >&2
    return 1
  fi
}

# The seed's HTML reports in headless Chromium: check-sharding's page of the
# seed (docs/report-seed.png) and run-plan's pages of its plans: the
# checker's (a match), nvFuser's run anyway (the failing Allgather,
# docs/report-run-plan.png) and refused, with their index pages. Every page
# must load without a console error.
report_screenshot() {
  if ! command -v chromium >/dev/null; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium
  fi
  local dir bin="$ROOT/build/bin" seed="$ROOT/corpus/seed_repro1_after_resharding.txt" page
  dir="$(mktemp -d)"
  # Exit 1: the seed's Allgather is refuted, as the report shows.
  (cd "$ROOT" && build/bin/check-sharding --quiet --report-html "$dir/report" \
    corpus/seed_repro1_after_resharding.txt > /dev/null) || true
  chromium_load "$dir/report/000-seed_repro1_after_resharding.txt.html" \
    "$ROOT/docs/report-seed.png" 1200,1050 "$dir/chromium.log"
  # Exit 1 both: the seed's compiler choice is refuted; the plans are written.
  "$bin/check-sharding" --quiet --emit-plan "$dir/ok.json" "$seed" > /dev/null || true
  "$bin/check-sharding" --quiet --plan-lowerings compiler --emit-plan "$dir/nv.json" "$seed" \
    > /dev/null || true
  # Run in $dir so that the pages name the plans ok.json and nv.json. Exit 1
  # (the Allgather's counts do not fit) and 3 (refused), as the pages show.
  (cd "$dir" && "$bin/run-plan" --quiet --report-html ok ok.json > /dev/null)
  (cd "$dir" && "$bin/run-plan" --quiet --allow-unverified --report-html nv nv.json \
    > /dev/null 2>&1) || true
  (cd "$dir" && "$bin/run-plan" --quiet --report-html refused nv.json > /dev/null 2>&1) || true
  chromium_load "$dir/nv/000-nv.json.html" "$ROOT/docs/report-run-plan.png" 1200,640 \
    "$dir/chromium.log"
  for page in "$dir"/ok/*.html "$dir"/nv/index.html "$dir"/refused/*.html; do
    chromium_load "$page" "$dir/page.png" 1200,800 "$dir/chromium.log"
  done
  rm -rf "$dir"
  echo "== docs/report-seed.png, docs/report-run-plan.png: both tools' reports of the seed," \
    "loaded without console errors"
}

cmd="${1:-}"
case "$cmd" in
  deps) deps ;;
  build) deps; build "$ROOT/build" ;;
  main)
    deps
    build "$ROOT/build"
    echo "== check-sharding over corpus/"
    status=0
    shopt -s nullglob
    files=("$ROOT"/corpus/*.txt "$ROOT"/corpus/*.json)
    "$ROOT/build/bin/check-sharding" "${files[@]}" 2>&1 || status=$?
    # The corpus holds refuted compiler choices and lint errors on purpose
    # (exit status 1); only unreadable input (2) or a crash fails the job.
    if [ "$status" -ne 0 ] && [ "$status" -ne 1 ] && [ "$status" -ne 3 ]; then
      echo "check-sharding failed with exit status $status" >&2
      exit "$status"
    fi
    echo "== check-sharding exit status: $status (1 = findings, as the corpus intends)"
    run_corpus_plans
    ;;
  test)
    deps
    build "$ROOT/build"
    run_tests "$ROOT/build"
    ;;
  test-sanitize)
    deps
    # The CUDA code is not instrumented and the CUDA runtime and ASan do not
    # mix; the GPU parts are tested by their own binary on a GPU machine.
    build "$ROOT/build-asan" -DSHARDCHECK_SANITIZE=ON -DSHARDCHECK_ENABLE_GPU=OFF
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      SHARDCHECK_QUICK=1 run_tests "$ROOT/build-asan"
    ;;
  fuzz-build)
    deps
    fuzz_build
    ;;
  format-check)
    deps
    format_check
    ;;
  report-screenshot)
    deps
    BUILD_TARGET=check-sharding build "$ROOT/build"
    BUILD_TARGET=run-plan build "$ROOT/build"
    report_screenshot
    ;;
  format)
    deps
    cxx_sources | (cd "$ROOT" && xargs clang-format -i)
    ;;
  fuzz-ci)
    # Bounded: CI runs on 2 cores and must stay well under 15 minutes.
    deps
    fuzz_build
    rm -rf "$FUZZ_BUILD/fuzz/ci"
    FUZZ_FLAGS=(-max_total_time="${FUZZ_SECONDS:-30}" -timeout=20 -seed="${FUZZ_SEED:-1}")
    fuzz_targets "$FUZZ_BUILD/fuzz/ci/corpus" "$FUZZ_BUILD/fuzz/ci/findings"
    ;;
  fuzz)
    deps
    fuzz_build
    shift
    FUZZ_FLAGS=(-max_total_time="${FUZZ_SECONDS:-600}" -timeout=20)
    FUZZ_JOBS="${FUZZ_JOBS:-1}" fuzz_targets "$FUZZ_BUILD/fuzz/corpus" "$FUZZ_BUILD/fuzz/findings" "$@"
    ;;
  *)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
