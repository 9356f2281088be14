// Producer -> consumer graph and per-op domain maps; see FusionGraph.h.
#include "ir/FusionGraph.h"

#include "ir/RingPermute.h"

#include "ir/HostLoops.h"
#include "ir/PointwiseOps.h"
#include "ir/Scalars.h"
#include "util/Checked.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace shardcheck {

std::optional<IdNum> DomainMap::producerOf(IdNum consumerId) const {
  for (size_t i = 0; i < consumerIds.size(); ++i)
    if (consumerIds[i] == consumerId)
      return producerIds[i];
  return std::nullopt;
}

std::optional<IdNum> DomainMap::consumerOf(IdNum producerId) const {
  for (size_t i = 0; i < producerIds.size(); ++i)
    if (producerIds[i] == producerId)
      return consumerIds[i];
  return std::nullopt;
}

std::vector<IdNum> dataLogicalIds(const Fusion &fusion, const TensorView &tv) {
  std::vector<IdNum> r;
  for (IdNum n : tv.logical)
    if (!fusion.id(n).isReduction())
      r.push_back(n);
  return r;
}

namespace {

/// Builds maps by walking consumer and producer ID lists together.
class MapBuilder {
public:
  MapBuilder(const Fusion &f, const std::vector<IdNum> &consumer,
             const std::vector<IdNum> &producer)
      : f_(f), consumer_(consumer), producer_(producer) {
    map_.consumerIds = consumer;
    map_.producerIds.assign(consumer.size(), std::nullopt);
  }

  void map(size_t consumerPos, size_t producerPos) {
    map_.producerIds[consumerPos] = producer_[producerPos];
  }
  DomainMap finish() {
    std::set<IdNum> used;
    for (const auto &p : map_.producerIds)
      if (p)
        used.insert(*p);
    for (IdNum p : producer_)
      if (!used.count(p))
        map_.unmappedProducerIds.push_back(p);
    return map_;
  }
  /// A map for an edge whose domains do not fit the op: the checker reports
  /// the edge as unsupported with this reason.
  DomainMap unsupported(std::string reason) {
    DomainMap m = finish();
    m.unsupported = std::move(reason);
    return m;
  }
  bool consumerIsBroadcast(size_t i) const { return f_.id(consumer_[i]).isBroadcast(); }
  bool producerIsBroadcast(size_t j) const { return f_.id(producer_[j]).isBroadcast(); }

private:
  const Fusion &f_;
  const std::vector<IdNum> &consumer_;
  const std::vector<IdNum> &producer_;
  DomainMap map_;
};

std::string rankMismatch(const Fusion &f, const Expr &e, TensorNum producer, size_t pRank,
                         TensorNum consumer, size_t cRank) {
  return std::string(opKindName(e.kind)) + " maps " + f.tensor(producer).name() + " (" +
         std::to_string(pRank) + " data axes) onto " + f.tensor(consumer).name() + " (" +
         std::to_string(cRank) + " root axes): the ranks differ";
}

DomainMap positional(const Fusion &f, const Expr &e, TensorNum producer, TensorNum consumer,
                     const std::vector<IdNum> &c, const std::vector<IdNum> &p) {
  MapBuilder b(f, c, p);
  if (p.empty()) // A zero-dim operand broadcasts to every element.
    return b.finish();
  if (c.size() != p.size()) {
    return b.unsupported(rankMismatch(f, e, producer, p.size(), consumer, c.size()));
  }
  for (size_t i = 0; i < c.size(); ++i)
    b.map(i, i);
  return b.finish();
}

DomainMap broadcastMap(const Fusion &f, const Expr &e, TensorNum producer, TensorNum consumer,
                       const std::vector<IdNum> &c, const std::vector<IdNum> &p) {
  MapBuilder b(f, c, p);
  if (!e.flags.empty() && e.flags.size() != c.size()) {
    return b.unsupported("broadcast has " + std::to_string(e.flags.size()) + " flags but " +
                         f.tensor(consumer).name() + " has " + std::to_string(c.size()) + " axes");
  }
  size_t j = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    bool isNew;
    if (!e.flags.empty()) {
      isNew = e.flags[i];
    } else {
      // Old dumps print no flags: a consumer broadcast axis is new when more
      // consumer axes remain than producer axes, preferring to keep producer
      // broadcasts aligned with consumer broadcasts.
      bool surplus = c.size() - i > p.size() - j;
      isNew = surplus && b.consumerIsBroadcast(i) && (j == p.size() || !b.producerIsBroadcast(j));
      if (!isNew && surplus && j == p.size())
        isNew = true;
    }
    if (isNew)
      continue;
    if (j >= p.size()) {
      return b.unsupported(rankMismatch(f, e, producer, p.size(), consumer, c.size()));
    }
    b.map(i, j++);
  }
  if (j != p.size()) {
    return b.unsupported(rankMismatch(f, e, producer, p.size(), consumer, c.size()));
  }
  return b.finish();
}

DomainMap squeezeMap(const Fusion &f, const Expr &e, TensorNum producer, TensorNum consumer,
                     const std::vector<IdNum> &c, const std::vector<IdNum> &p) {
  MapBuilder b(f, c, p);
  if (!e.flags.empty() && e.flags.size() != p.size()) {
    return b.unsupported("squeeze has " + std::to_string(e.flags.size()) + " flags but " +
                         f.tensor(producer).name() + " has " + std::to_string(p.size()) + " axes");
  }
  size_t i = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    bool dropped = !e.flags.empty() ? static_cast<bool>(e.flags[j])
                                    : (p.size() - j > c.size() - i && b.producerIsBroadcast(j));
    if (dropped)
      continue;
    if (i >= c.size()) {
      return b.unsupported(rankMismatch(f, e, producer, p.size(), consumer, c.size()));
    }
    b.map(i++, j);
  }
  if (i != c.size()) {
    return b.unsupported(rankMismatch(f, e, producer, p.size(), consumer, c.size()));
  }
  return b.finish();
}

/// matmul(A[.., M, K], B[.., K, N]) -> out[.., M, N, rK].
DomainMap matmulMap(const Fusion &f, size_t operandIndex, TensorNum producer, TensorNum consumer,
                    const std::vector<IdNum> &c, const std::vector<IdNum> &p) {
  MapBuilder b(f, c, p);
  bool shapeOk = c.size() >= 3 && p.size() == c.size() - 1 && f.id(c.back()).isReduction();
  if (!shapeOk) {
    return b.unsupported("matmul operand " + f.tensor(producer).name() + " and output " +
                         f.tensor(consumer).name() +
                         " do not have the [.., M, K] x [.., K, N] -> [.., M, N, rK] shape");
  }
  size_t batch = p.size() - 2;
  for (size_t i = 0; i < batch; ++i)
    b.map(i, i);
  size_t cm = batch, cn = batch + 1, ck = batch + 2;
  if (operandIndex == 0) { // A: M, K
    b.map(cm, batch);
    b.map(ck, batch + 1);
  } else { // B: K, N
    b.map(ck, batch);
    b.map(cn, batch + 1);
  }
  return b.finish();
}

/// linear(A[.., K], W[N, K], bias[N]) -> out[.., N, rK] (W may be [K]:
/// out[.., rK]).
DomainMap linearMap(const Fusion &f, size_t operandIndex, TensorNum producer, TensorNum consumer,
                    const std::vector<IdNum> &c, const std::vector<IdNum> &p) {
  MapBuilder b(f, c, p);
  auto fail = [&]() -> DomainMap {
    return b.unsupported("linear operand " + f.tensor(producer).name() + " and output " +
                         f.tensor(consumer).name() +
                         " do not have the [.., K] x [N, K] -> [.., N, rK] shape");
  };
  if (c.size() < 2 || !f.id(c.back()).isReduction())
    return fail();
  size_t ck = c.size() - 1;
  if (operandIndex == 0) {
    // A[.., K]: leading axes map to the output's leading axes.
    bool hasN = c.size() == p.size() + 1;
    if (!hasN && c.size() != p.size())
      return fail();
    for (size_t i = 0; i + 1 < p.size(); ++i)
      b.map(i, i);
    b.map(ck, p.size() - 1);
  } else if (operandIndex == 1) {
    if (p.size() == 2) {
      if (c.size() < 3)
        return fail();
      b.map(ck - 1, 0);
      b.map(ck, 1);
    } else if (p.size() == 1) {
      b.map(ck, 0);
    } else {
      return fail();
    }
  } else {
    if (p.size() != 1 || c.size() < 3)
      return fail();
    b.map(ck - 1, 0);
  }
  return b.finish();
}

} // namespace

namespace {

/// Why no plan for `e` could run: a scalar operand or an initial value that
/// is neither a literal nor a symbol (ir/Scalars.h). Its element map may be
/// fine, but a proof over it would promise what the executor cannot do.
std::optional<std::string> unreadableScalar(const Expr &e) {
  for (const Operand &o : e.inputs)
    if (!o.tensor && !isReadableScalar(o.scalar))
      return "shardcheck cannot read the scalar operand `" + shownToken(o.scalar) + "`";
  std::string init = e.attr("initial value");
  if (e.kind == OpKind::Reduction && !init.empty() && !isReadableScalar(init))
    return "shardcheck cannot read the initial value `" + shownToken(init) + "`";
  return std::nullopt;
}

/// Why a reducing host IR Communication cannot be judged from its printout:
/// its input carries no device-parallel axis, so the print says nothing of
/// the per-device partial sums it combines nor of the axis it scatters; a
/// positional map would invent equal extents the collective contradicts.
std::optional<std::string> unshardedReduction(const Fusion &f, const Expr &e, TensorNum producer) {
  if (!isReducingCommunication(e))
    return std::nullopt;
  for (IdNum id : f.tensor(producer).loop)
    if (f.id(id).isDeviceParallel() && !f.id(id).isBroadcast())
      return std::nullopt;
  return "the printout lacks what this " + e.op + " combines: " + f.tensor(producer).name() +
         " has no device-parallel axis, so neither the per-device partial sums nor the scattered "
         "axis are printed (host IR built without sharding annotations?); nothing is inferred "
         "from it";
}

} // namespace

/// A CollectivePermute of a modelled ring (ir/RingPermute.h): the slot's
/// axes map to the input's other axes, the input's sharded axis to none (the
/// ring checker proves which shard lands in each slot).
static DomainMap ringMap(const Fusion &fusion, const Expr &expr, const std::vector<IdNum> &c,
                         const std::vector<IdNum> &p) {
  MapBuilder m(fusion, c, p);
  auto ring = ringPermute(fusion, expr);
  if (auto *why = std::get_if<std::string>(&ring))
    return m.unsupported("shardcheck models a CollectivePermute only as a step of nvFuser's "
                         "Swizzle1D ring: " +
                         *why);
  size_t position = std::get<RingPermute>(ring).position;
  if (c.size() + 1 != p.size())
    return m.unsupported("the ring's slot and its input differ in rank");
  for (size_t k = 0; k < c.size(); ++k)
    m.map(k, k < position ? k : k + 1);
  return m.finish();
}

DomainMap computeDomainMap(const Fusion &fusion, const Expr &expr, size_t operandIndex,
                           TensorNum consumer) {
  SC_ASSERT(operandIndex < expr.inputs.size() && expr.inputs[operandIndex].tensor,
            "domain map of a non-tensor operand");
  TensorNum producer = *expr.inputs[operandIndex].tensor;
  const auto &ctv = fusion.tensor(consumer);
  const auto &c = ctv.rootOrLogical();
  const auto p = dataLogicalIds(fusion, fusion.tensor(producer));
  if (auto scalar = unreadableScalar(expr))
    return MapBuilder(fusion, c, p).unsupported(*scalar);
  if (isCollectivePermute(expr))
    return ringMap(fusion, expr, c, p);
  if (auto lacking = unshardedReduction(fusion, expr, producer))
    return MapBuilder(fusion, c, p).unsupported(*lacking);
  // A statement in a host loop acts on one iteration's slices; where they
  // are the slices the loop model reads (ir/HostLoops.h), the edge is one
  // iteration's and the checker proves the loop apart (LoopChecker).
  if (auto why = unloopedSliceWrite(fusion, expr))
    return MapBuilder(fusion, c, p).unsupported(*why);
  if (isInHostLoop(expr)) {
    auto looped = expr.kind == OpKind::Communication ? loopedCommunication(fusion, expr)
                                                     : loopedStatement(fusion, expr);
    if (auto *why = std::get_if<std::string>(&looped))
      return MapBuilder(fusion, c, p)
          .unsupported("posted inside the host loop `" + shownToken(expr.attr(kHostLoopAttr)) +
                       "`, which shardcheck models only as one statement per iteration on "
                       "slices along the loop variable: " +
                       *why);
  }

  switch (expr.kind) {
  case OpKind::Broadcast:
    return broadcastMap(fusion, expr, producer, consumer, c, p);
  case OpKind::Squeeze:
    return squeezeMap(fusion, expr, producer, consumer, c, p);
  case OpKind::Matmul:
    return matmulMap(fusion, operandIndex, producer, consumer, c, p);
  case OpKind::Linear:
    return linearMap(fusion, operandIndex, producer, consumer, c, p);
  case OpKind::Permute:
    if (!ctv.hasRoot())
      return MapBuilder(fusion, c, p)
          .unsupported("the permutation of " + ctv.name() +
                       " is unknown: the dump prints no root domain for it (dump the "
                       "TransformPrinter section too)");
    return positional(fusion, expr, producer, consumer, c, p);
  case OpKind::Unary:
  case OpKind::Binary:
  case OpKind::Ternary: {
    // Positional only for the element-wise ops shardcheck knows (one list
    // for reader, graph and reference), also for fusions built in code.
    auto arity = expr.kind == OpKind::Unary    ? PointwiseArity::Unary
                 : expr.kind == OpKind::Binary ? PointwiseArity::Binary
                                               : PointwiseArity::Ternary;
    if (!isPointwiseOp(expr.op, arity))
      return MapBuilder(fusion, c, p)
          .unsupported(std::string("shardcheck has no rule for `") + expr.op + "`");
    return positional(fusion, expr, producer, consumer, c, p);
  }
  case OpKind::Other:
    return MapBuilder(fusion, c, p)
        .unsupported(std::string("shardcheck has no rule for `") + expr.op + "`");
  default:
    // Pointwise ops, Set, Expand, Reduction, Reshape and Communication map
    // positionally onto the consumer's root (reduction IDs included).
    return positional(fusion, expr, producer, consumer, c, p);
  }
}

namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

/// Reports tensors defined twice and uses before definition. Returns false on
/// any error.
bool checkDefinitionOrder(const Fusion &fusion, DiagnosticEngine &diags) {
  std::map<TensorNum, size_t> definedBy;
  for (size_t i = 0; i < fusion.exprs.size(); ++i)
    for (TensorNum o : fusion.exprs[i].outputs) {
      auto [it, fresh] = definedBy.emplace(o, i);
      if (!fresh) {
        diags
            .error("defined-twice", fusion.tensor(o).name() + " is defined twice",
                   fusion.exprs[i].loc)
            .addNote("first definition is here", fusion.exprs[it->second].loc);
        return false;
      }
    }
  bool ok = true;
  for (size_t i = 0; i < fusion.exprs.size(); ++i)
    for (TensorNum in : fusion.exprs[i].tensorInputs()) {
      auto it = definedBy.find(in);
      if (it != definedBy.end() && it->second >= i) {
        auto &d = diags.error("use-before-definition",
                              fusion.tensor(in).name() + " is used before it is defined",
                              fusion.exprs[i].loc);
        d.addNote("it is defined here", fusion.exprs[it->second].loc);
        ok = false;
      }
    }
  return ok;
}

} // namespace

std::optional<FusionGraph> FusionGraph::build(const Fusion &fusion, DiagnosticEngine &diags) {
  // Vertex numbering: tensors in ascending number order.
  std::vector<TensorNum> tensorOf;
  std::map<TensorNum, size_t> vertexOf;
  for (const auto &[n, tv] : fusion.tensors) {
    vertexOf[n] = tensorOf.size();
    tensorOf.push_back(n);
  }
  Graph g(tensorOf.size());
  FusionGraph result;
  for (size_t ei = 0; ei < fusion.exprs.size(); ++ei) {
    const auto &e = fusion.exprs[ei];
    for (size_t oi = 0; oi < e.inputs.size(); ++oi) {
      if (!e.inputs[oi].tensor)
        continue;
      for (TensorNum out : e.outputs) {
        TensorNum in = *e.inputs[oi].tensor;
        boost::add_edge(vertexOf.at(in), vertexOf.at(out), g);
        result.edges_.push_back(FusionEdge{ei, oi, in, out, computeDomainMap(fusion, e, oi, out)});
      }
    }
  }
  std::vector<size_t> reversed;
  try {
    boost::topological_sort(g, std::back_inserter(reversed));
  } catch (const boost::not_a_dag &) {
    diags.error("cycle", "the fusion's expressions form a cycle", fusion.loc);
    return std::nullopt;
  }
  // Host IR runs host units through PostOnStream, so a unit's expressions may
  // be printed after their uses; the graph's order is what counts there.
  if (fusion.kind != BlockKind::HostIr && !checkDefinitionOrder(fusion, diags))
    return std::nullopt;
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it)
    result.topo_.push_back(tensorOf[*it]);
  return result;
}

std::vector<const FusionEdge *> FusionGraph::edgesInto(TensorNum t) const {
  std::vector<const FusionEdge *> r;
  for (const auto &e : edges_)
    if (e.consumer == t)
      r.push_back(&e);
  return r;
}

} // namespace shardcheck
