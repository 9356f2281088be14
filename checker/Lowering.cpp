// Names and printing of the checker's vocabulary; see Lowering.h.
#include "checker/Lowering.h"

#include <algorithm>

namespace shardcheck {

namespace {

/// Every lowering's collective, in the list's order.
constexpr std::pair<CommKind, CollectiveType> kLoweringCollectives[] = {
#define SC_LOWERING_ROW(name, hostIr, lowering, ...)                                               \
  SC_COLLECTIVE_IF(lowering, {CommKind::name, CollectiveType::name}, )
    SHARDCHECK_COLLECTIVES(SC_LOWERING_ROW)
#undef SC_LOWERING_ROW
        {CommKind::CollectivePermute, CollectiveType::CollectivePermute},
};

/// The kinds that are no collective, with their spellings.
constexpr std::pair<CommKind, const char *> kOtherKinds[] = {{CommKind::None, "none"},
                                                             {CommKind::Alias, "alias"}};

} // namespace

std::string devicesStr(const std::vector<int64_t> &v) {
  // A long run of consecutive devices (a 1,024-device team) in one token.
  if (v.size() > 16 && v.back() - v.front() == static_cast<int64_t>(v.size()) - 1 &&
      std::is_sorted(v.begin(), v.end()))
    return "(" + std::to_string(v.front()) + ".." + std::to_string(v.back()) + ")";
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? " " : "") + std::to_string(v[i]);
  return s + ")";
}

const char *commKindName(CommKind k) {
  if (auto c = collectiveOfCommKind(k))
    return collectiveTypeName(*c);
  for (const auto &[kind, name] : kOtherKinds)
    if (kind == k)
      return name;
  return "none";
}

std::optional<CommKind> commKindFromCollective(CollectiveType c) {
  for (const auto &[kind, collective] : kLoweringCollectives)
    if (collective == c)
      return kind;
  return std::nullopt;
}

std::optional<CollectiveType> collectiveOfCommKind(CommKind k) {
  for (const auto &[kind, collective] : kLoweringCollectives)
    if (kind == k)
      return collective;
  return std::nullopt;
}

bool isReductionComm(CommKind k) {
  std::optional<CollectiveType> c = collectiveOfCommKind(k);
  return c && isReductionCollective(*c);
}

RootRole commRootRole(CommKind k) {
  std::optional<CollectiveType> c = collectiveOfCommKind(k);
  return c ? collectiveInfo(*c).root : RootRole::None;
}

bool isRootedComm(CommKind k) {
  return commRootRole(k) != RootRole::None;
}

std::string Lowering::str() const {
  std::string s = commKindName(kind);
  if (padded)
    s += "+pad";
  else if (localPermute)
    s += "+permute";
  if (kind == CommKind::None || kind == CommKind::Alias)
    return s;
  if (teams.size() == 1 && teams[0].pairs.empty()) {
    s += " over team " + devicesStr(teams[0].devices);
  } else if (!teams.empty() && teams[0].pairs.empty()) {
    s += " over teams ";
    for (const auto &t : teams)
      s += devicesStr(t.devices);
  } else {
    s += " of";
    for (const auto &t : teams)
      for (const auto &[src, dst] : t.pairs)
        s += " " + std::to_string(src) + "->" + std::to_string(dst);
  }
  if (!teams.empty() && teams[0].root)
    s += " with root " + std::to_string(*teams[0].root);
  return s;
}

bool isModelledPadding(const Lowering &l) {
  if (!l.padded)
    return false;
  // Allgather and AllToAll: with the unpad copy (shardcheck's own), or
  // slot for slot on the padded buffers (a compiler's, e.g. DTensor's).
  if (l.kind == CommKind::Allgather || l.kind == CommKind::AllToAll)
    return true;
  if (l.kind == CommKind::SendRecv)
    return !l.localPermute; // Whole padded buffers, slot for slot.
  // Partials (shardcheck's own) or the members' padded buffers (a
  // compiler's): a padding slot contributes to padding slots only.
  return isReductionComm(l.kind) && !l.localPermute;
}

std::optional<Lowering> paddedLowering(const Lowering &l) {
  Lowering p = l;
  p.padded = true;
  p.localPermute = l.kind == CommKind::Allgather || l.kind == CommKind::AllToAll;
  if (!isModelledPadding(p))
    return std::nullopt;
  return p;
}

const char *nvfuserRuntimeName(NvfuserRuntime r) {
  return r == NvfuserRuntime::Dec2024 ? "2024-12" : "2024-11";
}

std::optional<NvfuserRuntime> parseNvfuserRuntime(const std::string &s) {
  if (s == "2024-12" || s == "current")
    return NvfuserRuntime::Dec2024;
  if (s == "2024-11")
    return NvfuserRuntime::Nov2024;
  return std::nullopt;
}

const char *statusName(Status s) {
  switch (s) {
  case Status::Proved:
    return "proved";
  case Status::Refuted:
    return "refuted";
  case Status::Unknown:
    return "unknown";
  }
  return "unknown";
}

} // namespace shardcheck
