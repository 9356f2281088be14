// check-sharding: thin main over the checker driver (checker/Driver.h).
#include "checker/Driver.h"

int main(int argc, char **argv) {
  return shardcheck::checkShardingMain(argc, argv);
}
