// Where the tests find the source tree (the corpus, docs).
//
// The path is compiled into one small file (TestPaths.cpp) instead of every
// test, so that a clone at another path reuses every other compiled test
// object from ccache (scripts/dev.sh). It does not locate anything else.
#pragma once

namespace shardcheck::testing {
/// The repository root the tests were configured from.
const char *sourceDir();
} // namespace shardcheck::testing

#define SHARDCHECK_SOURCE_DIR (::shardcheck::testing::sourceDir())
