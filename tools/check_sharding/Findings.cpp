// Findings and fusion entries; see Findings.h.
#include "tools/check_sharding/Findings.h"

#include "ir/Printer.h"
#include "util/Sha256.h"

namespace shardcheck::checksharding {

FusionEntry fusionEntry(size_t index, const Fusion &fusion) {
  return FusionEntry{index, fusion.loc, sha256Hex(printFusion(fusion)), true};
}

Finding findingOf(const Diagnostic &d, int status, std::optional<size_t> fusion, std::string edge,
                  std::string rule) {
  Finding f;
  f.rule = rule.empty() ? d.code : std::move(rule);
  f.severity = d.severity;
  f.status = status;
  f.message = d.message;
  for (const auto &n : d.notes)
    f.message += "\n" + n.message;
  f.loc = d.loc;
  f.fusion = fusion;
  f.edge = std::move(edge);
  return f;
}

int statusOfFindings(const std::vector<const Finding *> &findings) {
  int status = 0;
  for (const Finding *f : findings) {
    if (f->status == 1)
      return 1;
    if (f->status == 3)
      status = 3;
  }
  return status;
}

const char *findingLevel(const Finding &f) {
  // A refuted edge's own diagnostic is a note in the text output (its
  // compiler diagnostic carries the error), but it fails the run.
  if (f.status == 1)
    return "error";
  return f.severity == Severity::Note ? "note" : "warning";
}

} // namespace shardcheck::checksharding
