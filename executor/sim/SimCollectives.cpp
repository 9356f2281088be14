// The sim backend's collectives; see SimCollectives.h.
//
// Structure: every call goes through two phases. The first checks the team,
// the buffers' presence and their counts and computes every receiver's result
// into a temporary; the second writes the temporaries into the output
// buffers. So a failed check writes nothing, and a call whose input and
// output are the same vector (in-place Allreduce) reads every input before
// any output changes. Each row of the DESIGN table is one function that
// reads it literally; Gather and Reduce share theirs with Allgather and
// Allreduce, the table's "same, on the root only", with the root as the only
// receiver. No collective is composed from others (ReduceScatter is not
// Allreduce plus a slice), so the property tests relating them are real checks.
#include "executor/sim/SimCollectives.h"

#include <algorithm>

namespace shardcheck {

namespace {

/// The results to write, receiver -> values (see the banner's two phases).
using Results = std::map<int64_t, SimBuffer>;

/// One call whose counts were checked: its buffers, by device.
struct Call {
  const CollectiveCall &call;
  const std::map<int64_t, const SimBuffer *> &in;

  const std::vector<int64_t> &team() const { return call.team; }
  size_t n() const { return call.team.size(); }
  int64_t root() const { return *call.root; }
  const SimBuffer &input(int64_t d) const { return *in.at(d); }
};

/// op over members i, in rank order, of in_team[i][offset + t], t < k. The
/// fixed order makes results deterministic and independent of the map's.
SimBuffer reduceMembers(const Call &c, size_t offset, size_t k) {
  SimBuffer acc(c.input(c.team()[0]).begin() + offset, c.input(c.team()[0]).begin() + offset + k);
  for (size_t i = 1; i < c.n(); ++i) {
    const SimBuffer &src = c.input(c.team()[i]);
    for (size_t t = 0; t < k; ++t)
      acc[t] = reduceCombine(c.call.op, acc[t], src[offset + t]);
  }
  return acc;
}

/// out[i*k + t] = in_team[i][t] for each receiver (Allgather: members;
/// Gather: the root, who contributes only when a member).
Results gatherTo(const Call &c, const std::vector<int64_t> &receivers) {
  SimBuffer all;
  for (int64_t member : c.team())
    all.insert(all.end(), c.input(member).begin(), c.input(member).end());
  Results r;
  for (int64_t d : receivers)
    r[d] = all;
  return r;
}

/// out_d[t] = in_root[r(d)*k + t]; the root sends whether or not it is a
/// member.
Results scatter(const Call &c) {
  const SimBuffer &src = c.input(c.root());
  size_t k = src.size() / c.n();
  Results r;
  for (size_t rank = 0; rank < c.n(); ++rank)
    r[c.team()[rank]] = SimBuffer(src.begin() + rank * k, src.begin() + (rank + 1) * k);
  return r;
}

/// out_d[t] = in_root[t] for every member d.
Results broadcast(const Call &c) {
  Results r;
  for (int64_t d : c.team())
    r[d] = c.input(c.root());
  return r;
}

/// out_d[i*k + t] = in_team[i][r(d)*k + t].
Results allToAll(const Call &c) {
  size_t total = c.input(c.team()[0]).size(), k = total / c.n();
  Results r;
  for (size_t dr = 0; dr < c.n(); ++dr) {
    SimBuffer &o = r[c.team()[dr]];
    o.reserve(total);
    for (int64_t src : c.team()) {
      const SimBuffer &from = c.input(src);
      o.insert(o.end(), from.begin() + dr * k, from.begin() + (dr + 1) * k);
    }
  }
  return r;
}

/// out_d[t] = op over i of in_team[i][t] for each receiver (Allreduce:
/// members; Reduce: the root, who contributes only when a member).
Results reduceTo(const Call &c, const std::vector<int64_t> &receivers) {
  SimBuffer reduced = reduceMembers(c, 0, c.input(c.team()[0]).size());
  Results r;
  for (int64_t d : receivers)
    r[d] = reduced;
  return r;
}

/// out_d[t] = op over i of in_team[i][r(d)*k + t].
Results reduceScatter(const Call &c) {
  size_t k = c.input(c.team()[0]).size() / c.n();
  Results r;
  for (size_t rank = 0; rank < c.n(); ++rank)
    r[c.team()[rank]] = reduceMembers(c, rank * k, k);
  return r;
}

/// out_dst[t] = in_src[t] for each pair.
Results sendRecv(const Call &c) {
  Results r;
  for (const auto &[src, dst] : c.call.pairs)
    r[dst] = c.input(src);
  return r;
}

/// out_d is the concatenation over sources s in team order of the chunk s
/// sends to d (AllToAllv, whose counts were checked).
Results allToAllv(const Call &c) {
  const auto &counts = c.call.counts;
  Results r;
  for (size_t d = 0; d < c.n(); ++d) {
    SimBuffer &o = r[c.team()[d]];
    for (size_t s = 0; s < c.n(); ++s) {
      auto from = c.input(c.team()[s]).begin();
      for (size_t j = 0; j < d; ++j)
        from += counts[s][j];
      o.insert(o.end(), from, from + counts[s][d]);
    }
  }
  return r;
}

Results compute(const Call &c) {
  switch (c.call.kind) {
  case CollectiveType::Allgather:
    return gatherTo(c, c.team());
  case CollectiveType::Gather:
    return gatherTo(c, {c.root()});
  case CollectiveType::Scatter:
    return scatter(c);
  case CollectiveType::Broadcast:
    return broadcast(c);
  case CollectiveType::AllToAll:
    return allToAll(c);
  case CollectiveType::Allreduce:
    return reduceTo(c, c.team());
  case CollectiveType::Reduce:
    return reduceTo(c, {c.root()});
  case CollectiveType::ReduceScatter:
    return reduceScatter(c);
  case CollectiveType::SendRecv:
  case CollectiveType::CollectivePermute: // This iteration's pairs (Run.cpp).
    return sendRecv(c);
  case CollectiveType::AllToAllv:
    return allToAllv(c);
  default:
    return {};
  }
}

/// The second phase: every check passed and every result is computed. Sizes
/// were checked equal, so assignment keeps each buffer's size.
void writeResults(Results &results, const std::map<int64_t, SimBuffer *> &out) {
  for (auto &[d, values] : results)
    *out.at(d) = std::move(values);
}

/// Device -> element count of the buffers present (a null entry is none).
template <class Buffer> std::map<int64_t, int64_t> sizesOf(const std::map<int64_t, Buffer *> &m) {
  std::map<int64_t, int64_t> sizes;
  for (const auto &[d, buffer] : m)
    if (buffer)
      sizes[d] = static_cast<int64_t>(buffer->size());
  return sizes;
}

} // namespace

void runSimCollective(const CollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
                      const std::map<int64_t, SimBuffer *> &out) {
  checkCollectiveCounts(call, sizesOf(in), sizesOf(out));
  Results results = compute(Call{call, in});
  writeResults(results, out);
}

} // namespace shardcheck
