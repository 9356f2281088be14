// Checker throughput on distinct edges: the random-edge generator's mix
// (checker/bruteforce/RandomEdges.h), each case a one-edge fusion checked by
// one Checker as check-sharding checks the fusions of a file (one query
// cache; the structural edge cache off, so every edge is decided anew).
//
//   edge-throughput [EDGES] [SEED]      (defaults 2000, 1)
//
// Prints edges per second (wall and CPU), solver work, the verdict mix and
// the reasons of unknown verdicts. It does not compare verdicts with anything
// (tests/crosscheck_test.cpp does).
#include "checker/Checker.h"
#include "checker/bruteforce/RandomEdges.h"
#include "util/Diagnostics.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>

using namespace shardcheck;

int main(int argc, char **argv) {
  long edges = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2000;
  unsigned long seed = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1;
  if (edges <= 0 || edges > 10'000'000) {
    std::fprintf(stderr, "usage: edge-throughput [EDGES (1..10^7)] [SEED]\n");
    return 2;
  }
  bruteforce::RandomEdgeGenerator gen(seed);
  std::vector<bruteforce::RandomEdgeCase> cases;
  for (long i = 0; i < edges; ++i)
    cases.push_back(gen.next());

  CheckOptions options;
  options.useEdgeCache = false;
  if (const char *dir = std::getenv("EDGE_THROUGHPUT_SMT_DUMP"))
    options.smtDumpDir = dir;
  Checker checker(options);
  std::map<std::string, long> mix;
  std::map<std::string, long> unknownReasons; // A solver's "unknown" is listed apart.
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpuStart = std::clock(); // CPU time: the machine may be shared.
  for (const auto &c : cases) {
    DiagnosticEngine diags;
    auto graph = FusionGraph::build(c.fusion, diags);
    if (!graph)
      continue;
    for (const auto &v : checker.checkFusion(c.fusion, *graph)) {
      ++mix[edgeResultStatusName(v.result)];
      if (v.result == EdgeResult::Unknown || v.result == EdgeResult::Unmodelled)
        ++unknownReasons[v.reason.substr(0, 60)];
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  const auto &st = checker.stats();
  std::printf("edges %llu in %.2f s: %.0f edges/s (%.2f s CPU: %.0f edges per CPU second)\n",
              static_cast<unsigned long long>(st.edges), s, static_cast<double>(st.edges) / s, cpu,
              static_cast<double>(st.edges) / cpu);
  std::printf("queries %llu, from cache %llu, solved %llu (sat %llu, unsat %llu, unknown %llu)\n",
              static_cast<unsigned long long>(st.solver.queries),
              static_cast<unsigned long long>(st.solver.cacheHits),
              static_cast<unsigned long long>(st.solver.queries - st.solver.cacheHits),
              static_cast<unsigned long long>(st.solver.sat),
              static_cast<unsigned long long>(st.solver.unsat),
              static_cast<unsigned long long>(st.solver.unknown));
  for (const auto &[status, n] : mix)
    std::printf("  %-12s %ld\n", status.c_str(), n);
  for (const auto &[reason, n] : unknownReasons)
    std::printf("    unknown: %ld x %s\n", n, reason.c_str());
  std::vector<std::pair<double, std::string>> byTime;
  for (const auto &[name, q] : st.solver.solvedByName)
    byTime.push_back({q.milliseconds, name});
  std::sort(byTime.rbegin(), byTime.rend());
  std::printf("sat by model search %llu (models rejected by the query as built: %llu)\n",
              static_cast<unsigned long long>(st.solver.satBySearch),
              static_cast<unsigned long long>(st.solver.searchModelsRejected));
  std::printf("solver CPU time by query (ms, solved, sat, sat by model search):\n");
  for (const auto &[ms, name] : byTime) {
    const auto &q = st.solver.solvedByName.at(name);
    std::printf("  %9.1f %6llu %6llu %6llu  %s\n", ms, static_cast<unsigned long long>(q.count),
                static_cast<unsigned long long>(q.sat), static_cast<unsigned long long>(q.bySearch),
                name.c_str());
  }
  return 0;
}
