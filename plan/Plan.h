// The plan: what check-sharding proved, as steps an executor runs.
//
// A Plan is self-contained (DESIGN section 4): it embeds the one fusion it
// was built from (as shardcheck JSON IR, so every tensor's global shape,
// dtype, mesh and sharding travel with it), the buffers each device
// allocates with their local shapes, and the steps in order: local compute,
// collectives with their teams, roots and counts, aliases (buffer reuse) and
// local copies. Every step names the verdicts it rests on, with the checker
// version and a hash of the input, so a plan built on an unproved claim is
// visible as such and refused unless the user insists.
//
// Typed: collectives and reduction operators are the enums of
// ir/Collectives.h, not strings. The plan's own vocabularies (status, buffer
// kind, step kind, compute mode) are one list each below, X(name, spelling),
// that generates the enum and its spelling table (SC_PLAN_VOCABULARY); the
// printers (...Name) and the reader read that table, as ir/Collectives.h
// does for collectives. The format on disk is
// specified in docs/plan-format.md (format "shardcheck-plan", version 1); PlanReader.cpp and
// PlanWriter.cpp read and write it, and PlanVerifier.h checks a plan's internal consistency (every
// name defined, every count equal to its buffer's size, teams within the meshes, ...). Whether a
// plan is *correct* is not this library's business: the checker proves it, the executor runs it and
// compares with the reference.
#pragma once

#include "ir/Collectives.h"
#include "ir/Constraints.h"
#include "ir/Extent.h"
#include "ir/Fusion.h"
#include "util/Spellings.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

constexpr const char *kPlanFormat = "shardcheck-plan";
/// The newest version this shardcheck reads and writes. A plan is written
/// with the lowest version that expresses it (planFormatVersion): version 2
/// added loop steps and slice buffers, so a plan without them is still
/// version 1, byte for byte as before.
constexpr int kPlanVersion = 2;
constexpr int kPlanLoopVersion = 2;

/// SC_PLAN_VOCABULARY(Enum, kTable, LIST): the enum `Enum` of an X(name,
/// spelling) list and `kTable`, its Spelling<Enum> rows in the list's order.
#define SC_PLAN_ENUMERATOR(name, spelling) name,
#define SC_PLAN_SPELLING(name, spelling) Spelling<E>{name, spelling},
#define SC_PLAN_VOCABULARY(Enum, kTable, LIST)                                                     \
  enum class Enum { LIST(SC_PLAN_ENUMERATOR) };                                                    \
  inline constexpr auto kTable = [] {                                                              \
    using E = Enum;                                                                                \
    using enum Enum;                                                                               \
    return std::array{LIST(SC_PLAN_SPELLING)};                                                     \
  }()

// How sure the checker is of a step's claim. X(name, spelling)
#define SHARDCHECK_PLAN_STATUSES(X) X(Proved, "proved") X(Refuted, "refuted") X(Unknown, "unknown")
SC_PLAN_VOCABULARY(PlanStatus, kPlanStatuses, SHARDCHECK_PLAN_STATUSES);
const char *planStatusName(PlanStatus s);

/// One verdict a step rests on: an edge and the claim made about it.
struct PlanVerdict {
  std::string edge;  ///< `T1 -> T3`.
  size_t expr = 0;   ///< Index into the fusion's exprs.
  std::string claim; ///< `none`, `alias`, `Allgather over team (0 1)`.
  PlanStatus status = PlanStatus::Unknown;
  std::string source; ///< `checker`, or the compiler's choice's origin.
  std::string detail; ///< Counterexample or reason, when not proved.
  std::string checkerVersion;
  std::string inputSha256;
};

/// One team of a collective, in rank order.
struct PlanTeam {
  std::vector<int64_t> devices;
  std::optional<int64_t> root;
  std::vector<std::pair<int64_t, int64_t>> pairs; ///< SendRecv (src, dst).
};

// What the slots of a buffer hold (docs/plan-format.md, "Buffers"):
//   Tensor    a fusion tensor's local buffer
//   View      producer elements laid out as the consumer's buffer
//   Gathered  Allgather+permute temporary: member i's buffer as chunk i
//   Packed    AllToAll+permute send buffer, packed by destination
//   Unpacked  AllToAll+permute receive buffer, by source
//   Partial   reduction partials laid out for a reduction collective
//   Slice     a loop's window of a tensor buffer (version 2)
// X(name, spelling)
#define SHARDCHECK_BUFFER_KINDS(X)                                                                 \
  X(Tensor, "tensor")                                                                              \
  X(View, "view")                                                                                  \
  X(Gathered, "gathered")                                                                          \
  X(Packed, "packed")                                                                              \
  X(Unpacked, "unpacked")                                                                          \
  X(Partial, "partial")                                                                            \
  X(Slice, "slice")
SC_PLAN_VOCABULARY(BufferKind, kBufferKinds, SHARDCHECK_BUFFER_KINDS);
const char *bufferKindName(BufferKind k);

/// A buffer's shape on one device.
struct PlanLocal {
  int64_t device = 0;
  std::vector<Extent> shape;
  /// The elements the buffer holds there when an uneven device split leaves
  /// fewer than its slots (the rest is padding); absent otherwise.
  std::optional<int64_t> held = std::nullopt;
};

struct PlanBuffer {
  std::string name;
  BufferKind kind = BufferKind::Tensor;
  /// Whose elements the slots hold: the tensor itself, the producer of a
  /// View/Gathered/Packed/Unpacked buffer, the consumer of a Partial one.
  TensorNum tensor = 0;
  DataType dtype = DataType::Unknown;
  /// View, Packed, Unpacked, Partial: the consumer and the edge (expr and
  /// operand) whose layout they follow.
  std::optional<TensorNum> consumer;
  std::optional<size_t> expr, operand;
  /// Gathered, Packed, Unpacked, Partial: the teams of the collective.
  std::vector<PlanTeam> teams;
  /// Partial: Allreduce, Reduce or ReduceScatter.
  std::optional<CollectiveType> collective;
  /// Slice: the tensor buffer it is a window of, the axis of that buffer's
  /// local shape it fixes, and the loop variable giving the index there.
  std::string base;
  std::optional<size_t> axis;
  std::string loopVar;
  /// Slice of a Swizzle1D stream axis (nvFuser's ShardByStream): the team
  /// whose order gives each device its team index t; in iteration s the
  /// device takes the window swizzledSlot(s, t, D) (ir/Swizzle1D.h), not s.
  /// Empty for a plain slice.
  std::vector<int64_t> swizzleTeam;
  std::vector<PlanLocal> local;
};

/// The index of `slice`'s window in its base on `device` in iteration
/// `iteration`: the iteration, or its swizzled slot (nullopt for a device
/// outside the swizzle team).
std::optional<int64_t> sliceWindowIndex(const PlanBuffer &slice, int64_t device, int64_t iteration);

/// A CollectivePermute step's peers (docs/plan-format.md, "Rings"): in
/// iteration s of the loop over `loopVar`, the member of team index t
/// receives from ringRecvPeer(s, t, D, recvShift) and sends to
/// ringSendPeer(s, t, D, sendShift) (ir/Swizzle1D.h); nvFuser's ring has
/// both shifts 0.
struct PlanRing {
  std::string loopVar;
  int64_t recvShift = 0, sendShift = 0;
};

// What a step does. X(name, spelling)
#define SHARDCHECK_STEP_KINDS(X)                                                                   \
  X(Compute, "compute")                                                                            \
  X(Collective, "collective") X(Alias, "alias") X(Copy, "copy") X(Loop, "loop")
SC_PLAN_VOCABULARY(StepKind, kStepKinds, SHARDCHECK_STEP_KINDS);
const char *stepKindName(StepKind k);

// Which part of an expression a compute step evaluates:
//   Whole     the whole op on the elements the device holds
//   Partial   a reduction's local part over held elements (identity elsewhere)
//   Epilogue  what follows the reduction (a linear's bias, a non-identity init)
// X(name, spelling)
#define SHARDCHECK_COMPUTE_MODES(X) X(Whole, "whole") X(Partial, "partial") X(Epilogue, "epilogue")
SC_PLAN_VOCABULARY(ComputeMode, kComputeModes, SHARDCHECK_COMPUTE_MODES);
const char *computeModeName(ComputeMode m);

/// Buffer counts of one device in a collective.
struct PlanCount {
  int64_t device = 0;
  std::optional<Extent> in, out; ///< Absent for a device that only sends or receives.
};

struct PlanStep {
  StepKind kind = StepKind::Compute;
  /// The devices that act in this step; others skip it.
  std::vector<int64_t> devices;
  /// Compute: the expression and its operands' buffers ("" for a scalar
  /// operand). Copy/Alias/Collective: `inputs` has one buffer.
  std::optional<size_t> expr;
  ComputeMode mode = ComputeMode::Whole;
  std::vector<std::string> inputs;
  std::string output;
  /// Collective: which one (DESIGN section 3), its teams, reduction
  /// operator (reductions only) and per-device counts.
  std::optional<CollectiveType> collective;
  std::vector<PlanTeam> teams;
  std::optional<ReduceOp> reduceOp;
  std::vector<PlanCount> counts;
  /// CollectivePermute: its per-iteration peers over its one team.
  std::optional<PlanRing> ring;
  /// Copy: the edge whose consumer-side expectation the output follows,
  /// when the output is the consumer tensor's own buffer.
  std::optional<size_t> operand;
  /// Loop (version 2): the steps after this one, `body` of them, run once
  /// per value of `loopVar` from `lo` to `hi` - 1, with every slice buffer
  /// of `loopVar` at that index.
  std::string loopVar;
  Extent lo, hi;
  size_t body = 0;
  std::vector<PlanVerdict> restsOn;

  /// A step is verified when it rests on at least one verdict and every
  /// verdict it rests on is proved.
  bool verified() const;
};

/// A constraint on symbol values the proofs assume (`i0 % 2 == 0`).
/// A size constraint the plan states (ir/Constraints.h).
using PlanConstraint = SizeConstraint;
/// Its kinds' spellings in a plan.
inline constexpr Spelling<PlanConstraint::Kind> kPlanConstraintKinds[] = {
    {PlanConstraint::Kind::Divisible, "divisible"},
    {PlanConstraint::Kind::Equal, "equal"},
    {PlanConstraint::Kind::Positive, "positive"}};

/// Summary of one fusion tensor (informational; the fusion is authoritative).
struct PlanTensor {
  TensorNum tensor = 0;
  std::string role; ///< `input`, `output`, `intermediate`.
  std::vector<Extent> shape;
  std::string sharding; ///< The printed tensor line.
};

struct Plan {
  int version = kPlanVersion;
  std::string checkerVersion;
  std::string inputFile;
  std::string inputSha256;
  size_t fusionIndex = 0;
  std::string lowerings; ///< `checker` or `compiler`.
  /// Devices holding tensors without a mesh.
  std::vector<int64_t> devices;
  std::vector<PlanConstraint> constraints;
  Fusion fusion;
  std::vector<PlanTensor> tensors;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;

  /// The buffer called `name`, or null.
  const PlanBuffer *buffer(const std::string &name) const;
  /// Whether every step is verified.
  bool verified() const;
};

/// The (source, destination) pairs of a CollectivePermute step's `team` in
/// iteration `iteration`: each member to its send peer.
std::vector<std::pair<int64_t, int64_t>> ringPairs(const PlanRing &ring, const PlanTeam &team,
                                                   int64_t iteration);

/// The lowest format version that expresses `plan`: kPlanLoopVersion when it
/// has a loop step or a slice buffer, else 1.
int planFormatVersion(const Plan &plan);

/// The plan as JSON text (docs/plan-format.md), with planFormatVersion.
std::string planToJsonText(const Plan &plan);

/// Reads and validates a plan. `file` names it in locations. Malformed
/// JSON, a wrong format or version, and any inconsistency (an undefined
/// buffer, a count that is not its buffer's size, a team device outside
/// the plan, a step reading a buffer nothing wrote) are InputErrors.
Plan planFromJsonText(const std::string &text, const std::string &file);

/// The element count of a local shape: the product of its extents, constant
/// factors folded and factors of 1 left out (`( ceilDiv(i0, 2) * 4 )`). The
/// plan writer and the loader's count check both use it, so equal shapes give
/// equal spellings.
Extent localCount(const std::vector<Extent> &shape);

/// The symbols a plan mentions, sorted: its extents' and its scalar operands' (`i5` of
/// `T1 * i5`), all of which a run must bind.
std::vector<std::string> planSymbols(const Plan &plan);

} // namespace shardcheck
