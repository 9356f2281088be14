// What a host IR Communication posted inside a stream loop is, structurally.
//
// nvFuser's stream-parallel host programs (2025-26) post one Communication
// per iteration of a host loop on one slice of a tensor:
//
//   FOR StreamIdx in iStreamIdx11{i0}:            (or `FOR i18 from 0 to 3:`)
//     T4 = HirAliasSelect( T0, axis = iS0{i0}, index = StreamIdx )   read view
//     T5 = HirAliasSelect( T3, axis = iStreamIdx11{i0}, index = StreamIdx )
//     Communication 59 (type=Allgather, ..., input=T4, output=T5)
//
// The second HirAliasSelect is a write view: it names the slice of T3 the
// Communication writes. The dump reader drops such statements (they are no
// data flow) and records them on the Communication (kOutputViewAttr ...);
// the printer prints them back before it. This file reads those facts into
// a LoopedCommunication: the loop (its variable and range [lo, hi)), and
// the two views (base tensor, sliced axis), or says why the statement is
// not of that form (a branch inside the loop, a view indexed by something
// other than the loop variable, ...).
//
// It does not decide anything: the checker (checker/LoopChecker.h) proves
// what a LoopedCommunication claims, the brute force
// (checker/bruteforce/LoopSlices.h) enumerates it.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <variant>

namespace shardcheck {

/// Attributes of a Communication whose output a write view named: the base
/// tensor (`T3`), the sliced axis as printed (`iStreamIdx11{i0}`) and the
/// index (`StreamIdx`).
inline constexpr const char *kOutputViewAttr = "output_view";
inline constexpr const char *kOutputViewAxisAttr = "output_view_axis";
inline constexpr const char *kOutputViewIndexAttr = "output_view_index";
/// The header of an `IF`/`ELSE` branch a Communication is posted in.
inline constexpr const char *kHostBranchAttr = "host_branch";

/// The base tensor of `e`'s recorded output view, if any.
std::optional<TensorNum> outputViewBase(const Expr &e);
/// Whether `key` is one of the output-view attributes.
bool isOutputViewAttr(const std::string &key);
/// The write view statement a Communication of `f` records in its
/// attributes (`OUT = HirAliasSelect( BASE, axis = .., index = .. )`), if
/// any and if BASE is a tensor of `f`.
std::optional<Expr> outputViewStatement(const Fusion &f, const Expr &communication);

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
};

struct LoopedCommunication {
  HostLoop loop;
  SliceView input;  ///< Read view: the Communication's input.
  SliceView output; ///< Write view: where it writes.
};

/// Whether `expr` carries a host loop (kHostLoopAttr).
bool isInHostLoop(const Expr &expr);

/// The loop model of a Communication of `f` posted in a host loop, or the
/// reason (a sentence) it does not fit the model.
std::variant<LoopedCommunication, std::string> loopedCommunication(const Fusion &f, const Expr &e);

} // namespace shardcheck
