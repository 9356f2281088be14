// Findings and fusion entries; see Findings.h.
#include "tools/check_sharding/Findings.h"

#include "ir/Printer.h"
#include "util/Sha256.h"

#include <algorithm>

namespace shardcheck::checksharding {

FusionEntry fusionEntry(size_t index, const Fusion &fusion) {
  FusionEntry entry{index, fusion.loc, sha256Hex(printFusion(fusion)), true, {}};
  auto listed = [](const std::vector<TensorNum> &list, TensorNum t) {
    return std::find(list.begin(), list.end(), t) != list.end();
  };
  for (const auto &[number, tv] : fusion.tensors)
    entry.tensors.push_back(TensorNode{number, fusion.tensorStr(number),
                                       listed(fusion.inputs, number),
                                       listed(fusion.outputs, number)});
  return entry;
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
