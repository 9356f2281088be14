// How many operands and outputs each op kind takes: one rule for the nvFuser
// dump reader, the JSON IR reader and the printer. And which fusion outputs
// no expression computes.
//
// A reader that kept an expression of the wrong shape would hand the checker
// an edge set that misses operands (a host IR Communication printed without
// `input=` has no edge at all, so nothing about its consumer would be
// checked) and the executor an expression it cannot run. Both readers refuse
// such an expression where they read it; the printer prints a fusion built in
// code with one generically.
//
// A fusion output that is no input and that no expression read defines is
// legal in a host IR dump (another device's program, a P2PCommunication or a
// launched kernel computes it, and the reader skips those statements), but
// nothing about it was checked: check-sharding says so (unknown outside host
// IR) and the plan builder refuses it, since a run could only compare it with
// itself.
//
// This file does not know op spellings (ir/PointwiseOps.h and the readers
// do) and does not locate errors: each reader does.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// Why `e` has the wrong number of operands or outputs for its kind, e.g.
/// "takes one tensor operand, found 0 operand(s)"; nullopt when it fits.
/// Other (ops without a rule) takes any shape.
std::optional<std::string> exprShapeProblem(const Expr &e);

/// The fusion outputs that are not fusion inputs and that no expression
/// defines, in output order.
std::vector<TensorNum> uncomputedOutputs(const Fusion &f);

} // namespace shardcheck
