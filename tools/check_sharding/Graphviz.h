// Lays out DOT text with Graphviz's `dot` program (Debian's package
// graphviz) as SVG, for the HTML report: the SVG element alone, without
// the XML prolog, ready to sit inside an HTML page. `dot` runs as a child
// process over temporary files (no shell), one graph at a time.
//
// This file does not write DOT (Dot.h does) and does not decide what a page
// shows when Graphviz is missing (HtmlReport.cpp shows the DOT text).
#pragma once

#include <optional>
#include <string>

namespace shardcheck::checksharding {

/// The `dot` program on PATH, or nullopt when Graphviz is not installed.
std::optional<std::string> findGraphvizDot();

/// `dot` laid out by the program at `dotProgram` as an `<svg>` element; on
/// failure nullopt and `error` says why.
std::optional<std::string> renderSvg(const std::string &dotProgram, const std::string &dot,
                                     std::string &error);

} // namespace shardcheck::checksharding
