// Names and printing of the checker's vocabulary; see Lowering.h.
#include "checker/Lowering.h"

#include <algorithm>

#include <array>

namespace shardcheck {

namespace {
constexpr std::array<std::pair<CommKind, const char *>, 12> kCommNames{{
    {CommKind::None, "none"},
    {CommKind::Alias, "alias"},
    {CommKind::Allgather, "Allgather"},
    {CommKind::Gather, "Gather"},
    {CommKind::Scatter, "Scatter"},
    {CommKind::Broadcast, "Broadcast"},
    {CommKind::AllToAll, "AllToAll"},
    {CommKind::Allreduce, "Allreduce"},
    {CommKind::Reduce, "Reduce"},
    {CommKind::ReduceScatter, "ReduceScatter"},
    {CommKind::SendRecv, "SendRecv"},
    {CommKind::Unsupported, "unsupported"},
}};

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
  for (const auto &[kind, name] : kCommNames)
    if (kind == k)
      return name;
  return "unsupported";
}

std::optional<CommKind> parseCommKind(const std::string &s) {
  for (const auto &[kind, name] : kCommNames)
    if (s == name)
      return kind;
  return std::nullopt;
}

std::optional<CommKind> commKindFromCollective(CollectiveType c) {
  switch (c) {
  case CollectiveType::Gather:
    return CommKind::Gather;
  case CollectiveType::Allgather:
    return CommKind::Allgather;
  case CollectiveType::Scatter:
    return CommKind::Scatter;
  case CollectiveType::Reduce:
    return CommKind::Reduce;
  case CollectiveType::Allreduce:
    return CommKind::Allreduce;
  case CollectiveType::ReduceScatter:
    return CommKind::ReduceScatter;
  case CollectiveType::Broadcast:
    return CommKind::Broadcast;
  case CollectiveType::SendRecv:
    return CommKind::SendRecv;
  case CollectiveType::AllToAll:
    return CommKind::AllToAll;
  case CollectiveType::CollectivePermute:
    return std::nullopt;
  }
  return std::nullopt;
}

bool isReductionComm(CommKind k) {
  return k == CommKind::Allreduce || k == CommKind::Reduce || k == CommKind::ReduceScatter;
}

std::string Lowering::str() const {
  std::string s = commKindName(kind);
  if (localPermute)
    s += "+permute";
  if (kind == CommKind::None || kind == CommKind::Alias || kind == CommKind::Unsupported)
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
