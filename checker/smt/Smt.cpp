// Z3-backed implementation of the SMT layer; see Smt.h. The only file that
// includes Z3.
#include "checker/smt/Smt.h"

#include "util/Diagnostics.h"

#include <z3++.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace shardcheck::smt {

struct Context::Impl {
  z3::context z3;
  std::vector<z3::expr> terms;
  std::map<std::string, uint32_t> vars;

  uint32_t add(z3::expr e) {
    terms.push_back(std::move(e));
    return static_cast<uint32_t>(terms.size() - 1);
  }
};

const char *answerName(Answer a) {
  switch (a) {
  case Answer::Unsat:
    return "unsat";
  case Answer::Sat:
    return "sat";
  case Answer::Unknown:
    return "unknown";
  }
  return "unknown";
}

std::optional<QueryResult> QueryCache::lookup(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end())
    return std::nullopt;
  return it->second;
}

void QueryCache::store(const std::string &key, const QueryResult &result) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[key] = result;
}

size_t QueryCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

Context::Context(SolverOptions options, QueryCache *cache, SolverStats *stats)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)), cache_(cache), stats_(stats) {}

Context::~Context() = default;

Int Context::intVar(const std::string &name) {
  auto it = impl_->vars.find(name);
  if (it != impl_->vars.end())
    return Int(this, it->second);
  uint32_t i = impl_->add(impl_->z3.int_const(name.c_str()));
  impl_->vars[name] = i;
  return Int(this, i);
}

Int Context::intVal(int64_t v) {
  return Int(this, impl_->add(impl_->z3.int_val(static_cast<int64_t>(v))));
}

Bool Context::boolVal(bool v) {
  return Bool(this, impl_->add(impl_->z3.bool_val(v)));
}

Int Context::ite(const Bool &c, const Int &a, const Int &b) {
  auto &t = impl_->terms;
  return Int(this, impl_->add(z3::ite(t[c.index()], t[a.index()], t[b.index()])));
}

Int Context::div(const Int &a, const Int &b) {
  auto &t = impl_->terms;
  return Int(this, impl_->add(t[a.index()] / t[b.index()]));
}

Int Context::mod(const Int &a, const Int &b) {
  auto &t = impl_->terms;
  return Int(this, impl_->add(z3::mod(t[a.index()], t[b.index()])));
}

Bool Context::implies(const Bool &a, const Bool &b) {
  auto &t = impl_->terms;
  return Bool(this, impl_->add(z3::implies(t[a.index()], t[b.index()])));
}

Bool Context::all(const std::vector<Bool> &terms) {
  z3::expr_vector v(impl_->z3);
  for (const auto &b : terms)
    v.push_back(impl_->terms[b.index()]);
  return Bool(this, impl_->add(terms.empty() ? impl_->z3.bool_val(true) : z3::mk_and(v)));
}

Bool Context::any(const std::vector<Bool> &terms) {
  z3::expr_vector v(impl_->z3);
  for (const auto &b : terms)
    v.push_back(impl_->terms[b.index()]);
  return Bool(this, impl_->add(terms.empty() ? impl_->z3.bool_val(false) : z3::mk_or(v)));
}

// --- Operators: each appends one term to the owning context. ---

#define SC_INT_BINOP(OP)                                                                           \
  Int operator OP(const Int &a, const Int &b) {                                                    \
    SC_ASSERT(a.context() && a.context() == b.context(), "terms of different contexts");           \
    auto &impl = a.context()->impl();                                                              \
    return Int(a.context(), impl.add(impl.terms[a.index()] OP impl.terms[b.index()]));             \
  }
SC_INT_BINOP(+)
SC_INT_BINOP(-)
SC_INT_BINOP(*)
#undef SC_INT_BINOP

Int operator+(const Int &a, int64_t b) {
  return a + a.context()->intVal(b);
}
Int operator*(const Int &a, int64_t b) {
  return a * a.context()->intVal(b);
}

#define SC_CMP_BINOP(OP)                                                                           \
  Bool operator OP(const Int &a, const Int &b) {                                                   \
    SC_ASSERT(a.context() && a.context() == b.context(), "terms of different contexts");           \
    auto &impl = a.context()->impl();                                                              \
    return Bool(a.context(), impl.add(impl.terms[a.index()] OP impl.terms[b.index()]));            \
  }
SC_CMP_BINOP(==)
SC_CMP_BINOP(!=)
SC_CMP_BINOP(<)
SC_CMP_BINOP(<=)
#undef SC_CMP_BINOP

Bool operator==(const Int &a, int64_t b) {
  return a == a.context()->intVal(b);
}
Bool operator<(const Int &a, int64_t b) {
  return a < a.context()->intVal(b);
}
Bool operator<=(int64_t a, const Int &b) {
  return b.context()->intVal(a) <= b;
}

Bool operator&&(const Bool &a, const Bool &b) {
  SC_ASSERT(a.context() && a.context() == b.context(), "terms of different contexts");
  auto &impl = a.context()->impl();
  return Bool(a.context(), impl.add(impl.terms[a.index()] && impl.terms[b.index()]));
}

Bool operator||(const Bool &a, const Bool &b) {
  SC_ASSERT(a.context() && a.context() == b.context(), "terms of different contexts");
  auto &impl = a.context()->impl();
  return Bool(a.context(), impl.add(impl.terms[a.index()] || impl.terms[b.index()]));
}

Bool operator!(const Bool &a) {
  auto &impl = a.context()->impl();
  return Bool(a.context(), impl.add(!impl.terms[a.index()]));
}

// --- Queries. ---

std::string Context::toSmtLib(const std::vector<Bool> &assertions) const {
  z3::solver s(impl_->z3);
  for (const auto &a : assertions)
    s.add(impl_->terms[a.index()]);
  return s.to_smt2();
}

namespace {

unsigned resourceLimitOf(const SolverOptions &o) {
  // About 2000 resource units per millisecond on this project's machines;
  // the rlimit is what makes answers deterministic, so it must bind first.
  return o.resourceLimit ? o.resourceLimit : std::max(1000000u, o.timeoutMs * 2000u);
}

z3::solver makeSolver(z3::context &z3, const SolverOptions &o) {
  // The simple (non-incremental-portfolio) solver: Z3's default combined
  // solver switches strategies on wall-clock time, which made the same
  // query's answer depend on machine load. With the simple solver, the seed
  // and the rlimit decide everything.
  z3::solver s(z3, z3::solver::simple());
  z3::params p(z3);
  p.set("timeout", o.timeoutMs);
  p.set("rlimit", resourceLimitOf(o));
  p.set("random_seed", o.randomSeed);
  s.set(p);
  return s;
}

std::string sanitizeFileName(const std::string &name) {
  std::string r;
  for (char c : name)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return r;
}

} // namespace

QueryResult Context::check(const std::string &name, const std::vector<Bool> &assertions,
                           const std::vector<std::string> &modelVars) {
  std::string text = toSmtLib(assertions);
  std::string key = text;
  for (const auto &v : modelVars)
    key += "\n;model " + v;
  if (stats_)
    ++stats_->queries;
  if (cache_)
    if (auto hit = cache_->lookup(key)) {
      if (stats_)
        ++stats_->cacheHits;
      hit->fromCache = true;
      return *hit;
    }
  if (!options_.smtDumpDir.empty()) {
    std::filesystem::create_directories(options_.smtDumpDir);
    static std::atomic<unsigned> counter{0};
    std::ofstream f(options_.smtDumpDir + "/" + std::to_string(counter++) + "_" +
                    sanitizeFileName(name) + ".smt2");
    f << "; shardcheck query: " << name << "\n" << text << "(check-sat)\n(get-model)\n";
  }

  z3::solver s = makeSolver(impl_->z3, options_);
  for (const auto &a : assertions)
    s.add(impl_->terms[a.index()]);
  QueryResult r;
  switch (s.check()) {
  case z3::unsat:
    r.answer = Answer::Unsat;
    break;
  case z3::sat: {
    r.answer = Answer::Sat;
    z3::model m = s.get_model();
    for (const auto &v : modelVars) {
      auto it = impl_->vars.find(v);
      SC_ASSERT(it != impl_->vars.end(), "model variable " + v + " was never created");
      z3::expr val = m.eval(impl_->terms[it->second], true);
      int64_t x = 0;
      if (!val.is_numeral_i64(x)) {
        // A value that does not fit int64 is no counterexample we can show.
        r.answer = Answer::Unknown;
        r.reason = "model value out of range";
        break;
      }
      r.model[v] = x;
    }
    break;
  }
  case z3::unknown:
    r.answer = Answer::Unknown;
    r.reason = s.reason_unknown();
    break;
  }
  if (stats_) {
    stats_->sat += r.answer == Answer::Sat;
    stats_->unsat += r.answer == Answer::Unsat;
    stats_->unknown += r.answer == Answer::Unknown;
  }
  if (cache_)
    cache_->store(key, r);
  return r;
}

QueryResult Context::checkMinimized(const std::string &name, const std::vector<Bool> &assertions,
                                    const std::vector<std::string> &modelVars, const Int &objective,
                                    int rounds) {
  // The objective's value is read through a dedicated variable.
  const std::string objName = "__objective";
  Int obj = intVar(objName);
  std::vector<Bool> base = assertions;
  base.push_back(obj == objective);
  std::vector<std::string> vars = modelVars;
  vars.push_back(objName);
  QueryResult best = check(name, base, vars);
  for (int i = 0; i < rounds && best.answer == Answer::Sat; ++i) {
    std::vector<Bool> tighter = base;
    tighter.push_back(obj < best.model.at(objName));
    QueryResult next = check(name + ".min", tighter, vars);
    if (next.answer != Answer::Sat)
      break; // Unsat: minimal. Unknown: keep the model we have (still a real one).
    best = next;
  }
  best.model.erase(objName);
  return best;
}

} // namespace shardcheck::smt
