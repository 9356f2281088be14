#!/usr/bin/env bash
# ctest ExampleConsumer: installs the build tree BUILD (cmake --install into
# BUILD/example-consumer/prefix), then configures, builds and runs
# examples/consumer/ against it, as a compiler project using
# find_package(shardcheck) would. Fails when any step does.
#
# It does not touch the build tree's own outputs; everything goes under
# BUILD/example-consumer/.
set -euo pipefail
BUILD="$1" SOURCE="$2"
WORK="$BUILD/example-consumer"
rm -rf "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" > "$WORK.install.log" 2>&1 ||
  { cat "$WORK.install.log"; exit 1; }
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$SOURCE/examples/consumer" -B "$WORK/build" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$WORK/build"
"$WORK/build/fusion_sharding_test"
