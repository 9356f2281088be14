// check-sharding's summary; see Summary.h.
#include "tools/check_sharding/Summary.h"

#include <ostream>

namespace shardcheck::checksharding {

void Summary::addDocument(const DocumentReport &report) {
  ++files;
  unreadable += !report.readable();
  if (report.truncated) {
    ++partialFiles;
    addFinding(*report.truncated);
  }
  for (const FusionReport &f : report.fusions)
    addFusion(f);
}

void Summary::add(const Summary &o) {
  using Count = std::pair<size_t *, size_t>;
  for (auto [mine, theirs] : std::initializer_list<Count>{{&files, o.files},
                                                          {&fusions, o.fusions},
                                                          {&edges, o.edges},
                                                          {&proved, o.proved},
                                                          {&refuted, o.refuted},
                                                          {&unknown, o.unknown},
                                                          {&unsupported, o.unsupported},
                                                          {&none, o.none},
                                                          {&alias, o.alias},
                                                          {&collectives, o.collectives},
                                                          {&compilerConfirmed, o.compilerConfirmed},
                                                          {&compilerRefuted, o.compilerRefuted},
                                                          {&compilerUnknown, o.compilerUnknown},
                                                          {&unnecessary, o.unnecessary},
                                                          {&lintErrors, o.lintErrors},
                                                          {&lintWarnings, o.lintWarnings},
                                                          {&unreadable, o.unreadable},
                                                          {&partialFiles, o.partialFiles},
                                                          {&uncheckedTensors, o.uncheckedTensors}})
    *mine += theirs;
  assumptions.insert(o.assumptions.begin(), o.assumptions.end());
}

void Summary::addUnreadableFile(const Diagnostic &why) {
  ++files;
  ++unreadable;
  addFinding(why);
}

void Summary::addFusion(const FusionReport &f) {
  ++fusions;
  for (const auto &d : f.lints)
    addFinding(d);
  for (const auto &v : f.verdicts)
    addVerdict(v);
  for (const auto &u : f.unchecked)
    uncheckedTensors += u.unknown;
  lintErrors += f.noPlan.has_value();
  if (f.inputError)
    addFinding(*f.inputError);
}

void Summary::addFinding(const Diagnostic &d) {
  lintErrors += d.severity == Severity::Error;
  lintWarnings += d.severity == Severity::Warning;
}

void Summary::addVerdict(const EdgeVerdict &v) {
  ++edges;
  switch (v.result) {
  case EdgeResult::Unsupported:
  case EdgeResult::Unmodelled:
    ++unsupported;
    break;
  case EdgeResult::Proved:
    ++proved;
    if (!v.steps.empty())
      ++collectives; // A multi-step plan's steps are collectives.
    else if (v.lowering.kind == CommKind::None)
      ++none;
    else if (v.lowering.kind == CommKind::Alias)
      ++alias;
    else
      ++collectives;
    assumptions.insert(v.assumptions.begin(), v.assumptions.end());
    break;
  case EdgeResult::Refuted:
    ++refuted;
    break;
  case EdgeResult::Unknown:
    ++unknown;
    break;
  }
  if (!v.compiler)
    return;
  switch (v.compiler->result) {
  case CompilerResult::Unnecessary:
    ++unnecessary;
    [[fallthrough]];
  case CompilerResult::Confirmed:
    ++compilerConfirmed;
    break;
  case CompilerResult::Refuted:
    ++compilerRefuted;
    break;
  case CompilerResult::Unknown:
    ++compilerUnknown;
    break;
  }
}

nlohmann::json summaryJson(const Summary &s, const CheckStats &stats, NvfuserRuntime runtime) {
  return {{"files", s.files},
          {"nvfuser_runtime", nvfuserRuntimeName(runtime)},
          {"fusions", s.fusions},
          {"edges", s.edges},
          {"proved", s.proved},
          {"refuted", s.refuted},
          {"unknown", s.unknown},
          {"unsupported", s.unsupported},
          {"none", s.none},
          {"alias", s.alias},
          {"collectives", s.collectives},
          {"compiler_confirmed", s.compilerConfirmed},
          {"compiler_refuted", s.compilerRefuted},
          {"compiler_unknown", s.compilerUnknown},
          {"unnecessary_communication", s.unnecessary},
          {"lint_errors", s.lintErrors},
          {"lint_warnings", s.lintWarnings},
          {"unreadable_files", s.unreadable},
          {"partial_files", s.partialFiles},
          {"unchecked_tensors", s.uncheckedTensors},
          {"assumptions", s.assumptions},
          {"edge_cache_hits", stats.edgeCacheHits},
          {"smt_queries", stats.solver.queries},
          {"smt_cache_hits", stats.solver.cacheHits}};
}

int exitStatus(const Summary &s) {
  if (s.unreadable)
    return 2;
  if (s.lintErrors || s.compilerRefuted || s.unsupported || s.refuted)
    return 1;
  if (s.unknown || s.compilerUnknown || s.uncheckedTensors || s.partialFiles)
    return 3;
  return 0;
}

void printSummaryText(std::ostream &out, const Summary &s, const CheckStats &stats,
                      NvfuserRuntime runtime) {
  out << "summary: " << s.files << " file(s), " << s.fusions << " fusion(s), " << s.edges
      << " edge(s): " << s.proved << " proved (" << s.none << " none, " << s.alias << " alias, "
      << s.collectives << " collective), " << s.refuted << " refuted, " << s.unknown << " unknown, "
      << s.unsupported << " unsupported; compiler choices: " << s.compilerConfirmed
      << " confirmed (" << s.unnecessary << " unnecessary), " << s.compilerRefuted << " refuted, "
      << s.compilerUnknown << " unknown; lints: " << s.lintErrors << " error(s), " << s.lintWarnings
      << " warning(s)";
  if (s.compilerConfirmed || s.compilerRefuted || s.compilerUnknown)
    out << " (compiler choices checked against nvFuser's " << nvfuserRuntimeName(runtime)
        << " runtime rules)";
  if (s.uncheckedTensors)
    out << "; " << s.uncheckedTensors << " tensor(s) no checked edge computes";
  if (s.unreadable)
    out << "; " << s.unreadable << " unreadable input(s)";
  if (s.partialFiles)
    out << "; " << s.partialFiles << " truncated input(s) checked only as far as they go";
  out << "\n";
  if (!s.assumptions.empty()) {
    out << "proofs cover all sizes with:";
    for (const auto &a : s.assumptions)
      out << " " << a << ";";
    out << "\n";
  }
  out << "solver: " << stats.solver.queries << " queries (" << stats.solver.cacheHits
      << " answered from cache), " << stats.edgeCacheHits
      << " edges decided by an identical edge\n";
}

} // namespace shardcheck::checksharding
