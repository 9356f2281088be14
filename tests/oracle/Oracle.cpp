// The end-to-end fusion oracle; see Oracle.h.
//
// Structure: run() checks a fusion, then runCheckerPlan and runCompilerPlan
// each build one plan and run it through tryRun, which turns a run into an
// Attempt (matched or not, the outcome, the op to blame, one line for the
// log). minimize() is a greedy loop over candidate edits of the spec.
#include "tests/oracle/Oracle.h"

#include "ir/RingPermute.h"

#include "ir/HostLoops.h"

#include "checker/PlanBuilder.h"
#include "checker/PlanChain.h"
#include "executor/Random.h"
#include "executor/Reference.h"
#include "executor/core/RunSupport.h"
#include "executor/sim/SimBackend.h"
#include "ir/Printer.h"
#include "ir/reader/DumpReader.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace shardcheck::oracle {

namespace {

bool edgeProved(const EdgeVerdict &v) {
  return v.result == EdgeResult::Proved;
}

/// The widest input range, a power of two up to `widest`, whose values every
/// tensor of the fusion computes exactly in double (valueBound below 2^53);
/// 0 when only the narrow one does.
int wideRangeFor(const FusionSpec &spec, int widest, int narrow) {
  for (int r = widest; r > narrow; r /= 2)
    if (valueBound(spec, r) < 9.007e15)
      return r;
  return 0;
}

std::string edgeName(const EdgeVerdict &v) {
  return "T" + std::to_string(v.producer) + " -> T" + std::to_string(v.consumer);
}

/// `Allgather+permute`, `Allgather+pad`: a verdict's communication
/// (`unsupported` when it has no lowering) and how it is laid out.
std::string kindName(const char *communication, const Lowering *l) {
  return std::string(communication) + (!l                ? ""
                                       : l->padded       ? "+pad"
                                       : l->localPermute ? "+permute"
                                                         : "");
}

/// `multi-step+pad`: a multi-step plan with a padded step (uneven states).
std::string kindName(const EdgeVerdict &v) {
  bool paddedStep = std::any_of(v.steps.begin(), v.steps.end(),
                                [](const PlannedStep &s) { return s.lowering.padded; });
  if (hasProvedPlan(v) && paddedStep)
    return std::string(v.communicationName()) + "+pad";
  return kindName(v.communicationName(), &v.lowering);
}

std::string kindName(const CompilerVerdict &c) {
  return kindName(c.communicationName(), c.lowering ? &*c.lowering : nullptr);
}

/// A message as a class key: its words of two or more letters (tensor
/// names, numbers and sizes dropped), lower case, joined by '-', at most 60
/// characters.
std::string slug(const std::string &message) {
  std::string text = message;
  if (size_t at = text.find("error: "); at != std::string::npos)
    text = text.substr(at + 7);
  std::string out, word;
  auto flush = [&] {
    if (word.size() >= 2)
      out += (out.empty() ? "" : "-") + word;
    word.clear();
  };
  for (char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c)))
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!std::isdigit(static_cast<unsigned char>(c)))
      flush();
    else
      word.clear(); // `T12`: a name, not a word.
  }
  flush();
  return out.substr(0, 60);
}

/// `preferred` (restricted to the plan's symbols) when it satisfies the
/// plan's constraints, else small sizes that do.
std::optional<Bindings> bindingsFor(const Plan &plan, const Bindings &preferred) {
  Bindings b;
  for (const std::string &s : planSymbols(plan))
    if (auto it = preferred.find(s); it != preferred.end())
      b[s] = it->second;
  try {
    return checkedBindings(plan, b);
  } catch (const InputError &) {
    return satisfyingBindings(plan, {});
  }
}

/// One run of a plan, judged.
struct Attempt {
  bool matched = false;
  std::string outcome; ///< `match`, `wrong-values`, `count-error`, `plan-error`, `threw`.
  std::string culprit; ///< The op (and its lowerings) of the first failure.
  std::string line;
};

/// `Matmul/Allreduce`: the op of expression `e` and the lowerings of its
/// edges that move data (`local` when none does).
std::string culpritOf(const Fusion &f, const std::vector<EdgeVerdict> &verdicts, size_t e,
                      bool compiler) {
  std::set<std::string> kinds;
  for (const EdgeVerdict &v : verdicts) {
    if (v.expr != e)
      continue;
    bool useCompiler = compiler && v.compiler;
    if (std::string(useCompiler ? v.compiler->communicationName() : v.communicationName()) !=
        commKindName(CommKind::None))
      kinds.insert(useCompiler ? kindName(*v.compiler) : kindName(v));
  }
  std::string s = std::string(opKindName(f.exprs[e].kind)) + "/";
  if (kinds.empty())
    return s + "local";
  bool first = true;
  for (const std::string &k : kinds) {
    s += (first ? "" : "+") + k;
    first = false;
  }
  return s;
}

/// Runs `plan` once on the sim backend with exact integer inputs.
Attempt tryRun(const Plan &plan, const std::vector<EdgeVerdict> &verdicts, const Bindings &b,
               uint64_t seed, bool indexed, bool allowUnverified, int range) {
  RunOptions o;
  o.symbols = b;
  o.seed = seed;
  o.allowUnverified = allowUnverified;
  o.indexedCompute = indexed;
  o.integerInputs = range;
  o.exactComparison = true;
  Attempt a;
  RunReport r;
  try {
    SimBackend sim;
    r = runPlan(plan, o, sim);
  } catch (const std::exception &e) {
    a.outcome = "threw";
    a.culprit = slug(e.what());
    a.line = std::string("run threw: ") + e.what();
    return a;
  }
  a.matched = r.matches();
  a.outcome = r.outcome();
  a.line = std::string(indexed ? "indexed compute, " : "") + describeRun(r);
  const bool compiler = plan.lowerings == "compiler";
  if (r.failure) {
    const PlanStep &step = plan.steps[r.failure->step];
    a.culprit = step.expr ? culpritOf(plan.fusion, verdicts, *step.expr, compiler) : "step";
  } else {
    for (const TensorCheck &t : r.tensors)
      if (!t.comparison.matches()) {
        const Expr *e = plan.fusion.producerExpr(t.comparison.tensor);
        a.culprit = e ? culpritOf(plan.fusion, verdicts,
                                  static_cast<size_t>(e - plan.fusion.exprs.data()), compiler)
                      : "input";
        break;
      }
  }
  return a;
}

std::vector<std::string> stepLines(const Plan &plan) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    lines.push_back("  step " + std::to_string(i) + ": " + describeStep(plan, plan.steps[i]) +
                    (plan.steps[i].verified() ? "" : "  [unverified]"));
  return lines;
}

PlanRequest planRequest(const FusionSpec &spec, PlanRequest::Lowerings lowerings) {
  PlanRequest request;
  request.lowerings = lowerings;
  request.inputFile = "oracle-seed-" + std::to_string(spec.seed);
  request.inputText = request.inputFile;
  return request;
}

/// `Allreduce(Communication)`: the compiler's lowering and where it came from.
std::string compilerName(const EdgeVerdict &v, const Fusion &f) {
  const Expr &e = f.exprs[v.expr];
  return kindName(*v.compiler) + "(" + opKindName(e.kind) + ")";
}

/// Whether `v`'s compiler choice is refuted for counting a producer element
/// more than once (lowering-partials-exact-once: several holders) in a max
/// or min, whose values the duplicate cannot change: running it cannot show
/// the refutation, which stands on the exactly-once contract.
bool countsTwiceUnderIdempotentOp(const Fusion &f, const EdgeVerdict &v) {
  const auto &cex = v.compiler->counterexample;
  std::optional<ReduceOp> op = reduceOpOf(f.exprs[v.expr]);
  return cex && cex->holders.size() >= 2 && (op == ReduceOp::Max || op == ReduceOp::Min);
}

/// Runs `plan` with every match seed (the second computes from index maps);
/// the first run that does not match, logged into `r`.
std::optional<Attempt> firstMismatch(const OracleOptions &o, const Plan &plan, OracleResult &r,
                                     const Bindings &b) {
  for (size_t i = 0; i < o.matchSeeds.size(); ++i) {
    Attempt a = tryRun(plan, r.verdicts, b, o.matchSeeds[i], i % 2 == 1, false, o.integerRange);
    r.runLog.push_back("  run: " + a.line);
    if (!a.matched)
      return a;
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> chainMismatch(const Fusion &original, const Fusion &chained,
                                         const Bindings &symbols, uint64_t seed, int range) {
  auto inputs = randomInputs(original, symbols, seed, range);
  ReferenceResult want = evaluateReference(original, inputs, symbols);
  ReferenceResult got = evaluateReference(chained, inputs, symbols);
  for (const auto &[t, value] : want.values) {
    auto it = got.values.find(t);
    if (it == got.values.end() || it->second.shape() != value.shape() ||
        it->second.data() != value.data())
      return original.tensor(t).name() + " differs in the chained fusion";
  }
  return std::nullopt;
}

Oracle::Oracle(OracleOptions options)
    : options_(std::move(options)), checker_([&] {
        CheckOptions c;
        c.timeoutMs = options_.timeoutMs;
        return c;
      }()) {}

OracleResult Oracle::run(const FusionSpec &spec) {
  OracleResult r;
  r.spec = spec;
  // The fusion as check-sharding reads its printed dump: what is checked is
  // exactly what a report shows.
  try {
    Document doc = readDocument(printFusion(buildFusion(spec)), "oracle-seed.txt");
    SC_ASSERT(doc.fusions.size() == 1, "a printed fusion reads back as one fusion");
    r.fusion = std::move(doc.fusions[0]);
  } catch (const std::exception &e) {
    r.fusion = buildFusion(spec);
    r.checkerOutcome = "error";
    r.violations.push_back({"oracle-error:reader:" + slug(e.what()), e.what()});
    return r;
  }
  judge(r);
  return r;
}

OracleResult Oracle::run(Fusion fusion) {
  OracleResult r;
  r.fusion = std::move(fusion);
  judge(r);
  return r;
}

namespace {

/// `<mutation>:<padded|plain>:` of a draw's wrong sequence.
std::string wrongKey(const DTensorDraw &draw) {
  return draw.wrongMutation + ":" + (draw.wrongPadded ? "padded" : "plain") + ":";
}

/// The verdict on the wrong collective of DTensor's wrong sequence (its
/// step's Communication), into `r.dtensorWrong`; confirmed is a violation.
void judgeWrongCollective(OracleResult &r, const DTensorDraw &draw) {
  std::string outcome = "not-a-collective"; // The mapping made the step a plain edge.
  for (const EdgeVerdict &v : r.verdicts) {
    const Expr &e = r.fusion.exprs[v.expr];
    if (e.kind == OpKind::Communication && e.communication &&
        e.communication->number == draw.wrongStep && v.compiler)
      outcome = compilerResultStatusName(v.compiler->result);
  }
  r.dtensorWrong = wrongKey(draw) + outcome;
  if (outcome == "confirmed")
    r.violations.push_back({"dtensor-wrong-confirmed:" + draw.wrongMutation,
                            "DTensor's sequence with " + draw.wrongMutation + " at step " +
                                std::to_string(draw.wrongStep) + " is confirmed"});
}

/// The keys of `r` (a result of a draw with a nested uneven shard) in the
/// tally's nested-uneven section: its role, checker outcome, compiler
/// choices and, for the wrong sequence, the wrong collective's verdict.
void tagNested(OracleResult &r, const std::string &role) {
  r.dtensorNested.push_back(role + ":" + r.checkerOutcome);
  for (const std::string &c : r.compilerChoices)
    r.dtensorNested.push_back(role + ":choice:" + c);
  if (!r.dtensorWrong.empty())
    r.dtensorNested.push_back("wrong-collective:" + r.dtensorWrong);
}

} // namespace

std::vector<OracleResult> Oracle::runDTensor(uint64_t seed) {
  DTensorDraw draw = randomDTensor(seed);
  std::vector<OracleResult> results;
  auto rejected = [&](const std::string &outcome) {
    OracleResult r;
    r.spec.seed = seed;
    r.checkerOutcome = outcome;
    return r;
  };
  if (!draw.rejected.empty())
    results.push_back(rejected("dtensor-rejected"));
  if (!draw.wrongRejected.empty()) {
    results.push_back(rejected("dtensor-wrong-rejected"));
    results.back().dtensorWrong = wrongKey(draw) + "rejected";
  }
  for (size_t i = 0; i < draw.fusions.size(); ++i) {
    const bool wrong = static_cast<int>(i) == draw.wrongFusion;
    OracleResult r = run(draw.fusions[i]);
    r.spec.seed = seed;
    r.runLog.insert(r.runLog.begin(),
                    {"  DTensor document: " + draw.document,
                     "  fusion " + std::to_string(i) + ": " +
                         (i == 0  ? std::string("the transition")
                          : wrong ? draw.sequence + " with " + draw.wrongMutation + " at step " +
                                        std::to_string(draw.wrongStep)
                                  : draw.sequence)});
    if (wrong)
      judgeWrongCollective(r, draw);
    if (draw.nestedUneven)
      tagNested(r, i == 0 ? "transition" : wrong ? "wrong" : "sequence");
    results.push_back(std::move(r));
  }
  if (draw.nestedUneven && !results.empty()) {
    if (!draw.wrongRejected.empty())
      results.front().dtensorNested.push_back("wrong-collective:" + wrongKey(draw) + "rejected");
    if (!draw.uniformCounts.empty())
      results.front().dtensorNested.push_back("uniform-counts:" + draw.uniformCounts);
    if (draw.uniformCounts == "mapped")
      results.front().violations.push_back(
          {"dtensor-uniform-counts-mapped",
           "DTensor's sequence with the uniform padding DTensor does not do is mapped"});
    results.front().dtensorNested.push_back(
        "sequence-mapped:" + std::string(draw.fusions.size() > 1            ? "yes"
                                         : draw.sequence == kNoRedistribute ? "no-steps"
                                                                            : "no"));
  }
  return results;
}

void Oracle::judge(OracleResult &r) {
  DiagnosticEngine diags;
  std::optional<FusionGraph> graph = FusionGraph::build(r.fusion, diags);
  if (!graph) {
    r.checkerOutcome = "error";
    r.violations.push_back({"oracle-error:graph", "the generated fusion's graph does not build"});
    return;
  }
  try {
    r.verdicts = checker_.checkFusion(r.fusion, *graph);
  } catch (const std::exception &e) {
    r.checkerOutcome = "error";
    r.violations.push_back({"checker-threw", e.what()});
    return;
  }
  runCheckerPlan(r, *graph);
  runCompilerPlan(r, *graph);
}

/// Whether a looped statement's loop claims (EdgeVerdict::loopClaims) are
/// not proved, or, for a looped Communication, its compiler choice is not
/// confirmed, whatever its one iteration's edge proved
/// (checker/PlanBuilder.cpp rests the loop step on the same). A read view
/// has no claims of its own: its statement's carry them.
bool loopClaimsUnproved(const Fusion &f, const EdgeVerdict &v) {
  const Expr &e = f.exprs[v.expr];
  if (!isInHostLoop(e) || isSliceView(e))
    return false;
  if (!v.loopClaims || v.loopClaims->status != LoopClaims::Status::Proved)
    return true;
  return e.kind == OpKind::Communication &&
         (!v.compiler || (v.compiler->result != CompilerResult::Confirmed &&
                          v.compiler->result != CompilerResult::Unnecessary));
}

void Oracle::runCheckerPlan(OracleResult &r, const FusionGraph &graph) {
  if (!std::all_of(r.verdicts.begin(), r.verdicts.end(), edgeProved) ||
      std::any_of(r.verdicts.begin(), r.verdicts.end(),
                  [&](const EdgeVerdict &v) { return loopClaimsUnproved(r.fusion, v); })) {
    r.checkerOutcome = "not-proved";
    return;
  }
  Plan plan;
  // Multi-step plans run as their chains of proved steps (checker/PlanChain.h).
  std::optional<ChainedFusion> chained;
  try {
    chained = chainPlannedEdges(r.fusion, graph, r.verdicts);
    plan = chained ? buildPlan(chained->fusion, chained->graph, chained->verdicts,
                               planRequest(r.spec, PlanRequest::Lowerings::Checker))
                   : buildPlan(r.fusion, graph, r.verdicts,
                               planRequest(r.spec, PlanRequest::Lowerings::Checker));
  } catch (const std::exception &e) {
    r.checkerOutcome = "violation";
    r.violations.push_back({"proved-no-plan:" + slug(e.what()), e.what()});
    return;
  }
  if (!plan.verified()) { // A host loop's claims (docs/plan-format.md, "Loops") not proved.
    r.checkerOutcome = "not-proved";
    return;
  }
  std::optional<Bindings> b = bindingsFor(plan, specBindings(r.spec));
  if (!b) {
    r.checkerOutcome = "no-bindings";
    return;
  }
  if (chained) {
    // A chained fusion the reference cannot evaluate is the planner's
    // fault: a violation of its own, not a crash of the whole run.
    std::optional<Violation> chainWrong;
    try {
      if (auto why = chainMismatch(r.fusion, chained->fusion, *b, options_.matchSeeds.front(),
                                   options_.integerRange))
        chainWrong = Violation{"proved-chain-differs", *why};
    } catch (const std::exception &e) {
      chainWrong = Violation{"proved-chain-threw:" + slug(e.what()), e.what()};
    }
    if (chainWrong) {
      r.checkerOutcome = "violation";
      r.violations.push_back(*chainWrong);
      return;
    }
  }
  r.runLog.push_back("checker plan:");
  for (const std::string &line : stepLines(plan))
    r.runLog.push_back(line);
  if (auto a = firstMismatch(options_, plan, r, *b)) {
    r.checkerOutcome = "violation";
    r.violations.push_back({"proved-" + a->outcome + ":" + a->culprit, a->line});
    return;
  }
  r.checkerOutcome = "matched";
  for (const EdgeVerdict &v : r.verdicts) {
    r.matchedLowerings.push_back(edgeName(v) + " " + kindName(v));
    if (reducesMidChain(v.steps)) // Counted apart: copies after the reduction.
      r.matchedLowerings.push_back(edgeName(v) + " multi-step-reduced-mid-chain");
    if (reductionSteps(v.steps) > 1) // A reduction split over several steps.
      r.matchedLowerings.push_back(edgeName(v) + " multi-step-split-reduction");
  }
}

void judgeRing(bool right, OracleResult &r) {
  auto ring = std::find_if(r.verdicts.begin(), r.verdicts.end(), [&](const EdgeVerdict &v) {
    return isCollectivePermute(r.fusion.exprs[v.expr]);
  });
  if (ring == r.verdicts.end()) {
    r.violations.push_back({"ring-not-read", "the ring's CollectivePermute has no edge"});
    return;
  }
  bool proved = ring->result == EdgeResult::Proved;
  if (!right) {
    r.ringOutcome =
        proved ? "wrong-proved" : "wrong-" + std::string(edgeResultStatusName(ring->result));
    if (proved)
      r.violations.push_back({"ring-wrong-proved", "a ring the generator's run finds wrong is "
                                                   "proved"});
    return;
  }
  r.ringOutcome = proved && r.checkerOutcome == "matched" ? "right-matched" : "right-not-matched";
  if (r.ringOutcome != "right-matched")
    r.violations.push_back({"ring-right-not-matched",
                            "a right ring is " + std::string(edgeResultStatusName(ring->result)) +
                                ", its checker plan " + r.checkerOutcome});
}

void Oracle::runCompilerPlan(OracleResult &r, const FusionGraph &graph) {
  const EdgeVerdict *refuted = nullptr;
  bool any = false, skip = false;
  for (const EdgeVerdict &v : r.verdicts) {
    if (!v.compiler) {
      skip |= !edgeProved(v);
      continue;
    }
    any = true;
    r.compilerChoices.push_back(kindName(*v.compiler) + " " +
                                compilerResultStatusName(v.compiler->result));
    skip |= v.compiler->result == CompilerResult::Unknown;
    if (v.compiler->result == CompilerResult::Refuted && !refuted)
      refuted = &v;
  }
  if (!any)
    return;
  if (skip) {
    r.compilerOutcome = "skipped";
    return;
  }
  Plan plan;
  try {
    if (auto chained = chainPlannedEdges(r.fusion, graph, r.verdicts, /*compilerLowerings=*/true))
      plan = buildPlan(chained->fusion, chained->graph, chained->verdicts,
                       planRequest(r.spec, PlanRequest::Lowerings::Compiler));
    else
      plan = buildPlan(r.fusion, graph, r.verdicts,
                       planRequest(r.spec, PlanRequest::Lowerings::Compiler));
  } catch (const std::exception &e) {
    r.compilerOutcome = "no-plan";
    r.runLog.push_back(std::string("compiler plan: none: ") + e.what());
    return;
  }
  Bindings preferred = specBindings(r.spec);
  if (refuted && refuted->compiler->counterexample)
    for (const auto &[k, v] : refuted->compiler->counterexample->bindings)
      preferred[k] = v;
  std::optional<Bindings> b = bindingsFor(plan, preferred);
  if (!b) {
    r.compilerOutcome = "no-bindings";
    return;
  }
  r.runLog.push_back(std::string("compiler plan (") + (refuted ? "refuted" : "confirmed") + "):");
  for (const std::string &line : stepLines(plan))
    r.runLog.push_back(line);
  if (!refuted) {
    if (auto a = firstMismatch(options_, plan, r, *b)) {
      r.compilerOutcome = "violation";
      r.violations.push_back({"confirmed-" + a->outcome + ":" + a->culprit, a->line});
      return;
    }
    r.compilerOutcome = "confirmed-matched";
    return;
  }
  // A refutation by one of nvFuser's runtime rules that run-plan does not
  // execute (the root in the team, the buffer shapes of its post functions,
  // an initial value it drops, equal AllToAll chunks) need not fail here:
  // the plan runs flat buffers and may even apply what nvFuser would not.
  // Nor need a DTensor collective issued with another reduce op than its
  // partials' (rule `communication-form`): the fusion's own reference
  // computes it as issued too.
  // A refuted host loop (rule `host-loop`: a slice missed, read out of
  // range, or not its base's) is no runtime rule: the run shows it.
  const auto &cex = refuted->compiler->counterexample;
  if (cex && !cex->rule.empty() && cex->rule != "host-loop") {
    r.compilerOutcome = "refuted-by-runtime-rule";
    r.runLog.push_back("  not run: refuted by nvFuser's runtime rule `" + cex->rule + "`");
    return;
  }
  std::vector<std::pair<int, int>> tries; // (seed, integer range)
  for (int seed = 1; seed <= options_.refutedSeeds; ++seed)
    tries.push_back({seed, options_.integerRange});
  if (int wide = wideRangeFor(r.spec, options_.wideRange, options_.integerRange))
    for (int k = 1; k <= options_.wideSeeds; ++k)
      tries.push_back({options_.refutedSeeds + k, wide});
  for (const auto &[seed, range] : tries) {
    Attempt a = tryRun(plan, r.verdicts, *b, static_cast<uint64_t>(seed), false, true, range);
    if (range == options_.integerRange || !a.matched)
      r.runLog.push_back(
          "  run: " + a.line +
          (range == options_.integerRange
               ? ""
               : " (inputs in [-" + std::to_string(range) + ", " + std::to_string(range) + "])"));
    if (!a.matched) {
      r.compilerOutcome = a.outcome == "wrong-values" ? "refuted-wrong-values" : "refuted-failed";
      return;
    }
  }
  if (countsTwiceUnderIdempotentOp(r.fusion, *refuted)) {
    r.compilerOutcome = "refuted-idempotent-duplicate";
    r.runLog.push_back("  matched: an element counted twice by a max or min shows in no value");
    return;
  }
  r.compilerOutcome = "violation";
  r.violations.push_back(
      {"refuted-runs-correctly:" + compilerName(*refuted, r.fusion),
       edgeName(*refuted) + ": " + refuted->compiler->source + ", " +
           refuted->compiler->loweringText() + ", is refuted (" +
           (refuted->compiler->counterexample ? refuted->compiler->counterexample->message
                                              : refuted->compiler->reason) +
           ") but matches the reference with " + std::to_string(tries.size()) + " seeds"});
}

// ---------------------------------------------------------------------------
// Minimizer.

namespace {

bool usedByAnother(const FusionSpec &s, int tensor) {
  for (const ExprSpec &e : s.exprs)
    if (std::find(e.inputs.begin(), e.inputs.end(), tensor) != e.inputs.end())
      return true;
  return false;
}

/// Makes tensor `t` a plain input: logical order, no root, no reduction axes.
bool makeInput(TensorSpec &t) {
  if (t.mergeAt >= 0)
    return false;
  if (!t.permutation.empty()) {
    std::vector<AxisSpec> logical;
    for (int k : t.permutation)
      logical.push_back(t.axes[static_cast<size_t>(k)]);
    t.axes = logical;
    t.permutation.clear();
  }
  std::erase_if(t.axes, [](const AxisSpec &a) { return a.type == IterType::Reduction; });
  return true;
}

/// Every single edit of `s`, roughly from the largest simplification down.
std::vector<FusionSpec> candidateEdits(const FusionSpec &s) {
  std::vector<FusionSpec> out;
  auto push = [&](FusionSpec c) { out.push_back(compactSpec(std::move(c))); };
  // Drop a sink expression, or cut one loose (its output becomes an input).
  for (size_t e = 0; s.exprs.size() > 1 && e < s.exprs.size(); ++e) {
    FusionSpec c = s;
    int o = c.exprs[e].output;
    c.exprs.erase(c.exprs.begin() + static_cast<std::ptrdiff_t>(e));
    if (!usedByAnother(s, o) || makeInput(c.tensors[static_cast<size_t>(o)]))
      push(std::move(c));
  }
  // Drop one sharding (or its nested cut, or make a chunked nesting plain),
  // allocation domain or mesh permutation.
  for (size_t t = 0; t < s.tensors.size(); ++t) {
    const TensorSpec &tv = s.tensors[t];
    for (size_t a = 0; a < tv.axes.size(); ++a) {
      const std::optional<Shard> &shard = tv.axes[a].shard;
      if (!shard)
        continue;
      FusionSpec c = s;
      c.tensors[t].axes[a].shard.reset();
      push(std::move(c));
      if (shard->nested) {
        FusionSpec unnested = s;
        unnested.tensors[t].axes[a].shard = Shard{shard->did, shard->style, {}, false, false};
        push(std::move(unnested));
      }
      if (shard->chunked) {
        FusionSpec plain = s;
        plain.tensors[t].axes[a].shard->chunked = false;
        plain.tensors[t].axes[a].shard->chunkedOuter = false;
        push(std::move(plain));
      }
    }
    if (tv.mergedShard) {
      FusionSpec c = s;
      c.tensors[t].mergedShard.reset();
      push(std::move(c));
    }
    if (!tv.allocationKeys.empty()) {
      FusionSpec c = s;
      c.tensors[t].allocationKeys.clear();
      push(std::move(c));
    }
  }
  for (size_t m = 0; m < s.meshes.size(); ++m) {
    std::vector<int64_t> devices = s.meshes[m].devices();
    if (std::is_sorted(devices.begin(), devices.end()))
      continue;
    std::sort(devices.begin(), devices.end());
    FusionSpec c = s;
    c.meshes[m] = DeviceMesh::create(s.meshes[m].shape(), devices);
    push(std::move(c));
  }
  // Constant instead of symbolic sizes, then smaller sizes.
  std::set<int> merged;
  for (const TensorSpec &t : s.tensors)
    if (t.mergeAt >= 0)
      merged.insert(t.mergedDim);
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (s.dims[d].symbolic) {
      FusionSpec c = s;
      c.dims[d].symbolic = false;
      push(std::move(c));
    }
    const int64_t e = s.dims[d].extent;
    std::set<int64_t> smaller = {1, 2, e / 2, e - 1};
    for (int64_t v : smaller)
      if (v >= 1 && v < e && !merged.count(static_cast<int>(d))) {
        FusionSpec c = s;
        c.dims[d].extent = v;
        push(std::move(c));
      }
  }
  return out;
}

bool hasViolation(const OracleResult &r, const std::string &kind) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const Violation &v) { return v.kind == kind; });
}

} // namespace

FusionSpec Oracle::minimize(const FusionSpec &spec, const std::string &kind, int budget) {
  // Greedy: take the first edit that keeps the violation, then go on from
  // the same position among the new spec's edits (the edits before it were
  // just tried), until a whole round of edits fails or the budget is spent.
  FusionSpec best = spec;
  std::vector<FusionSpec> edits = candidateEdits(best);
  size_t next = 0, failedInARow = 0;
  while (budget-- > 0 && !edits.empty() && failedInARow < edits.size()) {
    FusionSpec &c = edits[next % edits.size()];
    if (hasViolation(run(c), kind)) {
      best = std::move(c);
      edits = candidateEdits(best);
      failedInARow = 0;
    } else {
      ++next;
      ++failedInARow;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------
// Reports.

std::string describeVerdicts(const std::vector<EdgeVerdict> &verdicts) {
  std::ostringstream os;
  for (const EdgeVerdict &v : verdicts) {
    os << edgeName(v) << " (" << v.exprName << "): " << v.loweringText() << " "
       << edgeResultStatusName(v.result);
    if (!v.reason.empty())
      os << " (" << v.reason << ")";
    else if (v.counterexample && v.result != EdgeResult::Proved)
      os << " (" << v.counterexample->message << ")";
    os << "\n";
    if (!v.compiler)
      continue;
    const CompilerVerdict &c = *v.compiler;
    os << "  compiler: " << c.source << ", " << c.loweringText() << ": "
       << compilerResultStatusName(c.result);
    if (c.result == CompilerResult::Unnecessary)
      os << " (unnecessary)";
    if (c.counterexample)
      os << " (" << c.counterexample->message << ")";
    else if (!c.reason.empty())
      os << " (" << c.reason << ")";
    os << "\n";
  }
  return os.str();
}

std::string describeResult(const OracleResult &r) {
  std::ostringstream os;
  os << "seed " << r.spec.seed << " (" << (r.spec.hostIr ? "host IR" : "kernel") << ")";
  Bindings b = specBindings(r.spec);
  if (!b.empty())
    os << ", sizes " << bindingsText(b);
  os << "\nfeatures:";
  for (const std::string &f : specFeatures(r.spec))
    os << " " << f;
  os << "\n--- fusion (nvFuser dump style) ---\n" << printFusion(r.fusion);
  os << "--- verdicts ---\n" << describeVerdicts(r.verdicts);
  os << "--- runs --- checker plan: " << r.checkerOutcome
     << "; compiler plan: " << (r.compilerOutcome.empty() ? "-" : r.compilerOutcome) << "\n";
  for (const std::string &line : r.runLog)
    os << line << "\n";
  for (const Violation &v : r.violations)
    os << "VIOLATION " << v.kind << ": " << v.detail << "\n";
  return os.str();
}

std::string reproducerText(const OracleResult &r, const std::string &kind) {
  std::ostringstream os;
  os << "// ORACLE-VIOLATION: " << kind << "\n";
  os << "// SOURCE: tools/fusion-oracle, seed " << r.spec.seed << " ("
     << (r.spec.hostIr ? "host IR" : "kernel") << "), minimized\n";
  auto comment = [&](const std::string &label, const std::string &text) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      os << "// " << label << ": " << line << "\n";
  };
  comment("VERDICT", describeVerdicts(r.verdicts));
  std::string runs;
  for (const std::string &line : r.runLog)
    runs += line + "\n";
  comment("RUN", runs);
  for (const Violation &v : r.violations)
    comment("VIOLATION", v.kind + ": " + v.detail);
  os << "\n" << printFusion(r.fusion);
  return os.str();
}

} // namespace shardcheck::oracle
