// The fusion IR: IterDomains, transforms, TensorViews, expressions, fusions.
//
// This mirrors what nvFuser prints, not nvFuser's in-memory classes. Nodes are
// plain structs owned by a Fusion and referred to by their printed numbers: an
// IterDomain by its name number (the `21` of `bdeviceIdx.x21{128}`), a tensor by
// its number (the `1` of `T1`). Transforms (splits, merges, ...) are stored as
// data in the fusion, and each IterDomain records which transform defined it.
//
// Fusion's add* factories check structural invariants (unique numbers, defined
// operands) with SC_ASSERT: they are for code that already validated its input
// (the reader validates user input and reports located errors first).
//
// Sharding semantics live in the checker; producer -> consumer edges and their
// domain maps in ir/FusionGraph.h; well-formedness lints in ir/Lints.h.
#pragma once

#include "ir/DeviceMesh.h"
#include "ir/Extent.h"
#include "ir/Types.h"
#include "util/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

using IdNum = int64_t; ///< An IterDomain's name number.
using TensorNum = int; ///< A TensorView's number (T<n>).

struct IterDomain {
  IdNum number = 0;
  IterType iterType = IterType::Iteration;
  ParallelType parallel = ParallelType::Serial;
  Extent extent;                        ///< For expanded broadcasts: 1.
  std::optional<Extent> expandedExtent; ///< `bS19{1 ex 32}` -> 32.
  std::optional<Extent> start, stop;    ///< `{start : stop : extent}` forms.
  bool rfactor = false;                 ///< `rf` suffix.
  std::string extraSuffix;              ///< `_p`, `_c`, kept for printing.
  std::optional<size_t> definition;     ///< Index into Fusion::transforms.
  std::vector<size_t> uses;             ///< Transforms taking this ID, in order.
  SourceLoc loc;                        ///< First place it was printed.

  bool isBroadcast() const { return iterType == IterType::Broadcast; }
  bool isReduction() const { return iterType == IterType::Reduction; }
  bool isDeviceParallel() const { return isDeviceDim(parallel); }
  /// nvFuser spelling, e.g. `ideviceIdx.x2{4}`, `bS19{1 ex 32}`, `iS5{i0}rf`.
  std::string str() const;
};

struct Transform {
  enum class Kind { Split, Merge, Resize, Swizzle2D, Swizzle1D };
  Kind kind = Kind::Split;
  std::vector<IdNum> inputs;
  std::vector<IdNum> outputs;
  /// Split: the factor. Inner split: inner extent = factor; outer split
  /// (`Outer split:`): outer extent = factor.
  Extent factor;
  bool innerSplit = true;
  /// Split: a chunked split (torch.chunk's nesting; nvFuser has none and
  /// never prints one): an outer split by `factor` whose input holds valid
  /// positions [0, L) for the current indices of the splits enclosing it, and
  /// whose inner part is ceilDiv(L, factor) per those indices, not
  /// ceilDiv(extent, factor). Declared extents stay the plain split's, so
  /// buffers keep their uniform padded shape (docs/semantics.md, "Chunked
  /// splits"). Only constant extents; its input is a logical ID or the inner
  /// output of an outer split (chunked or not) of such an input.
  bool chunked = false;
  /// Resize: left and right expansion.
  Extent left, right;
  /// Swizzles: the swizzle kind (`Xor`) or parallel type spelling.
  std::string detail;
  SourceLoc loc;
};

const char *transformKindName(Transform::Kind k);

enum class Contiguity { True, False, None };

struct TensorView {
  TensorNum number = 0;
  MemoryType memory = MemoryType::Global;
  DataType dtype = DataType::Unknown;
  /// Domains as lists of IterDomain numbers. `root` and `allocation` are empty
  /// when the tensor has none; `logical` and `loop` are never both empty
  /// except for zero-dim tensors.
  std::vector<IdNum> root, logical, allocation, loop;
  std::vector<Contiguity> contiguity;
  std::optional<DeviceMesh> mesh;
  std::optional<int> caPos, producePos;
  /// Whether a TransformPrinter (or JSON) gave the domains; otherwise the
  /// reader took logical = loop from the printed tensor line.
  bool hasTransformInfo = false;
  SourceLoc loc;        ///< First place the tensor was printed.
  SourceLoc domainsLoc; ///< Its TransformPrinter header, if any.

  std::string name() const { return "T" + std::to_string(number); }
  bool hasRoot() const { return !root.empty(); }
  bool hasAllocation() const { return !allocation.empty(); }
  const std::vector<IdNum> &rootOrLogical() const { return root.empty() ? logical : root; }
  const std::vector<IdNum> &allocationOrLogical() const {
    return allocation.empty() ? logical : allocation;
  }
};

/// Every op kind the IR distinguishes. Ops are read even when the checker has
/// no rule for them (Pad, Cat, ...): it then reports them as unsupported.
enum class OpKind {
  Set,           ///< `Set(` plain copy (LoadStoreOp)
  Permute,       ///< `Set.Permute(`: consumer root -> logical is a permutation
  SegmenterSet,  ///< `SegmenterSet(`
  LoadStore,     ///< other load/store spellings (`LdMatrix`, `CpAsync`, ...)
  Unary,         ///< `expf(X)`, `-X`, `relu(X)`
  Cast,          ///< `__to_float(X)`, `(float)(X)`
  Binary,        ///< `A + B`, `max(A, B)`
  Ternary,       ///< other three-operand pointwise ops (`clamp`, `lerp`)
  Where,         ///< `where(C, A, B)`
  Broadcast,     ///< `broadcast( IN, flags = {...} )`
  Squeeze,       ///< `squeeze( IN, flags = {...} )`
  Expand,        ///< `expand( IN )`
  Reduction,     ///< `reduction( IN, op = add, ... )`
  Reshape,       ///< `reshape( IN )` / `view( IN )`
  Matmul,        ///< `matmul(A, B)`
  Linear,        ///< `linear(A, B[, BIAS])`
  Communication, ///< host IR `Communication N (...)`
  Other,         ///< pad, cat, slice, select, full, iota, sdpa, ...
};

const char *opKindName(OpKind k);
/// Whether values flow element-wise (positional domain map).
bool isPointwiseKind(OpKind k);
/// Whether each consumer element is a copy of the one producer element it
/// needs (set, permute, broadcast, squeeze, expand, reshape, host IR
/// communication): the only ops whose consumer may alias its producer's
/// buffer or be written by a collective directly. One list for the checker
/// and the plan builder.
bool isCopyKind(OpKind k);

/// A host IR communication: the compiler's lowering of one edge.
struct CommunicationInfo {
  int number = 0;
  CollectiveType type = CollectiveType::Allgather;
  std::vector<int64_t> team;
  std::optional<int64_t> root;
  std::string backend; ///< `NCCL`, `UCC`, or empty when not printed.
};

/// An operand: a tensor, or a scalar kept as its spelling (`2.0`, `i23`).
struct Operand {
  std::optional<TensorNum> tensor;
  std::string scalar;

  static Operand ofTensor(TensorNum t) { return Operand{t, {}}; }
  static Operand ofScalar(std::string s) { return Operand{std::nullopt, std::move(s)}; }
  bool isTensor() const { return tensor.has_value(); }
};

struct Expr {
  OpKind kind = OpKind::Set;
  /// The printed op spelling: `Set`, `+`, `max`, `expf`, `__to_float`,
  /// `reduction`, `pad`, ... For Communication: the collective's name.
  std::string op;
  std::vector<Operand> inputs;
  std::vector<TensorNum> outputs;
  /// Broadcast/squeeze flags, one per consumer (broadcast) or producer
  /// (squeeze) logical axis; empty when the dump printed none.
  std::vector<bool> flags;
  /// Other printed attributes in order: `cache_op`, `op` (reduction
  /// operator: add, max, min, mul), `initial value`, `allreduce`, ...
  std::vector<std::pair<std::string, std::string>> attrs;
  std::optional<CommunicationInfo> communication;
  SourceLoc loc;

  /// The value of an attribute, or empty.
  std::string attr(const std::string &key) const;
  std::vector<TensorNum> tensorInputs() const;
};

/// The attribute the dump reader gives a host IR statement posted inside a
/// host loop (`FOR StreamIdx in iStreamIdx2{i0}`): it acts on one
/// iteration's slices (ir/HostLoops.h says which forms are modelled).
inline constexpr const char *kHostLoopAttr = "host_loop";

/// Whether `e` is a host IR Allreduce, Reduce or ReduceScatter.
bool isReducingCommunication(const Expr &e);

/// The attribute (`padded=true`) of a host IR Communication on the padded
/// buffers of an uneven device split (docs/semantics.md, Padded
/// collectives): every member's buffer is its ceilDiv chunk, padding slots
/// included, moved slot for slot. Read by isPaddedCommunication, the one
/// place the readers' attrs, the checker and the plan builder agree on.
inline constexpr const char *kPaddedAttr = "padded";
bool isPaddedCommunication(const Expr &e);
/// The attribute (`op=max`) naming a reducing Communication's operator with
/// a reduction's spelling (add, mul, max, min); none: a sum (nvFuser's).
inline constexpr const char *kCommunicationOpAttr = "op";
/// The attributes of a reducing Communication read from a DTensor document
/// (docs/dtensor.md): the reduce op its input's partial axes stand for
/// (`partial_op`, DTensor's Partial(op)) and the one the collective was
/// issued with (`issued_op`, DTensor's reduce_op; the Communication's `op`,
/// an average its sum then a division), each sum, avg, max or min. Where
/// they differ over two or more devices, the collective computes another
/// value than the tensor stands for (checker: communicationRuleViolation).
inline constexpr const char *kPartialOpAttr = "partial_op";
inline constexpr const char *kIssuedOpAttr = "issued_op";
/// Whether `e` reduces over an axis (reduction, matmul, linear, a reducing
/// host IR communication).
bool isReductionOp(const Expr &e);
/// The operator that combines partial results of a reduction op: Sum (add,
/// matmul, linear), Prod, Max, Min; nullopt when unknown.
std::optional<ReduceOp> reduceOpOf(const Expr &e);
/// reduceOpOf's spelling (`sum`, ...); empty when unknown.
std::string reductionOperatorOf(const Expr &e);
/// Whether a reduction's printed `initial value` is its operator's identity
/// (true when none is printed); nullopt when the value cannot be read.
std::optional<bool> initialValueIsIdentity(const Expr &e);

/// Which kind of printed block a fusion came from.
enum class BlockKind { KernelMath, Kernel, TransformsOnly, HostIr, SegmentedFusion, Json };
const char *blockKindName(BlockKind k);

/// A segmented-fusion group `g{(pointwise) ...}`: informational.
struct SegmentGroup {
  std::string name;
  std::string scheduler;
  std::vector<size_t> exprs; ///< Indices into Fusion::exprs.
};

class Fusion {
public:
  BlockKind kind = BlockKind::Kernel;
  SourceLoc loc; ///< Where the block starts.

  std::vector<TensorNum> inputs, outputs;
  std::map<TensorNum, TensorView> tensors;
  std::map<IdNum, IterDomain> ids;
  std::vector<Transform> transforms;
  std::vector<Expr> exprs;
  std::vector<SegmentGroup> groups;

  // --- Factories (checked invariants). ---
  /// Adds an IterDomain; its number must be new. Its definition and uses are
  /// recorded by addTransform, whatever it arrives with.
  IterDomain &addIterDomain(IterDomain id);
  /// Adds a transform; its inputs must exist, its outputs must exist and have
  /// no definition yet. Records the definition on the outputs and the use on
  /// the inputs.
  size_t addTransform(Transform t);
  /// Adds a tensor; its number must be new and its IDs must exist.
  TensorView &addTensor(TensorView tv);
  /// Adds an expression; its tensor operands and outputs must exist.
  size_t addExpr(Expr e);

  // --- Lookups. ---
  bool hasId(IdNum n) const { return ids.count(n) > 0; }
  bool hasTensor(TensorNum n) const { return tensors.count(n) > 0; }
  const IterDomain &id(IdNum n) const;
  IterDomain &id(IdNum n);
  const TensorView &tensor(TensorNum n) const;
  TensorView &tensor(TensorNum n);
  /// The transform that defines an ID, if any.
  const Transform *definition(IdNum n) const;
  /// The expression that defines a tensor (the last one, if several), or null.
  const Expr *producerExpr(TensorNum n) const;

  /// Tensor line in nvFuser's current style:
  /// `T1_g_float[ideviceIdx.x2{2}, iS3{4}] (DeviceMesh{0 1})`.
  std::string tensorStr(TensorNum n) const;
};

/// Everything read from one input file: one fusion per block.
/// Where a truncated paste ends: the dump reader read every complete
/// statement before it and nothing after.
struct InputEnd {
  SourceLoc loc;
  std::string message;
};

struct Document {
  std::string file;
  std::vector<Fusion> fusions;
  /// Set when the input ends early (mid-statement or inside a block): the
  /// fusions hold what was complete; the analysis is partial.
  std::optional<InputEnd> truncated;
};

} // namespace shardcheck
