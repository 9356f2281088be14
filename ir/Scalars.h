// Printed scalars: the one reading of `2`, `-1.5`, `float(0)`, `double(-inf)`,
// `(float)2`, `true` and symbols such as `i3`, for the checker and the
// executor alike.
//
// A scalar's value matters to the checker where it decides a verdict (a
// reduction's initial value against its operator's identity) and to whether
// a plan can run at all: an expression with a scalar shardcheck cannot read
// is unsupported (FusionGraph), never proved, since no plan for it can be
// executed against the reference.
//
// This file does not evaluate expressions (executor/Pointwise.h does) and
// does not bind symbols: callers pass the bindings they have.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

/// The value of a printed scalar, a symbol bound in `symbols` included
/// (nvFuser prints `i3`, `d5`, `(double)(i3)`).
std::optional<double> scalarValue(std::string_view text,
                                  const std::map<std::string, int64_t> &symbols);

/// Whether `text` is a literal scalarValue reads, or a symbol (a name that a
/// binding may give a value); false for text no binding makes readable.
bool isReadableScalar(std::string_view text);

/// The symbol a printed scalar reads (`i3` of `(double)(i3)`), or nullopt
/// for a literal or unreadable text. A plan lists these with its size
/// symbols, so that a run can bind them.
std::optional<std::string> scalarSymbolOf(std::string_view text);

/// Whether `text` is a symbol name: a letter or `_`, then letters, digits
/// and `_`.
bool isScalarSymbol(std::string_view text);

} // namespace shardcheck
