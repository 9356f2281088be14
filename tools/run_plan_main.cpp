// run-plan: thin main over the executor driver (executor/RunPlan.h).
#include "executor/RunPlan.h"

int main(int argc, char **argv) {
  return shardcheck::runPlanMain(argc, argv);
}
