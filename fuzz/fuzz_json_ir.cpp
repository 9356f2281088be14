// libFuzzer harness: the JSON IR reader (documentFromJsonText,
// docs/json-ir.md).
//
// Properties (fuzz/FuzzSupport.h): only InputError escapes the reader; a
// document it returns writes back to JSON IR and reads back equal, the text
// written twice being the same; linting, building its graph and printing it
// do not throw, and its printout reads back as a dump.
//
// This harness does not check verdicts or plans (fuzz_pipeline.cpp does).
#include "fuzz/FuzzSupport.h"

#include "ir/Json.h"

using namespace shardcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Document doc;
  if (!fuzz::acceptsInput("documentFromJsonText", [&] {
        doc = documentFromJsonText(fuzz::textOf(data, size), "fuzz.json");
      }))
    return 0;
  fuzz::checkJsonRoundTrip(doc);
  fuzz::checkDocumentUsers(doc);
  return 0;
}
