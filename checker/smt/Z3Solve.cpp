// Z3 translation and solving; see Z3Solve.h. With Smt.h's banner: the only
// file of shardcheck that includes Z3.
#include "checker/smt/Z3Solve.h"

#include "util/Diagnostics.h"

#include <z3++.h>

#include <malloc.h>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace shardcheck::smt {

/// The Z3 context and the one solver its queries are asked through, each
/// query in its own push/pop scope.
struct SolverBackend::Impl {
  z3::context z3;
  std::optional<z3::solver> solver;
  struct Limits {
    unsigned timeoutMs, resourceLimit, randomSeed;
    bool operator==(const Limits &) const = default;
  };
  std::optional<Limits> limits; ///< The solver's parameters, as last set.

  z3::solver &solverFor(const SolverOptions &o);
};

SolverBackend::SolverBackend() : impl_(std::make_unique<Impl>()) {}
SolverBackend::~SolverBackend() = default;

namespace {

z3::expr combine(z3::context &z3, const Node &n, const TermDag &dag, const z3::expr_vector &kids) {
  switch (n.op) {
  case Op::Var:
    return z3.int_const(dag.nameOf(n).c_str());
  case Op::IntConst:
    return z3.int_val(static_cast<int64_t>(n.value));
  case Op::BoolConst:
    return z3.bool_val(n.value != 0);
  case Op::Add:
    return kids[0] + kids[1];
  case Op::Sub:
    return kids[0] - kids[1];
  case Op::Mul:
    return kids[0] * kids[1];
  case Op::Div:
    return kids[0] / kids[1];
  case Op::Mod:
    return z3::mod(kids[0], kids[1]);
  case Op::Ite:
    return z3::ite(kids[0], kids[1], kids[2]);
  case Op::Eq:
    return kids[0] == kids[1];
  case Op::Ne:
    return kids[0] != kids[1];
  case Op::Lt:
    return kids[0] < kids[1];
  case Op::Le:
    return kids[0] <= kids[1];
  case Op::And:
    return z3::mk_and(kids);
  case Op::Or:
    return z3::mk_or(kids);
  case Op::Not:
    return !kids[0];
  case Op::Implies:
    return z3::implies(kids[0], kids[1]);
  }
  SC_ASSERT(false, "unknown term operator");
  return z3.bool_val(false);
}

/// Z3 terms of the nodes reachable from `roots`, built bottom-up.
class Translator {
public:
  Translator(z3::context &z3, const TermDag &dag) : z3_(z3), dag_(dag) {}

  z3::expr of(uint32_t root) {
    dag_.postOrder(
        root, [&](uint32_t i) { return done_.count(i) > 0; },
        [&](uint32_t i) {
          const Node &n = dag_.node(i);
          z3::expr_vector kids(z3_);
          for (uint32_t k = 0; k < n.kidCount; ++k)
            kids.push_back(done_.at(dag_.kidsOf(n)[k]));
          done_.emplace(i, combine(z3_, n, dag_, kids));
        });
    return done_.at(root);
  }

private:
  z3::context &z3_;
  const TermDag &dag_;
  std::unordered_map<uint32_t, z3::expr> done_;
};

z3::solver makeSolver(z3::context &z3) {
  // A fixed tactic pipeline, no portfolio: Z3's default combined solver
  // switches strategies on wall-clock time, which made the same query's
  // answer depend on machine load; here the seed and the rlimit decide
  // everything. Solving the equalities first (every query defines many
  // variables by one) made the random-edge mix about 3x faster than the
  // plain SMT kernel and removed the queries on which that one ran into its
  // limit (bench/README.md, "Checker at scale").
  z3::tactic pipeline = z3::tactic(z3, "simplify") & z3::tactic(z3, "propagate-values") &
                        z3::tactic(z3, "solve-eqs") & z3::tactic(z3, "smt");
  return pipeline.mk_solver();
}

void addQuery(z3::solver &s, Translator &t, const std::vector<uint32_t> &roots) {
  for (uint32_t r : roots)
    s.add(t.of(r));
}

/// Reads the model variables; a value outside int64 makes the answer Unknown.
void readModel(const z3::model &m, const TermDag &dag, Translator &t,
               const std::vector<std::string> &modelVars, QueryResult &r) {
  for (const auto &v : modelVars) {
    int64_t node = dag.findVar(v);
    SC_ASSERT(node >= 0, "model variable " + v + " was never created");
    z3::expr val = m.eval(t.of(static_cast<uint32_t>(node)), true);
    int64_t x = 0;
    if (!val.is_numeral_i64(x)) {
      r.answer = Answer::Unknown;
      r.reason = "model value out of range";
      r.model.clear();
      return;
    }
    r.model[v] = x;
  }
}

/// Z3 allocates and frees megabytes per solved query; glibc would hand
/// those back to the kernel each time and fault them in again (a third of a
/// cold 126-layer check, measured with a context per query). Keeping freed
/// memory in the process costs nothing in peak size.
void keepFreedMemoryInProcess() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
}

} // namespace

/// The backend's solver with `o`'s limits. A solver made from a tactic runs
/// the tactic afresh on a new goal of the current assertions at every check
/// (and cleans it up before and after), so a query asked in its own scope
/// sees nothing of the queries before it; making the solver and setting its
/// parameters once saves a tenth of a typical query's time.
z3::solver &SolverBackend::Impl::solverFor(const SolverOptions &o) {
  if (!solver)
    solver.emplace(makeSolver(z3));
  Limits wanted{o.timeoutMs, resourceLimitOf(o), o.randomSeed};
  if (limits != wanted) {
    z3::params p(z3);
    p.set("timeout", wanted.timeoutMs);
    p.set("rlimit", wanted.resourceLimit);
    p.set("random_seed", wanted.randomSeed);
    solver->set(p);
    limits = wanted;
  }
  return *solver;
}

unsigned resourceLimitOf(const SolverOptions &o) {
  // About 2000 resource units per millisecond on this project's machines;
  // the rlimit is what makes answers deterministic, so it must bind first.
  uint64_t derived = std::max<uint64_t>(1000000, uint64_t{o.timeoutMs} * 2000);
  return o.resourceLimit ? o.resourceLimit
                         : static_cast<unsigned>(std::min<uint64_t>(derived, UINT32_MAX));
}

QueryResult solveWithZ3(SolverBackend &backend, const TermDag &dag,
                        const std::vector<uint32_t> &roots,
                        const std::vector<std::string> &modelVars, const SolverOptions &options,
                        std::string *smtText) {
  keepFreedMemoryInProcess();
  z3::context &z3 = backend.impl().z3;
  Translator t(z3, dag);
  z3::solver &s = backend.impl().solverFor(options);
  struct Scope { // Popped however the query ends, so the next one starts empty.
    z3::solver &s;
    explicit Scope(z3::solver &solver) : s(solver) { s.push(); }
    ~Scope() { s.pop(); }
  } scope(s);
  addQuery(s, t, roots);
  if (smtText)
    *smtText = s.to_smt2();
  QueryResult r;
  switch (s.check()) {
  case z3::unsat:
    r.answer = Answer::Unsat;
    break;
  case z3::sat:
    r.answer = Answer::Sat;
    readModel(s.get_model(), dag, t, modelVars, r);
    break;
  case z3::unknown:
    r.answer = Answer::Unknown;
    r.reason = s.reason_unknown();
    break;
  }
  return r;
}

std::string smtLibText(const TermDag &dag, const std::vector<uint32_t> &roots) {
  z3::context z3;
  Translator t(z3, dag);
  z3::solver s(z3);
  addQuery(s, t, roots);
  return s.to_smt2();
}

} // namespace shardcheck::smt
