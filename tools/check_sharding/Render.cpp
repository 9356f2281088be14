// How check-sharding shows a checked file; see Render.h.
#include "tools/check_sharding/Render.h"

#include "util/Spellings.h"

#include <ostream>

namespace shardcheck::checksharding {

namespace {

nlohmann::json counterexampleJson(const std::optional<Counterexample> &c) {
  if (!c)
    return nullptr;
  nlohmann::json j;
  j["message"] = c->message;
  if (!c->rule.empty())
    j["runtime_rule"] = c->rule;
  j["bindings"] = c->bindings;
  if (c->device >= 0)
    j["device"] = c->device;
  if (!c->consumerIndex.empty())
    j["consumer_index"] = c->consumerIndex;
  if (!c->producerIndex.empty())
    j["producer_index"] = c->producerIndex;
  j["holders"] = c->holders;
  if (c->offset)
    j["offset"] = *c->offset;
  return j;
}

/// `l` as JSON, shown as `text` (`unsupported` where the verdict has none).
nlohmann::json loweringJson(const Lowering &l, const std::string &text) {
  nlohmann::json teams = nlohmann::json::array();
  for (const auto &t : l.teams) {
    nlohmann::json jt;
    jt["devices"] = t.devices;
    if (t.root)
      jt["root"] = *t.root;
    if (!t.pairs.empty())
      jt["pairs"] = t.pairs;
    teams.push_back(jt);
  }
  return {{"text", text}, {"local_permute", l.localPermute}, {"teams", teams}};
}

/// A looped statement's loop claims (EdgeVerdict::loopClaims), or null.
nlohmann::json loopClaimsJson(const std::optional<LoopClaims> &c) {
  if (!c)
    return nullptr;
  static constexpr Spelling<LoopClaims::Status> kStatuses[] = {
      {LoopClaims::Status::Proved, "proved"},
      {LoopClaims::Status::Refuted, "refuted"},
      {LoopClaims::Status::Unknown, "unknown"},
      {LoopClaims::Status::Unsupported, "unsupported"}};
  return {{"loop", c->header},
          {"status", nameIn(kStatuses, c->status)},
          {"counterexample", counterexampleJson(c->counterexample)},
          {"reason", c->reason}};
}

nlohmann::json edgeJson(size_t fusion, const EdgeVerdict &v) {
  nlohmann::json j;
  j["fusion"] = fusion;
  j["producer"] = "T" + std::to_string(v.producer);
  j["consumer"] = "T" + std::to_string(v.consumer);
  j["expr"] = v.exprName;
  j["line"] = v.loc.line;
  j["column"] = v.loc.column;
  j["communication"] = v.communicationName();
  j["status"] = edgeResultStatusName(v.result);
  j["lowering"] = loweringJson(v.lowering, v.loweringText());
  j["counterexample"] = counterexampleJson(v.counterexample);
  j["reason"] = v.reason;
  j["assumptions"] = v.assumptions;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto &s : v.steps) {
    nlohmann::json js = loweringJson(s.lowering, s.lowering.str());
    js["status"] = statusName(s.status);
    js["intermediate"] = s.intermediate;
    js["reason"] = s.reason;
    js["bytes_per_device"] = s.networkBytes;
    steps.push_back(js);
  }
  j["steps"] = steps;
  if (v.compiler) {
    const auto &c = *v.compiler;
    j["compiler"] = {{"communication", c.communicationName()},
                     {"status", compilerResultStatusName(c.result)},
                     {"source", c.source},
                     {"lowering", loweringJson(c.lowering.value_or(Lowering{}), c.loweringText())},
                     {"unnecessary", c.result == CompilerResult::Unnecessary},
                     {"counterexample", counterexampleJson(c.counterexample)},
                     {"reason", c.reason}};
  } else {
    j["compiler"] = nullptr;
  }
  j["loop_claims"] = loopClaimsJson(v.loopClaims);
  return j;
}

nlohmann::json diagnosticJson(const Diagnostic &d) {
  nlohmann::json notes = nlohmann::json::array();
  for (const auto &n : d.notes)
    notes.push_back(diagnosticJson(n));
  return {{"severity", severityName(d.severity)},
          {"code", d.code},
          {"message", d.message},
          {"line", d.loc.line},
          {"column", d.loc.column},
          {"notes", notes}};
}

/// One plan's figures: null where it has none (`unknown` says why).
nlohmann::json planBytesJson(const dtensor::PlanBytes &p, double value) {
  return p.known() ? nlohmann::json(value) : nlohmann::json(nullptr);
}

/// `dtensor_bytes`: both plans' sources, each rank's bytes and the totals.
nlohmann::json bytesSideBySideJson(const dtensor::BytesSideBySide &b) {
  auto plan = [](const dtensor::PlanBytes &p) {
    return nlohmann::json{
        {"source", p.source},
        {"unknown", p.known() ? nlohmann::json(nullptr) : nlohmann::json(p.unknownWhy)},
        {"total", planBytesJson(p, p.total())},
        {"most", planBytesJson(p, p.most())}};
  };
  nlohmann::json ranks = nlohmann::json::array();
  for (int64_t rank : b.ranks) {
    auto at = [&](const dtensor::PlanBytes &p) {
      auto it = p.perRank.find(rank);
      return planBytesJson(p, it == p.perRank.end() ? 0 : it->second);
    };
    ranks.push_back({{"rank", rank}, {"dtensor", at(b.dtensor)}, {"shardcheck", at(b.shardcheck)}});
  }
  return {{"dtensor", plan(b.dtensor)}, {"shardcheck", plan(b.shardcheck)}, {"ranks", ranks}};
}

std::string edgeName(const EdgeVerdict &v) {
  return "T" + std::to_string(v.producer) + " -> T" + std::to_string(v.consumer);
}

/// The rule id of an edge's finding by its result.
const char *edgeRule(EdgeResult result) {
  switch (result) {
  case EdgeResult::Refuted:
    return kRuleRefuted;
  case EdgeResult::Unknown:
    return kRuleUnknown;
  case EdgeResult::Unsupported:
    return kRuleUnsupported;
  case EdgeResult::Unmodelled:
    return kRuleUnmodelled;
  case EdgeResult::Proved:
    break;
  }
  return "edge";
}

/// The edge's own diagnostic: severity and code by its result.
Diagnostic edgeDiagnostic(const EdgeVerdict &v, EdgeResult result) {
  std::string head = edgeName(v) + " (" + v.exprName + "): ";
  Diagnostic d;
  d.loc = v.loc;
  switch (result) {
  case EdgeResult::Unsupported:
  case EdgeResult::Unmodelled:
    d.severity = result == EdgeResult::Unmodelled ? Severity::Warning : Severity::Error;
    d.code = "unsupported-resharding";
    d.message = head + "unsupported: " + v.reason;
    break;
  case EdgeResult::Unknown:
    d.severity = Severity::Warning;
    d.code = "unknown";
    d.message = head + v.loweringText() + " unknown: " + v.reason;
    break;
  case EdgeResult::Proved:
  case EdgeResult::Refuted:
    d.severity = Severity::Note;
    d.code = "edge";
    d.message = head + v.loweringText() + " " + edgeResultStatusName(result);
    break;
  }
  return d;
}

/// The diagnostic on the compiler's own choice for an edge.
Diagnostic compilerDiagnostic(const EdgeVerdict &v, const CompilerVerdict &c) {
  Diagnostic cd;
  cd.loc = c.loc;
  std::string what = edgeName(v) + ": " + c.source + ", " + c.loweringText() + ", is ";
  switch (c.result) {
  case CompilerResult::Unnecessary:
    cd.severity = Severity::Warning;
    cd.code = "unnecessary-communication";
    cd.message = what + "confirmed but unnecessary: the edge needs no communication";
    break;
  case CompilerResult::Confirmed:
    cd.severity = Severity::Note;
    cd.code = "compiler-confirmed";
    cd.message = what + "confirmed";
    break;
  case CompilerResult::Refuted:
    cd.severity = Severity::Error;
    cd.code = "compiler-refuted";
    cd.message = what + "refuted";
    if (c.counterexample)
      cd.addNote("counterexample: " + c.counterexample->message, c.loc);
    break;
  case CompilerResult::Unknown:
    cd.severity = Severity::Warning;
    cd.code = "compiler-unknown";
    cd.message = what + "unknown: " + c.reason;
    break;
  }
  return cd;
}

} // namespace

void FileOutput::add(Diagnostic d, bool listedInJson) {
  diagnostics.push_back(std::move(d));
  inJson.push_back(listedInJson);
}

void FileOutput::addFinding(Diagnostic d, int status, std::optional<size_t> fusion) {
  if (d.severity != Severity::Note)
    findings.push_back(findingOf(d, status, fusion));
  add(std::move(d));
}

void addEdge(size_t fusion, const EdgeVerdict &v, FileOutput &file) {
  EdgeResult result = v.result;
  bool refuted = result == EdgeResult::Refuted || result == EdgeResult::Unsupported;
  Diagnostic d = edgeDiagnostic(v, result);
  // The witness disproves "no communication"; it is a counterexample to the
  // verdict only when the edge is refuted (an unknown one has none; a
  // statement in a host loop is refuted by the iteration that fails).
  if (v.counterexample && (!hasLowering(result) || refuted || v.lowering.kind != CommKind::None))
    d.addNote((refuted ? "counterexample: " : "communication is needed: ") +
                  v.counterexample->message,
              v.loc);
  for (const auto &step : v.steps)
    d.addNote("multi-step plan: " + step.lowering.str() +
                  (step.intermediate.empty() ? "" : " via " + step.intermediate) + " " +
                  statusName(step.status) + (step.reason.empty() ? "" : ": " + step.reason),
              v.loc);
  if (!v.assumptions.empty() && result == EdgeResult::Proved) {
    std::string a;
    for (const auto &s : v.assumptions)
      a += (a.empty() ? "" : ", ") + s;
    d.addNote("proved for all sizes with " + a, v.loc);
  }
  if (result != EdgeResult::Proved)
    file.findings.push_back(
        findingOf(d, result == EdgeResult::Unknown ? 3 : 1, fusion, edgeName(v), edgeRule(result)));
  // A decided edge is listed under "edges" only; the rest are findings.
  file.add(std::move(d), result != EdgeResult::Proved && result != EdgeResult::Refuted);
  if (v.compiler) {
    Diagnostic cd = compilerDiagnostic(v, *v.compiler);
    CompilerResult cr = v.compiler->result;
    if (cr != CompilerResult::Confirmed)
      file.findings.push_back(findingOf(cd,
                                        cr == CompilerResult::Refuted   ? 1
                                        : cr == CompilerResult::Unknown ? 3
                                                                        : 0,
                                        fusion, edgeName(v)));
    file.add(std::move(cd));
  }
  file.edges.emplace_back(fusion, v);
}

namespace {

/// One fusion's report, in the order found (addDocumentReport).
void addFusionReport(const FusionReport &fr, FileOutput &r,
                     const std::function<void(const FusionReport &)> &addPlan) {
  for (const auto &d : fr.lints)
    r.addFinding(d, d.severity == Severity::Error ? 1 : 0, fr.index);
  for (const auto &v : fr.verdicts)
    addEdge(fr.index, v, r);
  for (const auto &u : fr.unchecked)
    r.addFinding(u.diagnostic, u.unknown ? 3 : 0, fr.index);
  if (addPlan)
    addPlan(fr);
  if (fr.noPlan)
    r.addFinding(Diagnostic{Severity::Error,
                            "no-plan",
                            std::string("no plan written: ") + fr.noPlan->what(),
                            fr.noPlan->loc,
                            {}},
                 1, fr.index);
  if (fr.inputError)
    r.addFinding(*fr.inputError, 1, fr.index);
  r.fusions[fr.index].readable = fr.readable();
  r.unreadable = r.unreadable || !fr.readable();
}

} // namespace

void addDocumentReport(const Document &doc, const DocumentReport &report, FileOutput &file,
                       const std::function<void(const FusionReport &)> &addPlan) {
  for (size_t i = 0; i < doc.fusions.size(); ++i)
    file.fusions.push_back(fusionEntry(i, doc.fusions[i]));
  if (report.truncated) {
    file.partial = true;
    file.addFinding(*report.truncated, 3, std::nullopt);
  }
  for (const FusionReport &fr : report.fusions)
    addFusionReport(fr, file, addPlan);
}

void addDTensorBytes(dtensor::BytesSideBySide bytes, const SourceLoc &loc, FileOutput &file) {
  file.add(dtensor::bytesSideBySideNote(bytes, loc));
  file.dtensorBytes = std::move(bytes);
}

void addUnreadableFile(Diagnostic why, FileOutput &file) {
  file.addFinding(std::move(why), 1, std::nullopt);
  file.unreadable = true;
}

nlohmann::json fileJson(const FileOutput &file) {
  nlohmann::json diags = nlohmann::json::array(), edges = nlohmann::json::array();
  for (size_t i = 0; i < file.diagnostics.size(); ++i)
    if (file.inJson[i])
      diags.push_back(diagnosticJson(file.diagnostics[i]));
  for (const auto &[fi, v] : file.edges)
    edges.push_back(edgeJson(fi, v));
  nlohmann::json j = {{"file", file.file},
                      {"readable", !file.unreadable},
                      {"partial", file.partial},
                      {"diagnostics", diags},
                      {"edges", edges}};
  if (file.dtensorBytes)
    j["dtensor_bytes"] = bytesSideBySideJson(*file.dtensorBytes);
  return j;
}

void printFileText(std::ostream &out, std::ostream &err, const FileOutput &file, bool quiet) {
  for (const auto &d : file.diagnostics) {
    if (quiet && d.severity == Severity::Note)
      continue;
    printDiagnostic(d.severity == Severity::Error && file.unreadable ? err : out, d);
  }
}

} // namespace shardcheck::checksharding
