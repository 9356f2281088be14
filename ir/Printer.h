// Prints fusions back in nvFuser's current (2026) dump style.
//
// printFusion writes an `Inputs:`/`Outputs:` header, a `%kernel {` block with
// one statement per expression and a `TransformPrinter :` section with each
// tensor's domains and transforms, so that reading the printout gives back an
// equivalent fusion (same tensors, IDs, transforms, exprs and meshes; source
// locations differ). Host IR communications print as `Communication` lines
// inside a `%HostIrContainer` block.
#pragma once

#include "ir/Fusion.h"

#include <string>

namespace shardcheck {

/// A whole fusion in nvFuser's current style.
std::string printFusion(const Fusion &fusion);

/// One expression statement, e.g.
/// `T2_g_float[iS4{8}] (DeviceMesh{0 1})\n   = Set( T1_g_float[...], cache_op=Streaming )\n`.
std::string printExpr(const Fusion &fusion, const Expr &expr);

/// One tensor's TransformPrinter entry (header line, domains, transforms).
std::string printTransforms(const Fusion &fusion, const TensorView &tv);

} // namespace shardcheck
