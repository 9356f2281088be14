// The named SMT queries about one producer -> consumer edge.
//
// EdgeChecker answers two questions with proofs or counterexamples:
//   checkLocal:    does every consumer device already hold every producer
//                  element its elements need? (query `edge-local`)
//   checkLowering: does a lowering (a collective over teams, alias, a local
//                  permute composite) deliver exactly the expected element to
//                  every slot of every consumer buffer, with the counts the
//                  collective requires? (queries `lowering-*`)
// Every check first asks `constraints-satisfiable`: a proof over an empty set
// of sizes proves nothing, so contradictory constraints are `unsupported`.
//
// Outcomes are an enum with a counterexample in the user's terms; an encoding
// limit or solver unknown is never reported as proved. This file does not
// choose lowerings (checker/Selection.h) or aggregate verdicts
// (checker/Checker.h).
#pragma once

#include "checker/Encoding.h"
#include "checker/Lowering.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// The answer to one claim about an edge.
struct Outcome {
  enum class Kind { Proved, Refuted, Unknown, Unsupported };
  Kind kind = Kind::Unknown;
  std::optional<Counterexample> counterexample; ///< For Refuted.
  std::string reason;                           ///< For Unknown / Unsupported.

  static Outcome proved() { return {Kind::Proved, std::nullopt, {}}; }
  static Outcome refuted(Counterexample c) { return {Kind::Refuted, std::move(c), {}}; }
  static Outcome unknown(std::string why) { return {Kind::Unknown, std::nullopt, std::move(why)}; }
  static Outcome unsupported(std::string why) {
    return {Kind::Unsupported, std::nullopt, std::move(why)};
  }
};

const char *outcomeKindName(Outcome::Kind k);

class EdgeChecker {
public:
  /// `universe` is every device of every mesh of the fusion ({0} if none):
  /// the devices of a tensor that has no mesh.
  EdgeChecker(const Fusion &fusion, const FusionEdge &edge, smt::Context &ctx,
              std::vector<int64_t> universe);

  /// Proved: no communication is needed. Refuted: a device lacks an element
  /// it needs (the counterexample names them and who holds it).
  Outcome checkLocal();

  /// Proved when some sizes satisfy the fusion's implied constraints and the
  /// edge's extent equalities; unsupported when none do (every claim about
  /// the edge would then hold vacuously).
  Outcome checkConstraints();

  /// Whether `lowering` is correct for this edge (docs/semantics.md,
  /// Lowerings).
  /// `compilerLowering`: the lowering is the compiler's own, whose
  /// reduction collectives apply no initial value. `compilerRuntime`: it is
  /// handed exactly its producer's and consumer's buffers by that nvFuser
  /// runtime, whose post functions check their shapes.
  Outcome checkLowering(const Lowering &lowering, bool compilerLowering = false,
                        std::optional<NvfuserRuntime> compilerRuntime = std::nullopt);

  /// Sizes for which the claims were proved, in user terms.
  std::vector<std::string> assumptions() const;

  /// Whether the edge is a reduction edge (a consumer reduction ID maps to a
  /// producer data ID that is not a broadcast).
  bool isReductionEdge() const;

  /// Why the producer's or consumer's constant device splits give devices
  /// different counts; empty when even. Only a padded lowering
  /// (docs/semantics.md, Padded collectives) moves such an edge.
  std::string unevenness() const;

private:
  Outcome checkCounts(const Lowering &lowering, const Team &team);
  Outcome checkSlots(const Lowering &lowering, const Team &team);
  Outcome checkPartials(const Lowering &lowering, const Team &team);
  /// A reduction of the producer's own buffers (compiler lowerings).
  Outcome checkBufferSum(const Lowering &lowering, const Team &team);
  Outcome checkInitialValue(const Lowering &lowering);
  /// The shape rules of nvFuser's post functions (Allgather, Gather,
  /// Scatter) on the local logical shapes (query `lowering-runtime-shapes`).
  Outcome checkRuntimeShapes(const Lowering &lowering, const Team &team, NvfuserRuntime runtime);
  /// A tensor's local logical shape as nvFuser allocates it: logical data
  /// IDs, a DID-parallel one as 1, one split by a DID as its local part.
  std::vector<smt::Int> localLogicalShape(const TensorView &tv);
  /// Throws Unsupported unless a ReduceScatter's chunks are flat ranges.
  void requireFlatScatter();
  Outcome checkPermuteComposite(const Lowering &lowering, const Team &team);
  /// Allgather+pad: every element a receiver needs sits in a member's
  /// padded buffer, at a slot that is not padding (`lowering-padded-sources`).
  Outcome checkPaddedSources(const Lowering &lowering, const Team &team);
  /// A padded collective moved slot for slot (SendRecv+pad, a compiler's
  /// Allgather+pad or AllToAll+pad): every receiver's element sits in the
  /// slot of the padded buffer the collective copies to it
  /// (`lowering-padded-pairs` for SendRecv, else `lowering-padded-slots`).
  Outcome checkPaddedSlots(const Lowering &lowering, const Team &team);
  /// The device and the slot of its producer buffer that `lowering` copies
  /// to slot t of receiver d's consumer buffer.
  std::pair<smt::Int, smt::Int> slotSource(const Lowering &lowering, const Team &team,
                                           const smt::Int &d, const smt::Int &t);
  /// The start of a slot query: a receiver `d` (named `d`), an element y it
  /// holds at offset `t`, the element x that y needs, the device `src` whose
  /// slot `srcOffset` the collective copies to t (slotSource).
  struct SlotQuery {
    ElementTerms y, x;
    smt::Int src, srcOffset;
  };
  SlotQuery slotQuery(const Lowering &lowering, const Team &team, std::vector<smt::Bool> &a);
  Outcome checkUniqueDestination(const Team &team);
  Outcome checkUncoveredDevices(const Lowering &lowering);
  /// For a compiler's collective: every consumer device is written by it.
  Outcome checkEveryDeviceWritten(const Lowering &lowering);
  ElementTerms neededElement(const ElementTerms &y, const std::string &prefix,
                             std::vector<smt::Bool> &constraints);
  smt::Bool baseConstraints();
  /// A device variable constrained to `devices`.
  smt::Int deviceAmong(const std::string &name, const std::vector<int64_t> &devices,
                       std::vector<smt::Bool> &constraints);
  /// A consumer element (variables y0, y1, ...) that `device` holds.
  ElementTerms heldConsumerElement(const smt::Int &device, std::vector<smt::Bool> &constraints);
  /// Adds the edge's constraints and symbol variables, then checks (and
  /// shrinks the sizes in a model when asked).
  smt::QueryResult solve(const std::string &name, std::vector<smt::Bool> assertions,
                         std::vector<std::string> vars, bool minimizeSizes = false);
  Counterexample makeCounterexample(const smt::Model &m, const std::string &message);
  std::vector<int64_t> consumerDevices() const;
  std::vector<int64_t> producerDevices() const;

  const Fusion &fusion_;
  const FusionEdge &edge_;
  const TensorView &producer_;
  const TensorView &consumer_;
  smt::Context &ctx_;
  Encoder enc_;
  std::vector<int64_t> universe_;
  std::optional<Outcome> constraintsOutcome_;
};

/// A counterexample from a model in the variables the encoders use: the
/// user's symbol values, device `d`, consumer element `y0, y1, ...` and
/// producer element `x0, x1, ...`, with `message`.
Counterexample counterexampleOf(const smt::Model &m, const Encoder &enc, std::string message);

/// Checks `lowering`; when an Allgather or AllToAll is refuted, tries the
/// same collective with a local permute and, if that is proved, updates
/// `lowering` to it. On an uneven edge it checks the padded form instead
/// (and updates `lowering` to it when proved). Returns the outcome for the (possibly updated)
/// lowering, or the original refutation.
Outcome proveWithPermuteFallback(EdgeChecker &checker, Lowering &lowering);

} // namespace shardcheck
