// run-plan: thin main over its command line (RunPlan.h); a
// failed write of its results to standard output is exit status 2.
//
// This file does not parse flags or print results.
#include "tools/StdoutCheck.h"
#include "tools/run_plan/RunPlan.h"

int main(int argc, char **argv) {
  return shardcheck::statusAfterFlushingStdout("run-plan", shardcheck::runPlanMain(argc, argv));
}
