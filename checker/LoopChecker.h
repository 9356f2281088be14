// Proofs about a statement run once per iteration of a host loop.
//
// A LoopedStatement (ir/HostLoops.h) runs, in iteration s of
// `FOR v from lo to hi`, its operation (a collective, a matmul, ...) from
// the slices `axis == s` of its read views' bases to the slice `axis == s`
// of its write view's base. The operation of one iteration is an ordinary
// edge between the printed slice tensors (EdgeChecker proves it, the same
// for every s). What the loop adds, and what this file proves for every
// iteration and every size the fusion's constraints allow
// (docs/semantics.md, "Statements in host loops"):
//   - `loop-view-slice`: each slice is exactly its base's part at s: for
//     every device d and element y of the slice, d holds y iff d holds the
//     base element y with s inserted at the sliced axis (so the collective
//     of iteration s reads and writes the base's own buffers);
//   - `loop-reads-in-range`: every iteration's read index is an index of
//     each read view's base axis;
//   - `loop-covers-output`: the iterations write every index of the write
//     view's base axis, each once, and nothing past it.
// A swizzled write view (a ShardByStream slot of a CollectivePermute ring,
// ir/RingPermute.h) is the slot (s + t) % D on the device of team index t:
// its claims are the same with that slot in place of s.
// Together with the per-iteration edges, these say that after the loop the
// written base holds exactly what the operation, applied slice by slice,
// delivers. A counterexample names the iteration (`iteration i18 = 2`).
//
// It does not check the operation itself (the edges do), or loops it cannot
// read (those edges are unsupported, ir/FusionGraph.cpp).
#pragma once

#include "checker/EdgeChecker.h"
#include "ir/HostLoops.h"

#include <vector>

namespace shardcheck {

/// The term of a host loop bound (`FOR v in ID` ranges over ID's extent).
smt::Int loopBoundTerm(Encoder &enc, const Extent &bound, std::optional<IdNum> rangeId);
/// `lo <= v < hi` for the iterations of `loop`.
smt::Bool inHostLoopRange(Encoder &enc, const HostLoop &loop, const smt::Int &v);
/// Proved (unsat) or unknown, or nullopt for a model: a counterexample.
std::optional<Outcome> provedOrUnknown(const smt::QueryResult &r, const std::string &query);
/// Checks `assertions` with every symbol of `enc` positive, reporting
/// `vars` and the symbols in the model.
smt::QueryResult solveWithSymbols(Encoder &enc, const std::string &name,
                                  std::vector<smt::Bool> assertions, std::vector<std::string> vars);

class LoopChecker {
public:
  /// `universe`: the devices of a tensor without a mesh (as EdgeChecker's).
  LoopChecker(const Fusion &fusion, const LoopedStatement &loop, smt::Context &ctx,
              std::vector<int64_t> universe);

  /// Every claim in order (each read view and its range, the write view,
  /// coverage): the first that is not proved, else proved.
  Outcome check();
  /// The claims about one read view alone (its view, its read range):
  /// whether the read view statement feeding the statement is local.
  Outcome checkReadView(const SliceView &read);

  /// Sizes for which the claims were proved, in user terms.
  std::vector<std::string> assumptions() const;

private:
  Outcome checkConstraints();
  Outcome checkView(const SliceView &view);
  Outcome checkReadsInRange(const SliceView &in);
  Outcome checkCoversOutput();
  /// loop-covers-output for a swizzled write view: every device writes each
  /// slot once.
  Outcome checkSwizzledCover();
  /// The slot device `d` takes in iteration `s` of a swizzled slice.
  smt::Int swizzledSlot(const SliceView &view, const smt::Int &s, const smt::Int &d);
  smt::Int bound(const Extent &e, std::optional<IdNum> id);
  /// The loop variable `it` within [lo, hi).
  smt::Bool inLoop(const smt::Int &s);
  /// Implied constraints of every base and slice, plus slice and base
  /// extents agreeing axis by axis: every query assumes every view's.
  smt::Bool constraints();
  smt::Bool sliceConstraints(const SliceView &view);
  smt::QueryResult solve(const std::string &name, std::vector<smt::Bool> assertions,
                         std::vector<std::string> vars);
  /// `iteration v = s` from a model.
  std::string iteration(const smt::Model &m) const;
  /// A user-facing value of an extent under the model's bindings.
  std::string valueOf(const Extent &e, const Counterexample &c) const;

  const Fusion &fusion_;
  const LoopedStatement &loop_;
  smt::Context &ctx_;
  Encoder enc_;
  std::vector<int64_t> universe_;
};

} // namespace shardcheck
