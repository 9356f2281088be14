// One table per enum from value to spelling, and the lookups every format
// needs from it: the spelling of a value, the value of a spelling, and the
// "one of ..." list for messages.
//
// A format (JSON IR, plan) lists each enum once as an array of Spelling; its
// printer, its parser and its error messages all read that array, so a
// spelling is never written twice. A table may list a value more than once
// (older spellings): the first is the one printed, every one is parsed.
//
// Does not: read or write any format, or own any table.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

template <typename E> struct Spelling {
  E value;
  const char *name;
};

/// The first spelling of `value` in `table`, or "?" when it has none.
template <typename Table, typename E> const char *nameIn(const Table &table, E value) {
  for (const auto &s : table)
    if (s.value == value)
      return s.name;
  return "?";
}

/// The value spelled `name` in `table`.
template <typename Table>
auto parseIn(const Table &table, std::string_view name)
    -> std::optional<decltype(std::begin(table)->value)> {
  for (const auto &s : table)
    if (name == s.name)
      return s.value;
  return std::nullopt;
}

/// `"a", "b", "c"`: every spelling of `table`, for messages.
template <typename Table> std::string choicesIn(const Table &table) {
  std::string out;
  for (const auto &s : table)
    out += (out.empty() ? "\"" : ", \"") + std::string(s.name) + "\"";
  return out;
}

} // namespace shardcheck
