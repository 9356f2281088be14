// shardcheck's public API; see shardcheck/Check.h. It renders the report
// with check-sharding's own code (tools/check_sharding), so that the text
// and status it returns are what the command line prints and exits with.
//
// This file does not decide or print anything itself.
#include <shardcheck/Check.h>

#include "ir/reader/DumpReader.h"
#include "tools/check_sharding/Render.h"
#include "tools/check_sharding/Summary.h"

#include <sstream>

namespace shardcheck {

TextReport checkText(const std::string &text, const TextCheckOptions &options) {
  DocumentOptions documentOptions;
  documentOptions.check.timeoutMs = options.timeoutMs;
  documentOptions.check.devices = options.devices;
  documentOptions.check.runtime = options.runtime;
  TextReport r;
  r.report.file = options.name;
  checksharding::FileOutput output;
  output.file = options.name;
  checksharding::Summary summary;
  try {
    Document doc = readDocument(text, options.name);
    r.report = checkDocument(doc, documentOptions);
    summary.addDocument(r.report);
    checksharding::addDocumentReport(doc, r.report, output);
  } catch (const InputError &e) {
    r.inputError = e.diagnostic();
    summary.addUnreadableFile(e.diagnostic());
    checksharding::addUnreadableFile(e.diagnostic(), output);
  }
  r.status = checksharding::exitStatus(summary);
  std::ostringstream printed;
  checksharding::printFileText(printed, printed, output, /*quiet=*/false);
  r.text = printed.str();
  return r;
}

} // namespace shardcheck
