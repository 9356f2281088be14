// check-sharding: thin main over its command line (CheckSharding.h); a
// failed write of its verdicts to standard output is exit status 2.
//
// This file does not parse flags or print results.
#include "tools/StdoutCheck.h"
#include "tools/check_sharding/CheckSharding.h"

int main(int argc, char **argv) {
  return shardcheck::statusAfterFlushingStdout("check-sharding",
                                               shardcheck::checkShardingMain(argc, argv));
}
