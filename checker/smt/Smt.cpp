// The SMT layer's terms, cache and queries; see Smt.h. Terms live in a
// hash-consed DAG (TermDag.h); Z3 is reached only through Z3Solve.h, when a
// query misses the cache.
#include "checker/smt/Smt.h"

#include "checker/smt/ModelSearch.h"
#include "checker/smt/Normalize.h"
#include "checker/smt/TermDag.h"
#include "checker/smt/Z3Solve.h"
#include "util/Diagnostics.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace shardcheck::smt {

struct Context::Impl {
  TermDag dag;
};

namespace {

uint32_t nodeOf(const Int &t) {
  return t.index();
}
uint32_t nodeOf(const Bool &t) {
  return t.index();
}

template <typename T, typename U> void requireSameContext(const T &a, const U &b) {
  SC_ASSERT(a.context() && a.context() == b.context(), "terms of different contexts");
}

Int makeInt(Context *c, Op op, std::vector<uint32_t> kids) {
  return Int(c, c->impl().dag.apply(op, kids));
}

Bool makeBool(Context *c, Op op, std::vector<uint32_t> kids) {
  return Bool(c, c->impl().dag.apply(op, kids));
}

std::vector<uint32_t> nodesOf(const std::vector<Bool> &terms) {
  std::vector<uint32_t> r;
  r.reserve(terms.size());
  for (const auto &t : terms)
    r.push_back(nodeOf(t));
  return r;
}

std::string sanitizeFileName(const std::string &name) {
  std::string r;
  for (char c : name)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return r;
}

void writeDump(const std::string &dir, const std::string &name, const std::string &text) {
  std::error_code ec; // check-sharding created it; a library caller may not have.
  std::filesystem::create_directories(dir, ec);
  static std::atomic<unsigned> counter{0};
  std::ofstream f(dir + "/" + std::to_string(counter++) + "_" + sanitizeFileName(name) + ".smt2");
  f << "; shardcheck query: " << name << "\n" << text << "(check-sat)\n(get-model)\n";
}

/// CPU time of the calling thread: solver time per query name must not count
/// what other processes on a shared machine took.
double threadCpuMilliseconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

} // namespace

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

Context::Context(SolverOptions options, QueryCache *cache, SolverStats *stats,
                 SolverBackend *backend)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)), cache_(cache), stats_(stats),
      backend_(backend) {}

SolverBackend &Context::backend() {
  if (!backend_) {
    ownBackend_ = std::make_unique<SolverBackend>();
    backend_ = ownBackend_.get();
  }
  return *backend_;
}

Context::~Context() = default;

Int Context::intVar(const std::string &name) {
  return Int(this, impl_->dag.var(name));
}

Int Context::intVal(int64_t v) {
  return Int(this, impl_->dag.constant(Op::IntConst, v));
}

Bool Context::boolVal(bool v) {
  return Bool(this, impl_->dag.constant(Op::BoolConst, v));
}

Int Context::ite(const Bool &c, const Int &a, const Int &b) {
  return makeInt(this, Op::Ite, {nodeOf(c), nodeOf(a), nodeOf(b)});
}

Int Context::div(const Int &a, const Int &b) {
  return makeInt(this, Op::Div, {nodeOf(a), nodeOf(b)});
}

Int Context::mod(const Int &a, const Int &b) {
  return makeInt(this, Op::Mod, {nodeOf(a), nodeOf(b)});
}

Bool Context::implies(const Bool &a, const Bool &b) {
  return makeBool(this, Op::Implies, {nodeOf(a), nodeOf(b)});
}

Bool Context::all(const std::vector<Bool> &terms) {
  return terms.empty() ? boolVal(true) : makeBool(this, Op::And, nodesOf(terms));
}

Bool Context::any(const std::vector<Bool> &terms) {
  return terms.empty() ? boolVal(false) : makeBool(this, Op::Or, nodesOf(terms));
}

// --- Operators: each adds (or finds) one node of the owning context. ---

#define SC_BINOP(RESULT, OPERAND, OP, KIND)                                                        \
  RESULT operator OP(const OPERAND &a, const OPERAND &b) {                                         \
    requireSameContext(a, b);                                                                      \
    return make##RESULT(a.context(), Op::KIND, {nodeOf(a), nodeOf(b)});                            \
  }
SC_BINOP(Int, Int, +, Add)
SC_BINOP(Int, Int, -, Sub)
SC_BINOP(Int, Int, *, Mul)
SC_BINOP(Bool, Int, ==, Eq)
SC_BINOP(Bool, Int, !=, Ne)
SC_BINOP(Bool, Int, <, Lt)
SC_BINOP(Bool, Int, <=, Le)
SC_BINOP(Bool, Bool, &&, And)
SC_BINOP(Bool, Bool, ||, Or)
#undef SC_BINOP

Int operator+(const Int &a, int64_t b) {
  return a + a.context()->intVal(b);
}
Int operator*(const Int &a, int64_t b) {
  return a * a.context()->intVal(b);
}
Bool operator==(const Int &a, int64_t b) {
  return a == a.context()->intVal(b);
}
Bool operator<(const Int &a, int64_t b) {
  return a < a.context()->intVal(b);
}
Bool operator<=(int64_t a, const Int &b) {
  return b.context()->intVal(a) <= b;
}

Bool operator!(const Bool &a) {
  return makeBool(a.context(), Op::Not, {nodeOf(a)});
}

// --- Queries. ---

std::string Context::toSmtLib(const std::vector<Bool> &assertions) const {
  return smtLibText(impl_->dag, nodesOf(assertions));
}

std::string Context::cacheKey(const std::vector<Bool> &assertions,
                              const std::vector<std::string> &modelVars) const {
  return impl_->dag.canonicalKey(nodesOf(assertions), modelVars);
}

QueryResult Context::solve(const std::string &name, const std::vector<uint32_t> &built,
                           const std::vector<std::string> &modelVars, const SolverOptions &options,
                           bool &bySearch) {
  // Z3 is asked the normalized query (and the dump shows it); the cache key
  // is the query as built.
  std::vector<uint32_t> asked = normalizeQuery(impl_->dag, built);
  const bool dump = !options.smtDumpDir.empty();
  std::string text;
  std::optional<QueryResult> r = satBySearch(asked, built, modelVars);
  bySearch = r.has_value();
  if (r && dump)
    text =
        "; answered by model search (checker/smt/ModelSearch.h)\n" + smtLibText(impl_->dag, asked);
  if (!r)
    r = solveWithZ3(backend(), impl_->dag, asked, modelVars, options, dump ? &text : nullptr);
  if (dump)
    writeDump(options.smtDumpDir, name, text);
  return *r;
}

/// Sat with a model found by evaluation (ModelSearch.h) when the search
/// finds one for the normalized query `asked` and the query as `built`
/// holds there too; a model only `asked` satisfies would be a normalization
/// bug, counted (tests require none) and not used.
std::optional<QueryResult> Context::satBySearch(const std::vector<uint32_t> &asked,
                                                const std::vector<uint32_t> &built,
                                                const std::vector<std::string> &modelVars) {
  auto found = searchModel(impl_->dag, asked);
  if (!found)
    return std::nullopt;
  if (!holdsAt(impl_->dag, built, *found)) {
    if (stats_)
      ++stats_->searchModelsRejected;
    return std::nullopt;
  }
  QueryResult r;
  r.answer = Answer::Sat;
  for (const auto &v : modelVars) // A variable the query leaves free is 0, as in Z3's models.
    r.model[v] = found->count(v) ? found->at(v) : 0;
  return r;
}

QueryResult Context::check(const std::string &name, const std::vector<Bool> &assertions,
                           const std::vector<std::string> &modelVars) {
  if (stats_)
    ++stats_->queries;
  std::string key;
  if (cache_) {
    key = cacheKey(assertions, modelVars);
    if (auto hit = cache_->lookup(key)) {
      if (stats_)
        ++stats_->cacheHits;
      hit->fromCache = true;
      return *hit;
    }
  }
  SolverOptions options = options_;
  auto start = std::chrono::steady_clock::now();
  double cpuStart = threadCpuMilliseconds();
  if (options.deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*options.deadline - start);
    if (left.count() <= 0) { // Neither solved nor cached: the run is over.
      if (stats_)
        ++stats_->unknown;
      QueryResult over;
      over.reason = "time limit: the run's --time-limit was reached before this query";
      return over;
    }
    options.resourceLimit = resourceLimitOf(options_);
    options.timeoutMs = static_cast<unsigned>(
        std::min<int64_t>(options.timeoutMs, static_cast<int64_t>(left.count())));
  }
  bool bySearch = false;
  QueryResult r = solve(name, nodesOf(assertions), modelVars, options, bySearch);
  if (stats_) {
    SolvedQueries &byName = stats_->solvedByName[name];
    ++byName.count;
    byName.sat += r.answer == Answer::Sat;
    byName.bySearch += bySearch;
    byName.milliseconds += threadCpuMilliseconds() - cpuStart;
    stats_->sat += r.answer == Answer::Sat;
    stats_->satBySearch += bySearch;
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
