// The collective vocabulary: one list of every collective shardcheck names,
// and the reduction operators.
//
// SHARDCHECK_COLLECTIVES is the only place a collective is listed. Every
// enum, table, parser and printer of a collective is generated from it: the
// IR's CollectiveType (nvFuser's host IR, JSON IR), the checker's lowerings
// (CommKind, checker/Lowering.h), the plan's steps (docs/plan-format.md) and
// every backend's calls. A collective has one spelling, the same in nvFuser's
// dumps, JSON IR, plans and messages; the columns say where it may appear and
// what kind of collective it is:
//   hostIr     nvFuser's host IR names it (dumps and JSON IR)
//   lowering   the checker lowers an edge to it (a CommKind)
//   plan       a plan step may run it
//   root       whether it has a root and what the root does: None, Sends
//              (Scatter, Broadcast), Receives (Gather, Reduce)
//   reduction  it combines values with a ReduceOp
//   in, out    a member's buffer count in per-rank chunks k for a team of n
//              (One: k, Team: n * k, Varies: per-pair counts; a rooted
//              kind's root-only side is the root's)
//
// What it does not do: run, check or encode a collective (the executor's
// executor/sim/SimCollectives.h states the semantics,
// executor/core/CollectiveRules.h the count rules; the checker encodes them).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

// X(name, hostIr, lowering, plan, root, reduction, in, out)
#define SHARDCHECK_COLLECTIVES(X)                                                                  \
  X(Allgather, true, true, true, None, false, One, Team)                                           \
  X(Gather, true, true, true, Receives, false, One, Team)                                          \
  X(Scatter, true, true, true, Sends, false, Team, One)                                            \
  X(Broadcast, true, true, true, Sends, false, One, One)                                           \
  X(AllToAll, true, true, true, None, false, Team, Team)                                           \
  X(AllToAllv, false, false, true, None, false, Varies, Varies)                                    \
  X(Allreduce, true, true, true, None, true, One, One)                                             \
  X(Reduce, true, true, true, Receives, true, One, One)                                            \
  X(ReduceScatter, true, true, true, None, true, Team, One)                                        \
  X(SendRecv, true, true, true, None, false, One, One)                                             \
  X(CollectivePermute, true, false, true, None, false, One, One)

/// SC_COLLECTIVE_IF(column, text...): the text when the column's value is
/// `true`, nothing when `false`; generates from one column of the list.
#define SC_COLLECTIVE_IF(column, ...) SC_COLLECTIVE_IF_##column(__VA_ARGS__)
#define SC_COLLECTIVE_IF_true(...) __VA_ARGS__
#define SC_COLLECTIVE_IF_false(...)

/// Every collective of SHARDCHECK_COLLECTIVES.
enum class CollectiveType {
#define SC_COLLECTIVE_ENUM(name, ...) name,
  SHARDCHECK_COLLECTIVES(SC_COLLECTIVE_ENUM)
#undef SC_COLLECTIVE_ENUM
};

/// A buffer's element count in per-rank chunks (see the banner).
enum class ChunkMultiple { One, Team, Varies };
/// What a collective's root does (see the banner).
enum class RootRole { None, Sends, Receives };

/// One row of SHARDCHECK_COLLECTIVES.
struct CollectiveInfo {
  CollectiveType type;
  const char *name;
  bool hostIr, lowering, plan;
  RootRole root;
  bool reduction;
  ChunkMultiple in, out;
};

inline constexpr std::array kCollectives = {
#define SC_COLLECTIVE_ROW(name, hostIr, lowering, plan, root, reduction, in, out)                  \
  CollectiveInfo{CollectiveType::name,                                                             \
                 #name,                                                                            \
                 hostIr,                                                                           \
                 lowering,                                                                         \
                 plan,                                                                             \
                 RootRole::root,                                                                   \
                 reduction,                                                                        \
                 ChunkMultiple::in,                                                                \
                 ChunkMultiple::out},
    SHARDCHECK_COLLECTIVES(SC_COLLECTIVE_ROW)
#undef SC_COLLECTIVE_ROW
};

constexpr const CollectiveInfo &collectiveInfo(CollectiveType c) {
  return kCollectives[static_cast<size_t>(c)];
}
constexpr const char *collectiveTypeName(CollectiveType c) {
  return collectiveInfo(c).name;
}
constexpr bool isRootedCollective(CollectiveType c) {
  return collectiveInfo(c).root != RootRole::None;
}
constexpr bool isReductionCollective(CollectiveType c) {
  return collectiveInfo(c).reduction;
}
/// Whether `c` moves data along (source, destination) pairs rather than
/// over a team: SendRecv (its pairs are the plan's), CollectivePermute (the
/// run loop derives each iteration's pairs from its ring).
constexpr bool movesByPairs(CollectiveType c) {
  return c == CollectiveType::SendRecv || c == CollectiveType::CollectivePermute;
}

/// The collective spelled `s` among those nvFuser's host IR names.
std::optional<CollectiveType> parseCollectiveType(std::string_view s);
/// The collective spelled `s` among those a plan step may run.
std::optional<CollectiveType> parsePlanCollective(std::string_view s);
/// `"Allgather", "Gather", ...`: the spellings `column` admits, for messages.
std::string collectiveChoices(bool CollectiveInfo::*column);

/// The per-rank chunk k of `c` in a team of `n` > 0 when a sender's input
/// holds `sent` elements (the root when it sends, else any member): `sent`
/// over the input's chunk multiple. nullopt for Varies (AllToAllv).
std::optional<int64_t> perRankChunk(CollectiveType c, int64_t sent, int64_t n);

// X(name, spelling)
#define SHARDCHECK_REDUCE_OPS(X) X(Sum, "sum") X(Prod, "prod") X(Max, "max") X(Min, "min")

/// The reduction operator of Allreduce, Reduce and ReduceScatter (and of a
/// reduction expression: nvFuser's `add`, `mul`, `max`, `min`).
enum class ReduceOp {
#define SC_REDUCE_OP_ENUM(name, spelling) name,
  SHARDCHECK_REDUCE_OPS(SC_REDUCE_OP_ENUM)
#undef SC_REDUCE_OP_ENUM
};

/// `sum`, `prod`, `max`, `min` (plans and messages).
const char *reduceOpName(ReduceOp op);
std::optional<ReduceOp> parseReduceOp(std::string_view s);
/// `"sum", "prod", "max", "min"`, for messages.
std::string reduceOpChoices();
/// The value that leaves any other unchanged under `op` (0, 1, -inf, +inf).
double reduceIdentity(ReduceOp op);

} // namespace shardcheck
