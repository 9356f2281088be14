// run-plan: thin main over the executor driver (executor/RunPlan.h); a
// failed write of its results to standard output is exit status 2.
//
// This file does not parse flags or print results.
#include "executor/RunPlan.h"
#include "tools/StdoutCheck.h"

int main(int argc, char **argv) {
  return shardcheck::statusAfterFlushingStdout("run-plan", shardcheck::runPlanMain(argc, argv));
}
