// Cross-check: the expression-level partials query (checker/ExprChecker.h)
// against its brute-force evaluator (checker/bruteforce/ExprPartials.h), over
// random matmuls and linears.
//
// Each case shards A, B and C of `C[M, N, rK] = A . B` independently (every
// axis replicated, block-split on a mesh axis, or K split cyclically), on 1-D
// and 2-D meshes with permuted device ids, and checks every reduction lowering
// along each mesh axis and over the whole mesh. Agreement: SMT proved <-> brute
// force holds, SMT refuted <-> brute force fails; a disagreement fails the
// test. Unknown or unsupported answers are counted, and the counts of proved
// and refuted agreements must both be large, so coverage cannot vanish.
#include "checker/ExprChecker.h"
#include "checker/Selection.h"
#include "checker/bruteforce/ExprPartials.h"
#include "ir/FusionBuilder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

using namespace shardcheck;

namespace {

struct MatmulCase {
  Fusion fusion;
  std::vector<FusionEdge> edges;
  DeviceMesh mesh;
  std::string description;
};

class MatmulGenerator {
public:
  explicit MatmulGenerator(uint64_t seed) : rng_(seed) {}

  MatmulCase next() {
    FusionBuilder b;
    static const std::vector<DeviceMesh> meshes{
        DeviceMesh::linear({0, 1}), DeviceMesh::linear({1, 0}), DeviceMesh::linear({0, 1, 2, 3}),
        DeviceMesh::create({2, 2}, {0, 1, 2, 3}), DeviceMesh::create({2, 2}, {2, 0, 3, 1})};
    mesh_ = meshes[pick(meshes.size())];
    bool linear = pick(2) == 1;
    int64_t m = 4, n = 4, k = 8;
    desc_ = std::string(linear ? "linear" : "matmul") + " on " + mesh_.str() + ":";
    IdNum am = axis(b, m, "A.M"), ak = axis(b, k, "A.K");
    TensorNum A = finish(b, {am, ak});
    IdNum bk, bn;
    if (linear) {
      bn = axis(b, n, "B.N");
      bk = axis(b, k, "B.K");
    } else {
      bk = axis(b, k, "B.K");
      bn = axis(b, n, "B.N");
    }
    TensorNum B = finish(b, linear ? std::vector<IdNum>{bn, bk} : std::vector<IdNum>{bk, bn});
    IdNum cm = axis(b, m, "C.M"), cn = axis(b, n, "C.N");
    TensorNum C = finish(b, {cm, cn, b.reduction(k)});
    b.expr(linear ? OpKind::Linear : OpKind::Matmul, linear ? "linear" : "matmul", {A, B}, C);
    MatmulCase c;
    c.edges = {b.edge(A, C), b.edge(B, C)};
    c.fusion = b.take();
    c.mesh = mesh_;
    c.description = desc_;
    return c;
  }

private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  /// A data axis, replicated or sharded on one of the mesh's DIDs.
  IdNum axis(FusionBuilder &b, int64_t extent, const std::string &name) {
    IdNum id = b.iter(extent);
    size_t choice = pick(4);
    loop_.push_back({id});
    if (choice == 0)
      return id;
    ParallelType did = deviceDimFromIndex(static_cast<int>(pick(mesh_.rank())));
    int64_t s = mesh_.extentOf(did);
    if (choice == 3 && extent % (s * 2) == 0) { // cyclic: device = index mod s
      auto outer = b.split(id, s, /*innerSplit=*/true);
      auto dev = b.split(outer.inner, s, /*innerSplit=*/false, did);
      loop_.back() = {outer.outer, dev.outer, dev.inner};
      desc_ += " " + name + " cyclic on " + parallelTypeShortName(did);
      return id;
    }
    auto parts = b.split(id, s, /*innerSplit=*/false, did);
    loop_.back() = {parts.outer, parts.inner};
    desc_ += " " + name + " on " + parallelTypeShortName(did);
    return id;
  }

  TensorNum finish(FusionBuilder &b, std::vector<IdNum> logical) {
    std::vector<IdNum> loop;
    // Reduction IDs are made without axis(); they are their own loop IDs.
    size_t data = 0;
    for (IdNum id : logical)
      data += !b.fusion().id(id).isReduction();
    size_t first = loop_.size() - data;
    for (size_t i = first; i < loop_.size(); ++i)
      loop.insert(loop.end(), loop_[i].begin(), loop_[i].end());
    for (IdNum id : logical)
      if (b.fusion().id(id).isReduction())
        loop.push_back(id);
    loop_.resize(first);
    return b.tensor(logical, mesh_, loop, DataType::Double);
  }

  std::mt19937_64 rng_;
  DeviceMesh mesh_;
  std::vector<std::vector<IdNum>> loop_;
  std::string desc_;
};

std::vector<Lowering> reductionLowerings(const DeviceMesh &mesh) {
  std::vector<std::vector<Team>> teamSets{{Team{mesh.devices(), std::nullopt, {}}}};
  for (int i = 0; i < mesh.rank(); ++i)
    teamSets.push_back(teamsAlong(mesh, deviceDimFromIndex(i)));
  std::vector<Lowering> r;
  for (const auto &teams : teamSets)
    for (CommKind k : {CommKind::Allreduce, CommKind::ReduceScatter})
      r.push_back(Lowering{k, teams, false});
  r.push_back(Lowering{CommKind::Reduce, {Team{mesh.devices(), mesh.devices()[0], {}}}, false});
  return r;
}

TEST(ExprCrossCheck, PartialsAgreeWithBruteForce) {
  int cases = std::getenv("SHARDCHECK_QUICK") ? 60 : 400;
  MatmulGenerator gen(0x6d6d0001u);
  smt::QueryCache cache;
  smt::SolverStats stats;
  smt::SolverBackend backend;
  int proved = 0, refuted = 0, inconclusive = 0;
  for (int i = 0; i < cases; ++i) {
    MatmulCase c = gen.next();
    std::vector<const FusionEdge *> operands{&c.edges[0], &c.edges[1]};
    for (const Lowering &l : reductionLowerings(c.mesh)) {
      smt::SolverOptions so;
      so.timeoutMs = 5000;
      smt::Context ctx(so, &cache, &stats, &backend);
      Outcome smt = ExprChecker(c.fusion, operands, ctx, c.mesh.devices()).checkPartials(l);
      auto brute = bruteforce::bruteCheckExprPartials(c.fusion, operands, {}, l);
      std::string what = "case " + std::to_string(i) + " (" + c.description + "), " + l.str();
      if (smt.kind == Outcome::Kind::Proved && brute.holds()) {
        ++proved;
      } else if (smt.kind == Outcome::Kind::Refuted && brute.fails()) {
        ++refuted;
      } else if (smt.kind == Outcome::Kind::Proved || smt.kind == Outcome::Kind::Refuted ||
                 brute.holds() || brute.fails()) {
        bool bothDecided =
            (smt.kind == Outcome::Kind::Proved || smt.kind == Outcome::Kind::Refuted) &&
            (brute.holds() || brute.fails());
        if (bothDecided)
          ADD_FAILURE() << what << ": SMT " << outcomeKindName(smt.kind) << " ("
                        << (smt.counterexample ? smt.counterexample->message : smt.reason)
                        << ") but brute force " << bruteforce::bruteOutcomeName(brute.outcome)
                        << " ("
                        << (brute.counterexample ? brute.counterexample->message : brute.reason)
                        << ")";
        else
          ++inconclusive;
      } else {
        ++inconclusive;
      }
    }
  }
  std::cout << "EXPR-CROSSCHECK: " << proved << " proved, " << refuted << " refuted, "
            << inconclusive << " inconclusive\n";
  EXPECT_GE(proved, cases / 10);
  EXPECT_GE(refuted, cases);
  EXPECT_EQ(stats.searchModelsRejected, 0u); // Every model found held before normalization.
}

} // namespace
