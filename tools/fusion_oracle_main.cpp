// fusion-oracle: the end-to-end oracle over random fusions (tests/oracle/).
//
//   fusion-oracle [--seed S] [--count N] [--resume FILE] [--progress]
//                 [--no-minimize] [--report-dir DIR] [--timeout-ms N] [--dtensor]
//                 [--loops]
//   fusion-oracle --summarize STATE...
//
// --loops draws looped host programs instead (checker/bruteforce/RandomLoops.h:
// an Allgather per stream iteration, right loops and wrong ones, and
// CollectivePermute rings with right and wrong peers), planned with their
// loops; they are not minimized.
//
// Runs fusions with seeds S .. S+N-1 (default 1 and 1000): each is generated,
// checked, planned and run exactly on simulated devices (Oracle.h says what
// must hold). The first fusion of every violation class is minimized and its
// report (seed, fusion in nvFuser's dump style, verdicts, runs) printed; with
// --report-dir also written to DIR/<class>.txt as a reproducer check-sharding
// reads as is (comment lines, then the dump). At the end it prints the
// counts by outcome, construct and violation class.
//
// --dtensor draws random DTensor redistributes instead
// (tests/oracle/RandomDTensor.h): seed S is a document; its transition and
// DTensor's sequence as the model of its plan issues it are each checked,
// planned and run (nothing to minimize: the report shows the document).
//
// --resume FILE keeps the run's state in FILE (rewritten every 25 fusions,
// and on SIGINT/SIGTERM): started again with the same FILE, seed and count,
// it continues where it stopped; the reports go to FILE.violations too.
// --progress prints a status line to stderr every 10 seconds.
// --summarize merges the counts of several state files (the workers of
// bench/fusion_oracle.sh) and prints them.
//
// Exit status: 0 no violation; 1 violations; 2 bad usage or a state file
// that does not belong to this run; 130 interrupted (state saved).
//
// This main parses arguments and keeps state; it decides nothing itself.
#include "checker/bruteforce/RandomLoops.h"
#include "ir/reader/DumpReader.h"
#include "tests/oracle/Oracle.h"
#include "tests/oracle/OracleTally.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace shardcheck;
using namespace shardcheck::oracle;

namespace {

std::atomic<bool> gStop{false};

void onSignal(int) {
  gStop = true;
}

struct Args {
  uint64_t seed = 1;
  int64_t count = 1000;
  std::string resume;
  std::string reportDir;
  bool progress = false;
  bool minimize = true;
  bool dtensor = false;
  bool loops = false; ///< Random looped host programs (--loops).
  unsigned timeoutMs = 20000;
  std::vector<std::string> summarize; ///< State files to merge and print.
};

[[noreturn]] void usage(const std::string &why) {
  std::cerr
      << "fusion-oracle: " << why
      << "\nusage: fusion-oracle [--seed S] [--count N] [--resume FILE] [--progress]\n"
         "                     [--no-minimize] [--report-dir DIR] [--timeout-ms N] [--dtensor]\n"
         "                     [--loops]\n"
         "       fusion-oracle --summarize STATE...\n";
  std::exit(2);
}

uint64_t number(const std::string &flag, const char *text) {
  try {
    size_t used = 0;
    unsigned long long v = std::stoull(text, &used);
    if (used == std::string(text).size())
      return v;
  } catch (const std::exception &) {
  }
  usage(flag + " takes a non-negative integer, not '" + text + "'");
}

Args parseArgs(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        usage(f + " needs a value");
      return argv[++i];
    };
    if (f == "--seed")
      a.seed = number(f, value());
    else if (f == "--count")
      a.count = static_cast<int64_t>(number(f, value()));
    else if (f == "--resume")
      a.resume = value();
    else if (f == "--report-dir")
      a.reportDir = value();
    else if (f == "--timeout-ms")
      a.timeoutMs = static_cast<unsigned>(number(f, value()));
    else if (f == "--progress")
      a.progress = true;
    else if (f == "--no-minimize")
      a.minimize = false;
    else if (f == "--dtensor")
      a.dtensor = true;
    else if (f == "--loops")
      a.loops = true;
    else if (f == "--summarize")
      for (++i; i < argc; ++i)
        a.summarize.push_back(argv[i]);
    else
      usage("unknown argument '" + f + "'");
  }
  return a;
}

/// The resumable state: where the run is and what it counted so far.
struct State {
  int64_t next = 0; ///< Fusions done.
  OracleTally tally;
};

std::string stateText(const Args &a, const State &s) {
  std::ostringstream os;
  os << "# fusion-oracle state\nfirst-seed " << a.seed << "\ncount " << a.count << "\nnext "
     << s.next << "\n"
     << s.tally.serialize();
  return os.str();
}

void saveState(const Args &a, const State &s) {
  if (a.resume.empty())
    return;
  std::string tmp = a.resume + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << stateText(a, s);
  }
  std::filesystem::rename(tmp, a.resume);
}

/// Reads a state file: first seed, count, fusions done and the tally.
struct StateFile {
  uint64_t firstSeed = 0;
  int64_t count = -1;
  State state;
};

StateFile readStateFile(const std::string &path) {
  StateFile f;
  std::ifstream in(path);
  if (!in)
    usage("cannot read " + path);
  std::string line;
  std::ostringstream tally;
  try {
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string key, value, extra;
      ls >> key >> value;
      // The run's own lines have two words; tally lines (`count KEY N`) more.
      bool own = !(ls >> extra);
      if (own && key == "first-seed")
        f.firstSeed = std::stoull(value);
      else if (own && key == "count")
        f.count = std::stoll(value);
      else if (own && key == "next")
        f.state.next = std::stoll(value);
      else
        tally << line << "\n";
    }
  } catch (const std::exception &) {
    usage(path + ": bad line '" + line + "'");
  }
  try {
    f.state.tally = OracleTally::parse(tally.str());
  } catch (const std::exception &e) {
    usage(path + ": " + e.what());
  }
  return f;
}

State loadState(const Args &a) {
  if (a.resume.empty() || !std::filesystem::exists(a.resume))
    return State{};
  StateFile f = readStateFile(a.resume);
  if (f.firstSeed != a.seed || f.count != a.count)
    usage(a.resume + " holds a run of seed " + std::to_string(f.firstSeed) + " count " +
          std::to_string(f.count) + ", not seed " + std::to_string(a.seed) + " count " +
          std::to_string(a.count));
  return f.state;
}

/// --summarize: the merged counts of several runs.
int summarize(const std::vector<std::string> &paths) {
  OracleTally merged;
  int64_t done = 0, planned = 0;
  for (const std::string &p : paths) {
    StateFile f = readStateFile(p);
    merged.merge(f.state.tally);
    done += f.state.next;
    planned += f.count;
    std::cout << p << ": seeds " << f.firstSeed << " .., " << f.state.next << " of " << f.count
              << " fusions done\n";
  }
  std::cout << "merged: " << done << " of " << planned << " fusions\n" << merged.summary();
  return merged.violationCount() == 0 ? 0 : 1;
}

std::string fileNameOf(std::string kind) {
  for (char &c : kind)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
      c = '_';
  return kind + ".txt";
}

/// Minimizes the first fusion of a new violation class and prints its report.
void reportNewClass(Oracle &oracle, const Args &a, const OracleResult &r, const Violation &v) {
  OracleResult shown = r;
  bool minimize = a.minimize && !a.dtensor && !a.loops;
  if (minimize)
    shown = oracle.run(oracle.minimize(r.spec, v.kind));
  std::string text = "=== violation class " + v.kind + " (first at seed " +
                     std::to_string(r.spec.seed) + (minimize ? ", minimized" : "") + ") ===\n" +
                     describeResult(shown) + "\n";
  std::cout << text << std::flush;
  if (!a.resume.empty())
    std::ofstream(a.resume + ".violations", std::ios::app) << text;
  if (!a.reportDir.empty()) {
    std::filesystem::create_directories(a.reportDir);
    std::ofstream(std::filesystem::path(a.reportDir) / fileNameOf(v.kind))
        << reproducerText(shown, v.kind);
  }
}

void printProgress(const Args &a, const State &s, int64_t doneHere, double seconds) {
  double rate = seconds > 0 ? doneHere / seconds : 0;
  double eta = rate > 0 ? (a.count - s.next) / rate : 0;
  const OracleTally &t = s.tally;
  std::fprintf(stderr,
               "fusion-oracle: %lld/%lld (%.1f%%), %.1f fusions/s, ETA %.0f min: matched %lld, "
               "not proved %lld, compiler confirmed+matched %lld, refuted+failed %lld; "
               "violations %lld in %zu classes\n",
               static_cast<long long>(s.next), static_cast<long long>(a.count),
               a.count ? 100.0 * s.next / a.count : 100.0, rate, eta / 60,
               static_cast<long long>(t.count("checker:matched")),
               static_cast<long long>(t.count("checker:not-proved")),
               static_cast<long long>(t.count("compiler:confirmed-matched")),
               static_cast<long long>(t.count("compiler:refuted-failed") +
                                      t.count("compiler:refuted-wrong-values")),
               static_cast<long long>(t.violationCount()), t.violations().size());
}

} // namespace

int main(int argc, char **argv) {
  Args a = parseArgs(argc, argv);
  if (!a.summarize.empty())
    return summarize(a.summarize);
  State s = loadState(a);
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  OracleOptions options;
  options.timeoutMs = a.timeoutMs;
  Oracle oracle(options);
  const auto start = std::chrono::steady_clock::now();
  auto lastPrint = start;
  const int64_t firstHere = s.next;
  while (s.next < a.count && !gStop) {
    uint64_t seed = a.seed + static_cast<uint64_t>(s.next);
    std::vector<OracleResult> results;
    if (a.dtensor)
      results = oracle.runDTensor(seed);
    else if (a.loops) {
      bruteforce::RandomLoopCase c = bruteforce::randomLoop(seed);
      results.push_back(oracle.run(readDocument(c.text, "loop-oracle.txt").fusions.at(0)));
      if (c.ringRight) // A ring: judged by the generator's own run of it too.
        judgeRing(*c.ringRight, results.back());
    } else
      results.push_back(oracle.run(randomFusion(seed)));
    for (OracleResult &r : results) {
      r.spec.seed = seed; // Names a looped program's seed in reports too.
      for (const Violation &v : r.violations)
        if (!s.tally.violations().count(v.kind))
          reportNewClass(oracle, a, r, v);
      s.tally.add(r);
    }
    ++s.next;
    if (s.next % 25 == 0)
      saveState(a, s);
    auto now = std::chrono::steady_clock::now();
    if (a.progress && now - lastPrint > std::chrono::seconds(10)) {
      printProgress(a, s, s.next - firstHere, std::chrono::duration<double>(now - start).count());
      lastPrint = now;
    }
  }
  saveState(a, s);
  if (a.progress)
    printProgress(a, s, s.next - firstHere,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (gStop) {
    std::cerr << "fusion-oracle: interrupted after " << s.next << " fusions; state saved"
              << (a.resume.empty() ? " nowhere (no --resume)" : " in " + a.resume) << "\n";
    return 130;
  }
  std::cout << "seeds " << a.seed << " .. " << a.seed + static_cast<uint64_t>(a.count) - 1 << "\n"
            << s.tally.summary();
  return s.tally.violationCount() == 0 ? 0 : 1;
}
