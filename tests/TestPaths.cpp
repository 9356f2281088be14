// The configured source directory; see TestPaths.h.
#include "tests/TestPaths.h"

namespace shardcheck::testing {
const char *sourceDir() {
  return SHARDCHECK_CONFIGURED_SOURCE_DIR;
}
} // namespace shardcheck::testing
