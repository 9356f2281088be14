// Format detection for check-sharding's inputs; see DTensorInput.h.
//
// It does not parse dumps or JSON IR (ir/reader does) and does not check.
#include "dtensor/DTensorInput.h"

#include "dtensor/DTensorPlan.h"
#include "dtensor/DTensorReader.h"
#include "dtensor/DTensorToIr.h"
#include "ir/Limits.h"
#include "ir/reader/DumpReader.h"

#include <sstream>

namespace shardcheck::dtensor {

namespace {

/// One note per line of `text`, located at `loc`.
void addNotes(const std::string &text, const SourceLoc &loc, std::vector<Diagnostic> &notes) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    notes.push_back(Diagnostic{Severity::Note, "dtensor-collectives", line, loc, {}});
}

} // namespace

InputDocument readInputDocument(std::string_view text, const std::string &file) {
  if (!isDTensorText(text))
    return InputDocument{readDocument(text, file), {}, std::nullopt};
  DTensorCase c = readDTensorCase(text, file);
  InputDocument r{dtensorToDocument(c), {}, c};
  for (const Fusion &f : r.doc.fusions)
    checkFusionLimits(f);
  if (c.recorderError)
    r.notes.push_back(
        Diagnostic{Severity::Note,
                   "dtensor-recorder",
                   "the recorder could not attribute DTensor's collectives: " + *c.recorderError,
                   c.loc,
                   {}});
  addNotes(dtensorBytesReport(c), c.issued ? c.issued->loc : c.loc, r.notes);
  return r;
}

InputDocument readInputDocumentFile(const std::string &path) {
  return readInputDocument(readInputFile(path), path);
}

} // namespace shardcheck::dtensor
