// The fusion as a picture: every tensor a node (its printed type, domains
// with their device-parallel axes, and mesh), every checked producer ->
// consumer edge an arrow coloured by its verdict and labelled with the
// communication, as Graphviz DOT text (`check-sharding --format dot`, and
// what the HTML report lays out with Graphviz's `dot`). Each arrow links to
// the edge's proof in the HTML page (edgeAnchor).
//
// This file does not run Graphviz (Graphviz.h does), decide verdicts or
// write HTML.
#pragma once

#include "checker/Checker.h"
#include "tools/check_sharding/Findings.h"

#include <string>
#include <utility>
#include <vector>

namespace shardcheck::checksharding {

/// How one verdict kind is drawn, for the arrows and the report's legend.
struct VerdictLook {
  const char *key;    ///< `collective`, `refuted`, ... (the HTML class too).
  const char *colour; ///< `#rrggbb`.
  const char *style;  ///< Graphviz edge style: solid, bold, dashed.
  const char *meaning;
};

/// Every verdict kind, most serious first.
const std::vector<VerdictLook> &verdictLooks();

/// The kind an edge is drawn as: the edge's own result and the compiler's
/// choice together (a proved alias whose compiler Allgather is refuted is
/// `refuted`).
const VerdictLook &verdictLook(const EdgeVerdict &v);

/// One line saying what was decided: `alias proved; compiler: nvFuser's
/// lowering of a resharding Set, Allgather team=(0 1), refuted`.
std::string verdictLine(const EdgeVerdict &v);

/// `confirmed`, `confirmed but unnecessary`, `refuted` or `unknown`.
const char *compilerStatusText(const CompilerVerdict &c);

/// The HTML id of the k-th edge verdict of fusion `fusion`: `f0-e3`.
std::string edgeAnchor(size_t fusion, size_t k);

/// `fusion` of a file as a DOT digraph named `name`; `edges` are the file's
/// (fusion index, verdict) pairs, of which those of this fusion are drawn.
std::string fusionDot(const FusionEntry &fusion,
                      const std::vector<std::pair<size_t, EdgeVerdict>> &edges,
                      const std::string &name);

} // namespace shardcheck::checksharding
