// What a host IR statement posted inside a stream loop is, structurally.
//
// nvFuser's stream-parallel host programs (2025-26) run one iteration of a
// host loop per stream, each on one slice of its tensors:
//
//   FOR StreamIdx in iStreamIdx11{i0}:            (or `FOR i18 from 0 to 3:`)
//     T4 = HirAliasSelect( T0, axis = iS0{i0}, index = StreamIdx )   read view
//     T5 = HirAliasSelect( T3, axis = iStreamIdx11{i0}, index = StreamIdx )
//     Communication 59 (type=Allgather, ..., input=T4, output=T5)
//     T6 = HirAliasSelect( T2, axis = iStreamIdx5{i0}, index = StreamIdx )
//     T6 = matmul( T5, T1 )
//
// A HirAliasSelect whose output another statement then writes is a write
// view: it names the slice of its base that statement writes. The dump
// reader drops such statements (they are no data flow) and records them on
// the writing statement, whatever it is (kOutputViewAttr ...); the printer
// prints them back before it. Every statement in a loop body also records
// its loop (kHostLoopAttr, kHostLoopIdAttr: which of the block's loops) and
// any branch it is in. This file reads those facts into a LoopedStatement:
// the loop (its variable and range [lo, hi)), the read views among its
// operands and its write view (base tensor, sliced axis), or says why the
// statement is not of that form (a branch inside the loop, a view indexed by
// something other than the loop variable, an operand another loop computes,
// a result read after the loop, ...).
//
// It does not decide anything: the checker (checker/LoopChecker.h) proves
// what a LoopedStatement claims, the brute force
// (checker/bruteforce/LoopSlices.h) enumerates it.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <variant>

namespace shardcheck {

/// Attributes of a statement whose output a write view named: the base
/// tensor (`T3`), the sliced axis as printed (`iStreamIdx11{i0}`) and the
/// index (`StreamIdx`).
inline constexpr const char *kOutputViewAttr = "output_view";
inline constexpr const char *kOutputViewAxisAttr = "output_view_axis";
inline constexpr const char *kOutputViewIndexAttr = "output_view_index";
/// The op of a write view other than `HirAliasSelect` (`ShardByStream`,
/// `select`; its `stream_index` is kept as the index), which the loop
/// model does not read.
inline constexpr const char *kOutputViewOpAttr = "output_view_op";
/// The header of an `IF`/`ELSE` branch a statement is posted in.
inline constexpr const char *kHostBranchAttr = "host_branch";
/// Which loop of its block a statement is in (`1`, `2`, ...: loops with a
/// statement, in order), so that two loops with one header stay apart.
inline constexpr const char *kHostLoopIdAttr = "host_loop_id";
/// The headers of the loops around a statement's own loop, outermost
/// first, joined by ` ; ` (only for nested loops).
inline constexpr const char *kHostLoopOuterAttr = "host_loop_outer";

/// The base tensor of `e`'s recorded output view, if any.
std::optional<TensorNum> outputViewBase(const Expr &e);
/// Whether `key` is one of the output-view attributes.
bool isOutputViewAttr(const std::string &key);
/// Whether `key` is one of the scope attributes (loop, loop id, outer
/// loops, branch).
bool isHostScopeAttr(const std::string &key);
/// The write view statement a statement of `f` records in its attributes
/// (`OUT = HirAliasSelect( BASE, axis = .., index = .. )`), if any and if
/// BASE is a tensor of `f`.
std::optional<Expr> outputViewStatement(const Fusion &f, const Expr &writer);
/// Host IR ops that name a slice of a tensor (`HirAliasSelect`,
/// `ShardByStream`, `select`).
bool isSliceView(const Expr &e);

/// A host loop `FOR var from lo to hi` / `FOR var in ID{extent}`: the
/// iterations var = lo, ..., hi - 1.
struct HostLoop {
  std::string var;
  Extent lo, hi;
  /// `FOR var in ID`: the ID whose extent hi is.
  std::optional<IdNum> rangeId;
  std::string header;
};

/// A tensor `view` that is the slice `axis == loop variable` of `base`.
struct SliceView {
  TensorNum view = 0;
  TensorNum base = 0;
  IdNum axis = 0;      ///< A logical data ID of base.
  size_t position = 0; ///< Its position among base's logical data IDs.
  /// A ShardByStream of a Swizzle1D stream axis (ir/RingPermute.h): in
  /// iteration s the device of team index t (its coordinate along the 1-D
  /// mesh) takes the slot (s + t) % E, not s.
  bool swizzled = false;
};

/// A statement run once per iteration: in iteration s it reads the slices
/// `axis == s` of its read views' bases (and, unchanged, tensors computed
/// before the loop, or earlier in the same iteration) and writes the slice
/// `axis == s` of its write view's base (or a value only later statements
/// of the same iteration read). A CollectivePermute of a modelled ring
/// (ir/RingPermute.h) has no read view (each device sends its shard of the
/// input) and writes its swizzled slot.
struct LoopedStatement {
  HostLoop loop;
  std::vector<SliceView> reads;   ///< Read views among its operands.
  std::optional<SliceView> write; ///< Where it writes, if into a base.
  /// Communications: the one read view, and the write view.
  const SliceView &input() const { return reads.front(); }
  const SliceView &output() const { return *write; }
};
/// A Communication's model: exactly one read view, and a write view.
using LoopedCommunication = LoopedStatement;

/// Whether `expr` carries a host loop (kHostLoopAttr).
bool isInHostLoop(const Expr &expr);
/// Whether `a` and `b` are in the same loop of their block.
bool sameHostLoop(const Expr &a, const Expr &b);

/// The loop a statement posted in a host loop runs in, or why it is not
/// modelled (a branch inside the loop, a nested loop, a header it cannot
/// read).
std::variant<HostLoop, std::string> hostLoopOf(const Fusion &f, const Expr &e);
/// Why `base` cannot be a base `writer`'s loop writes slice by slice:
/// another statement computes or writes it too, or a statement of the loop
/// reads it whole; nullopt when it can.
std::optional<std::string> writtenBaseProblem(const Fusion &f, const Expr &writer, TensorNum base);
/// The position of `e` in `f.exprs` (f.exprs.size() when it is none).
size_t exprIndexOf(const Fusion &f, const Expr &e);

/// The loop model of a statement of `f` posted in a host loop, or the
/// reason (a sentence) it does not fit the model.
std::variant<LoopedStatement, std::string> loopedStatement(const Fusion &f, const Expr &e);
/// The same for a Communication, which must read one read view and write
/// a write view.
std::variant<LoopedStatement, std::string> loopedCommunication(const Fusion &f, const Expr &e);
/// Why a statement outside host loops that writes a slice (a write view)
/// is not modelled, or nullopt for statements without one.
std::optional<std::string> unloopedSliceWrite(const Fusion &f, const Expr &e);
/// Bases every one of whose writers is a looped statement writing it
/// through its write view: what the loop claims say is computed.
std::vector<TensorNum> loopWrittenBases(const Fusion &f);

} // namespace shardcheck
