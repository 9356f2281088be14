// Brute-force evaluation of an edge's communication semantics.
//
// The independent reference for the SMT checker (DESIGN section 3, "Every SMT
// verdict is cross-checked ... against brute-force enumeration"). For one
// producer -> consumer edge at concrete bindings it enumerates every device and
// every element and decides, exactly as docs/semantics.md defines them:
//   - whether the edge needs no communication (bruteNeedsNoCommunication), and
//   - whether a given lowering is correct (bruteCheckLowering): every kind of
//     the spec's tables, the counts each requires, partial-sum multiplicity for
//     reductions, devices of the consumer's mesh outside every team, devices
//     outside the meshes, and local-permute composites of Allgather, Gather
//     and AllToAll; padded lowerings, shardcheck's own (with the unpad copy)
//     and a compiler's padded Communication (slot for slot on the padded
//     buffers: Allgather, AllToAll, SendRecv, and Allreduce, Reduce and
//     ReduceScatter of the members' own padded buffers).
// A failure comes with the FIRST counterexample in a fixed order: lowering
// shape, then counts team by team, then devices ascending, offsets ascending.
//
// What it does not do: prove anything for all sizes (that is the SMT
// checker's job), choose lowerings, or share code with the SMT encoding. It
// uses only ir/ and the vocabulary in checker/Lowering.h.
#pragma once

#include "checker/Lowering.h"
#include "checker/bruteforce/ConcreteTensor.h"
#include "checker/bruteforce/Outcome.h"
#include "ir/FusionGraph.h"

#include <cstdint>
#include <variant>
#include <vector>

namespace shardcheck::bruteforce {

/// Both tensors of an edge and the "needs" relation between their elements.
class EdgeModel {
public:
  /// Builds the model, or an Unsupported / InvalidBindings result. The model
  /// refers to `fusion`, which must outlive it.
  static std::variant<EdgeModel, BruteResult> build(const Fusion &fusion, const FusionEdge &edge,
                                                    const Bindings &bindings);

  /// Elements over logical data IDs.
  const ConcreteTensor &producer() const { return producer_; }
  /// Elements over root data IDs.
  const ConcreteTensor &consumer() const { return consumer_; }
  const Bindings &bindings() const { return bindings_; }

  /// The producer elements consumer element `y` needs, ascending.
  std::vector<int64_t> needs(int64_t y) const;
  /// Whether some consumer reduction ID maps to a non-broadcast producer
  /// data ID.
  bool isReductionEdge() const { return reductionEdge_; }

private:
  /// How one producer data coordinate of a needed element is chosen.
  struct AxisRule {
    enum class Kind { FromConsumer, Ranged, Zero } kind = Kind::Zero;
    size_t consumerCoord = 0; ///< FromConsumer: which consumer coordinate.
    int64_t extent = 1;       ///< Ranged: the producer extent.
  };

  EdgeModel(ConcreteTensor producer, ConcreteTensor consumer, Bindings bindings)
      : producer_(std::move(producer)), consumer_(std::move(consumer)),
        bindings_(std::move(bindings)) {}
  void deriveRules(const Fusion &fusion, const FusionEdge &edge);

  ConcreteTensor producer_;
  ConcreteTensor consumer_;
  Bindings bindings_;
  std::vector<AxisRule> rules_; ///< One per producer data ID.
  int64_t rangedCount_ = 1;     ///< Producer elements per consumer element.
  bool reductionEdge_ = false;
};

/// Decides "the edge needs no communication": every device of the consumer's
/// mesh holds every producer element each consumer element it holds needs.
/// Fails with (bindings, device, consumer index, producer index it lacks,
/// holders of that index).
BruteResult bruteNeedsNoCommunication(const Fusion &fusion, const FusionEdge &edge,
                                      const Bindings &bindings);

/// Who runs a lowering: shardcheck's plan copies locally on a consumer
/// device no team writes; a compiler's collective (a host IR
/// Communication, e.g. DTensor's) does not, so every consumer device must
/// receive from it.
enum class Issuer { Shardcheck, Compiler };

/// Decides whether `lowering` is a correct implementation of the edge.
BruteResult bruteCheckLowering(const Fusion &fusion, const FusionEdge &edge,
                               const Bindings &bindings, const Lowering &lowering,
                               Issuer issuer = Issuer::Shardcheck);

/// The same two checks on an already built model (for callers checking many
/// lowerings of one edge).
BruteResult bruteNeedsNoCommunication(const EdgeModel &model);
BruteResult bruteCheckLowering(const EdgeModel &model, const Lowering &lowering,
                               Issuer issuer = Issuer::Shardcheck);

} // namespace shardcheck::bruteforce
