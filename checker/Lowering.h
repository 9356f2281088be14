// What an edge is lowered to, and the verdicts the checker gives.
//
// These are the checker's vocabulary, shared by the SMT encoding, the
// brute-force evaluator, the driver and (later) the plan. Nothing here decides
// anything; see docs/semantics.md for the meaning of each lowering.
#pragma once

#include "ir/Fusion.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// The communication an edge needs or was given (DESIGN section 6 names):
/// none, an alias, or one of the collectives ir/Collectives.h marks
/// `lowering`, in that list's order. That no lowering serves an edge is a
/// verdict's result (EdgeResult, checker/Checker.h), not a kind.
enum class CommKind {
  None,
  Alias,
#define SC_COMM_KIND(name, hostIr, lowering, ...) SC_COLLECTIVE_IF(lowering, name, )
  SHARDCHECK_COLLECTIVES(SC_COMM_KIND)
#undef SC_COMM_KIND
  /// nvFuser's ring step (checker/RingChecker.h): never a lowering the
  /// checker chooses (the list's `lowering` column is false), only the
  /// compiler's own, judged as a ring.
  CollectivePermute,
};

/// How reports name the lowering a verdict lacks: an edge no single lowering
/// serves, or a compiler collective the checker does not lower to.
inline constexpr const char *kNoLoweringName = "unsupported";
/// What reports name the lowering of an edge the planner's multi-step plan
/// serves (checker/Planner.h): no single collective.
inline constexpr const char *kMultiStepName = "multi-step";

const char *commKindName(CommKind k);

/// A device list as messages print it: `(0 1 3)`; a run of more than 16
/// consecutive devices as `(0..1023)`.
std::string devicesStr(const std::vector<int64_t> &devices);
std::optional<CommKind> commKindFromCollective(CollectiveType c);
/// The collective a lowering runs; nullopt for None and Alias.
std::optional<CollectiveType> collectiveOfCommKind(CommKind k);
bool isReductionComm(CommKind k);
/// What a lowering's root does (RootRole::None for kinds without one).
RootRole commRootRole(CommKind k);
bool isRootedComm(CommKind k);

/// One group of devices taking part in a collective, in rank order.
struct Team {
  std::vector<int64_t> devices;
  std::optional<int64_t> root; ///< Gather, Scatter, Broadcast, Reduce.
  /// SendRecv: (src, dst) pairs; `devices` is then empty.
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

/// A candidate lowering of one edge.
struct Lowering {
  CommKind kind = CommKind::None;
  std::vector<Team> teams;
  /// The collective writes a temporary laid out with the moved axis
  /// outermost, then a local permute produces the consumer's layout.
  bool localPermute = false;
  /// Reduction kinds: what each member contributes. Partials: a local
  /// reduction step computes them in the consumer's layout (shardcheck's own
  /// lowerings). ProducerBuffer: the producer's own buffer as it is, which is
  /// what nvFuser's runtime hands a Communication (compiler lowerings).
  enum class ReduceInput { Partials, ProducerBuffer };
  ReduceInput reduceInput = ReduceInput::Partials;
  /// The lowering of an edge with an uneven device split (docs/semantics.md,
  /// Padded collectives): every member's buffer has the ceilDiv chunk size,
  /// padding slots hold nothing, and the collective moves the padded
  /// buffers. Allgather and AllToAll then also have `localPermute` (the
  /// unpad copy places each element); reductions act on partials.
  bool padded = false;

  /// `Allgather team=(0 1)`, `Allgather+permute teams=(0 1)(2 3)`,
  /// `Allgather+pad team=(0 1)`, `alias`.
  std::string str() const;
};

/// Whether a padded lowering is one the semantics define: Allgather or
/// AllToAll with the unpad copy (`localPermute`), SendRecv pairs of whole
/// padded buffers, or a reduction of partials (Allreduce, Reduce,
/// ReduceScatter).
bool isModelledPadding(const Lowering &l);
/// The padded form of `l` (Allgather and AllToAll gain the unpad copy), or
/// nullopt for a kind without one.
std::optional<Lowering> paddedLowering(const Lowering &l);

/// Symbol values, e.g. {"i0": 8}.
using Bindings = std::map<std::string, int64_t>;

/// A concrete witness that a claim fails, in the user's terms.
struct Counterexample {
  Bindings bindings;
  int64_t device = -1;
  /// Consumer element (over consumer root data IDs) and the producer
  /// element it needs (over producer data IDs), when relevant.
  std::vector<int64_t> consumerIndex;
  std::vector<int64_t> producerIndex;
  /// Devices that hold producerIndex (empty: nobody).
  std::vector<int64_t> holders;
  /// Slot offset in the consumer's local buffer, for lowering failures.
  std::optional<int64_t> offset;
  /// A one-line explanation, e.g. "Allgather over team (0 1) needs an
  /// output of 2 x 1 elements but T1 holds 1 on each device".
  std::string message;
  /// For a refutation by one of nvFuser's runtime rules rather than by where
  /// elements land: which rule (`root-in-team`, `initial-value`,
  /// `runtime-shapes`). Empty otherwise.
  std::string rule;
};

/// The nvFuser runtime whose rules a compiler confirmation models
/// (`check-sharding --nvfuser-runtime`). Its Communication post functions
/// split the buffers they are handed along dim 0 of the local logical shape
/// and compare the pieces (docs/semantics.md, Compiler choices).
enum class NvfuserRuntime {
  Dec2024, ///< Since Dec 2024 (the default): pieces must have equal shapes.
  Nov2024, ///< Before: only the pieces' element counts are compared.
};
/// `2024-12`, `2024-11`.
const char *nvfuserRuntimeName(NvfuserRuntime r);
std::optional<NvfuserRuntime> parseNvfuserRuntime(const std::string &s);

enum class Status { Proved, Refuted, Unknown };
const char *statusName(Status s);

} // namespace shardcheck
