// The SMT layer: the only code in shardcheck that includes Z3.
//
// It offers integer and boolean terms as small value types (`smt::Int`,
// `smt::Bool`) owned by a `smt::Context`, and named queries whose answers are
// an enum (unsat / sat with a model / unknown with a reason), never a bool.
// A `smt::QueryCache`, shared across contexts, remembers answers keyed by the
// canonical structural form of a query (checker/smt/TermDag.h), so identical
// queries are solved once and a cache hit builds no Z3 object at all.
//
// Determinism: every query runs with a fixed random seed and a resource limit
// (rlimit), so the same query gets the same answer on every run and machine;
// a wall-clock timeout is only a backstop and its expiry is `Unknown`. A
// query that misses the cache is first searched for a model by evaluation
// (checker/smt/ModelSearch.h: a model found is a "sat" answer; nothing else
// is concluded there), then asked of Z3 in its own scope of the one solver of
// a `smt::SolverBackend`, shared by the Contexts of one run (creating a Z3
// context or solver costs more than most queries take to solve). A run's
// queries are asked in a fixed order, so a run's answers are the same every
// time.
//
// This layer knows nothing of tensors or sharding: checker/Encoding.h speaks
// the domain's words on top of it. One Context per edge keeps memory bounded;
// there is no global Z3 context.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck::smt {

class Context;

/// An integer term. Cheap to copy; valid while its Context lives.
class Int {
public:
  Int() = default;
  Int(Context *c, uint32_t i) : ctx_(c), index_(i) {}
  Context *context() const { return ctx_; }
  uint32_t index() const { return index_; }

private:
  Context *ctx_ = nullptr;
  uint32_t index_ = 0;
};

/// A boolean term. Cheap to copy; valid while its Context lives.
class Bool {
public:
  Bool() = default;
  Bool(Context *c, uint32_t i) : ctx_(c), index_(i) {}
  Context *context() const { return ctx_; }
  uint32_t index() const { return index_; }

private:
  Context *ctx_ = nullptr;
  uint32_t index_ = 0;
};

Int operator+(const Int &a, const Int &b);
Int operator-(const Int &a, const Int &b);
Int operator*(const Int &a, const Int &b);
Int operator+(const Int &a, int64_t b);
Int operator*(const Int &a, int64_t b);
Bool operator&&(const Bool &a, const Bool &b);
Bool operator||(const Bool &a, const Bool &b);
Bool operator!(const Bool &a);
Bool operator==(const Int &a, const Int &b);
Bool operator!=(const Int &a, const Int &b);
Bool operator<(const Int &a, const Int &b);
Bool operator<=(const Int &a, const Int &b);
Bool operator==(const Int &a, int64_t b);
Bool operator<(const Int &a, int64_t b);
Bool operator<=(int64_t a, const Int &b);

enum class Answer { Unsat, Sat, Unknown };
const char *answerName(Answer a);

/// Integer values of the named variables a query asked for.
using Model = std::map<std::string, int64_t>;

struct QueryResult {
  Answer answer = Answer::Unknown;
  Model model;        ///< Filled for Sat.
  std::string reason; ///< For Unknown: "timeout", "resource limit", ...
  bool fromCache = false;
};

struct SolverOptions {
  unsigned timeoutMs = 10000; ///< Wall-clock backstop per query.
  unsigned resourceLimit = 0; ///< Z3 rlimit per query; 0 = derived from timeout.
  unsigned randomSeed = 0;
  std::string smtDumpDir; ///< When set, every query is written here as .smt2.
  /// The whole run's limit (`check-sharding --time-limit`): a query asked
  /// after it is Unknown ("time limit") without reaching the solver; one asked
  /// before gets at most the time left as its wall timeout, its resource
  /// limit unchanged (so an answer within the limit is the answer without it).
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// Solver work on the queries of one name.
struct SolvedQueries {
  uint64_t count = 0;
  uint64_t sat = 0;        ///< Of `count`, answered Sat.
  uint64_t bySearch = 0;   ///< Of `sat`, found by the model search (no Z3).
  double milliseconds = 0; ///< CPU time of the solving thread (the machine may be shared).
};

/// Counts of solver work, for benchmarks and summaries.
struct SolverStats {
  uint64_t queries = 0;
  uint64_t cacheHits = 0;
  uint64_t sat = 0, unsat = 0, unknown = 0;
  /// Sat answers found by evaluating candidate models (checker/smt/ModelSearch.h).
  uint64_t satBySearch = 0;
  /// Models of a normalized query that the query as built does not satisfy:
  /// each is a normalization bug (and was not used); tests require none.
  uint64_t searchModelsRejected = 0;
  /// Queries that reached the solver, by name (a minimization round counts
  /// under its query's name with ".min").
  std::map<std::string, SolvedQueries> solvedByName;
};

/// Remembers answers by canonical query text. Thread-safe.
class QueryCache {
public:
  std::optional<QueryResult> lookup(const std::string &key) const;
  void store(const std::string &key, const QueryResult &result);
  size_t size() const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, QueryResult> entries_;
};

/// The Z3 state that solved queries share: one per checking run and thread
/// (it is not thread-safe). Its terms live only while a query is solved.
class SolverBackend {
public:
  SolverBackend();
  ~SolverBackend();
  SolverBackend(const SolverBackend &) = delete;
  SolverBackend &operator=(const SolverBackend &) = delete;

  struct Impl; ///< Z3Solve.cpp only.
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

/// Owns the terms of one family of queries (typically one edge).
class Context {
public:
  /// Without a `backend`, the Context makes its own when it first solves.
  Context(SolverOptions options, QueryCache *cache, SolverStats *stats,
          SolverBackend *backend = nullptr);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  Int intVar(const std::string &name);
  Int intVal(int64_t v);
  Bool boolVal(bool v);
  Int ite(const Bool &c, const Int &a, const Int &b);
  /// Floor division and modulo by a positive divisor (SMT-LIB div/mod agree
  /// with floor semantics for positive divisors).
  Int div(const Int &a, const Int &b);
  Int mod(const Int &a, const Int &b);
  Bool implies(const Bool &a, const Bool &b);
  Bool all(const std::vector<Bool> &terms);
  Bool any(const std::vector<Bool> &terms);

  /// Checks whether `assertions` are satisfiable. `name` names the query in
  /// dumps and messages; `modelVars` are the variables whose values a Sat
  /// answer reports. The answer comes from the cache when the same query
  /// (same structure, variable names and model variables) was solved before.
  QueryResult check(const std::string &name, const std::vector<Bool> &assertions,
                    const std::vector<std::string> &modelVars);

  /// Like check, then tightens the model: repeatedly asks for a model whose
  /// `objective` is smaller (at most `rounds` times), for small,
  /// human-readable counterexamples. Deterministic.
  QueryResult checkMinimized(const std::string &name, const std::vector<Bool> &assertions,
                             const std::vector<std::string> &modelVars, const Int &objective,
                             int rounds = 6);

  /// SMT-LIB2 text of a query (what dumps contain).
  std::string toSmtLib(const std::vector<Bool> &assertions) const;
  /// The cache key of a query: its canonical structural form.
  std::string cacheKey(const std::vector<Bool> &assertions,
                       const std::vector<std::string> &modelVars) const;

  /// Implementation access for the term operators (Smt.cpp only).
  struct Impl;
  Impl &impl() { return *impl_; }

private:
  SolverBackend &backend();
  QueryResult solve(const std::string &name, const std::vector<uint32_t> &built,
                    const std::vector<std::string> &modelVars, const SolverOptions &options,
                    bool &bySearch);
  std::optional<QueryResult> satBySearch(const std::vector<uint32_t> &asked,
                                         const std::vector<uint32_t> &built,
                                         const std::vector<std::string> &modelVars);

  std::unique_ptr<Impl> impl_;
  SolverOptions options_;
  QueryCache *cache_;
  SolverStats *stats_;
  SolverBackend *backend_;
  std::unique_ptr<SolverBackend> ownBackend_;
};

} // namespace shardcheck::smt
