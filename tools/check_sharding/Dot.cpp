// The fusion as Graphviz DOT; see Dot.h.
#include "tools/check_sharding/Dot.h"

#include <sstream>

namespace shardcheck::checksharding {

namespace {

enum LookIndex { Refuted, Unsupported, Unknown, Unmodelled, Unnecessary, Collective, Alias, None };

/// `text` as a DOT quoted string: Graphviz reads `\` as the start of its own
/// escapes (`\N`, `\l`), so a user's backslash is doubled.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

LookIndex lookIndex(const EdgeVerdict &v) {
  EdgeResult result = v.result;
  std::optional<CompilerResult> compiler;
  if (v.compiler)
    compiler = v.compiler->result;
  if (result == EdgeResult::Refuted || compiler == CompilerResult::Refuted)
    return Refuted;
  if (result == EdgeResult::Unsupported)
    return Unsupported;
  if (result == EdgeResult::Unknown || compiler == CompilerResult::Unknown)
    return Unknown;
  if (result == EdgeResult::Unmodelled)
    return Unmodelled;
  if (compiler == CompilerResult::Unnecessary)
    return Unnecessary;
  if (!v.steps.empty())
    return Collective; // A multi-step plan: collectives, whatever `lowering` says.
  return v.lowering.kind == CommKind::None    ? None
         : v.lowering.kind == CommKind::Alias ? Alias
                                              : Collective;
}

} // namespace

const char *compilerStatusText(const CompilerVerdict &c) {
  return c.result == CompilerResult::Unnecessary ? "confirmed but unnecessary"
                                                 : compilerResultStatusName(c.result);
}

namespace {

/// What the arrow says: the communication (nothing for none) and the
/// compiler's choice when it has one.
std::string arrowLabel(const EdgeVerdict &v) {
  EdgeResult result = v.result;
  std::string label;
  if (!hasLowering(result))
    label = kNoLoweringName;
  else if (v.lowering.kind != CommKind::None || !v.steps.empty() || result != EdgeResult::Proved)
    label = v.loweringText() +
            (result == EdgeResult::Proved ? "" : std::string(" ") + edgeResultStatusName(result));
  if (v.compiler)
    label += (label.empty() ? "" : "\n") + std::string("compiler: ") + v.compiler->loweringText() +
             " " + compilerStatusText(*v.compiler);
  return label;
}

} // namespace

const std::vector<VerdictLook> &verdictLooks() {
  static const std::vector<VerdictLook> looks = {
      {"refuted", "#c62828", "bold", "refuted: the edge's lowering or the compiler's choice"},
      {"unsupported", "#c62828", "dashed", "unsupported: no single collective is proved"},
      {"unknown", "#ef6c00", "dashed", "unknown: not decided (never proved)"},
      {"unmodelled", "#6a1b9a", "dashed", "outside the modelled semantics"},
      {"unnecessary", "#f9a825", "bold", "the compiler communicates where nothing must move"},
      {"collective", "#2e7d32", "bold", "a collective, proved"},
      {"alias", "#1565c0", "solid", "alias (the producer's buffer reused), proved"},
      {"none", "#9e9e9e", "solid", "no communication, proved"}};
  return looks;
}

const VerdictLook &verdictLook(const EdgeVerdict &v) {
  return verdictLooks()[lookIndex(v)];
}

std::string verdictLine(const EdgeVerdict &v) {
  EdgeResult result = v.result;
  std::string line = !hasLowering(result) ? std::string(kNoLoweringName) + ": " + v.reason
                                          : v.loweringText() + " " + edgeResultStatusName(result);
  if (result == EdgeResult::Unknown && !v.reason.empty())
    line += ": " + v.reason;
  if (v.compiler)
    line += "; compiler: " + v.compiler->source + ", " + v.compiler->loweringText() + ", " +
            compilerStatusText(*v.compiler);
  return line;
}

std::string edgeAnchor(size_t fusion, size_t k) {
  return "f" + std::to_string(fusion) + "-e" + std::to_string(k);
}

std::string fusionDot(const FusionEntry &fusion,
                      const std::vector<std::pair<size_t, EdgeVerdict>> &edges,
                      const std::string &name) {
  std::ostringstream dot;
  dot << "digraph " << quoted(name) << " {\n"
      << "  graph [rankdir=TB, fontname=\"Helvetica\", tooltip=" << quoted(name) << "];\n"
      << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#fafafa\", "
         "fontname=\"DejaVu Sans Mono\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (const auto &t : fusion.tensors)
    dot << "  T" << t.number << " [label=" << quoted(t.label)
        << (t.input    ? ", fillcolor=\"#e3f2fd\", penwidth=2"
            : t.output ? ", fillcolor=\"#e8f5e9\", peripheries=2"
                       : "")
        << ", tooltip="
        << quoted(t.input    ? "input"
                  : t.output ? "output"
                             : "intermediate")
        << "];\n";
  size_t k = 0;
  for (const auto &[index, v] : edges) {
    if (index != fusion.index)
      continue;
    const VerdictLook &look = verdictLook(v);
    std::string tip = quoted(v.exprName + ": " + verdictLine(v));
    dot << "  T" << v.producer << " -> T" << v.consumer << " [color=\"" << look.colour
        << "\", fontcolor=\"" << look.colour << "\", style=" << look.style
        << ", label=" << quoted(arrowLabel(v)) << ", href=\"#" << edgeAnchor(fusion.index, k++)
        << "\", tooltip=" << tip << ", labeltooltip=" << tip << "];\n";
  }
  dot << "}\n";
  return dot.str();
}

} // namespace shardcheck::checksharding
