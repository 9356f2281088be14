// Parsers and printers generated from the collective and reduction-operator
// lists; see Collectives.h.
//
// Does not: hold a spelling of its own (every one comes from the lists).
#include "ir/Collectives.h"

#include <limits>

namespace shardcheck {

namespace {

std::optional<CollectiveType> parseWhere(std::string_view s, bool CollectiveInfo::*column) {
  for (const CollectiveInfo &c : kCollectives)
    if (c.*column && s == c.name)
      return c.type;
  return std::nullopt;
}

constexpr std::array<std::pair<ReduceOp, const char *>, 4> kReduceOps{{
#define SC_REDUCE_OP_ROW(name, spelling) {ReduceOp::name, spelling},
    SHARDCHECK_REDUCE_OPS(SC_REDUCE_OP_ROW)
#undef SC_REDUCE_OP_ROW
}};

} // namespace

std::optional<CollectiveType> parseCollectiveType(std::string_view s) {
  return parseWhere(s, &CollectiveInfo::hostIr);
}

std::optional<CollectiveType> parsePlanCollective(std::string_view s) {
  return parseWhere(s, &CollectiveInfo::plan);
}

std::string collectiveChoices(bool CollectiveInfo::*column) {
  std::string choices;
  for (const CollectiveInfo &c : kCollectives)
    if (c.*column)
      choices += (choices.empty() ? "\"" : ", \"") + std::string(c.name) + "\"";
  return choices;
}

std::optional<int64_t> perRankChunk(CollectiveType c, int64_t sent, int64_t n) {
  switch (collectiveInfo(c).in) {
  case ChunkMultiple::One:
    return sent;
  case ChunkMultiple::Team:
    return sent / n;
  case ChunkMultiple::Varies:
    break;
  }
  return std::nullopt;
}

const char *reduceOpName(ReduceOp op) {
  return kReduceOps[static_cast<size_t>(op)].second;
}

std::optional<ReduceOp> parseReduceOp(std::string_view s) {
  for (const auto &[op, spelling] : kReduceOps)
    if (s == spelling)
      return op;
  return std::nullopt;
}

std::string reduceOpChoices() {
  std::string choices;
  for (const auto &[op, spelling] : kReduceOps)
    choices += (choices.empty() ? "\"" : ", \"") + std::string(spelling) + "\"";
  return choices;
}

double reduceIdentity(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return 0.0;
  case ReduceOp::Prod:
    return 1.0;
  case ReduceOp::Max:
    return -std::numeric_limits<double>::infinity();
  case ReduceOp::Min:
    return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

} // namespace shardcheck
