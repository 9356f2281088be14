// BufferMap: which element each slot of each plan buffer holds.
//
// A plan (plan/Plan.h) names buffers of seven kinds; this file says, at
// concrete sizes, what every slot of every device's buffer holds, from the
// executor's own layouts (executor/Layout.h) and the fusion's domain maps:
// - tensor T: T's element at that slot of T's layout; a loop's slice of a
//   base likewise (T is the slice tensor; where it sits in the base is the
//   run loop's business);
// - view of P for consumer C over an edge: the P element that C's element at
//   that slot of C's layout needs (docs/semantics.md, "What a consumer element
//   needs");
// - gathered (Allgather+permute): member i's P buffer as chunk i;
// - packed on sender s: for each destination j of the team in rank order, the
//   P elements s holds that j's consumer slots need, in j's slot order;
// - unpacked on receiver d: for each source s in rank order, what s packed
//   for d;
// - partial (reduction collectives): consumer elements, laid out as the
//   collective reads them (Allreduce: C's layout on d; Reduce: C's layout on
//   the root; ReduceScatter: C's layouts of the members one after another).
// Every device can compute every device's map (nothing here is local), which
// is what lets one process per device agree on packing without talking.
//
// This file does not hold values and does not run steps.
#pragma once

#include "executor/Layout.h"
#include "ir/FusionGraph.h"
#include "plan/Plan.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardcheck {

class BufferMap {
public:
  /// Builds the layouts of every tensor of `plan` at `symbols`. Throws
  /// InputError when a layout cannot be built.
  BufferMap(const Plan &plan, const FusionGraph &graph, const Bindings &symbols);

  const TensorLayout &layout(TensorNum t) const;

  /// The elements the slots of `buffer` hold on `device`, one per slot
  /// (kNoElement for padding), of the tensor the buffer's kind names: the
  /// producer for views, gathered, packed and unpacked buffers; the consumer
  /// for partial buffers. Empty when the buffer has no slots on `device`.
  const std::vector<int64_t> &elements(const PlanBuffer &buffer, int64_t device) const;

  /// The producer element consumer element `consumerElement` needs over the
  /// edge (expr, operand) of a non-reducing op.
  int64_t neededElement(size_t expr, size_t operand, int64_t consumerElement) const;

  /// The consumer element that producer element `producerElement` is
  /// reduced into over the edge (expr, operand) of a reducing op (the
  /// producer's kept axes; reduced axes dropped).
  int64_t reducedElement(size_t expr, size_t operand, int64_t producerElement) const;

  /// For a packed buffer: the chunk sizes counts[s][j] from team member s to
  /// member j of the team containing the devices.
  std::vector<std::vector<int64_t>> packCounts(const PlanBuffer &packed,
                                               const PlanTeam &team) const;

private:
  std::vector<int64_t> compute(const PlanBuffer &b, int64_t device) const;
  std::vector<int64_t> packedFor(const PlanBuffer &b, int64_t sender, int64_t receiver) const;
  const FusionEdge &edge(size_t expr, size_t operand) const;
  const PlanTeam *teamOf(const PlanBuffer &b, int64_t device) const;

  const Plan &plan_;
  const FusionGraph &graph_;
  Bindings symbols_;
  std::map<TensorNum, TensorLayout> layouts_;
  mutable std::map<std::pair<std::string, int64_t>, std::vector<int64_t>> cache_;
};

} // namespace shardcheck
