// libFuzzer harness: the JSON IR reader (documentFromJsonText,
// docs/json-ir.md).
//
// Properties (fuzz/FuzzSupport.h): only InputError escapes the reader; a
// document it returns writes back to JSON IR and reads back equal, the text
// written twice being the same; linting, building its graph and printing it
// do not throw (whether its printout reads back is skipped for now, see
// kPrintoutReadsBack).
//
// This harness does not check verdicts or plans (fuzz_pipeline.cpp does).
#include "fuzz/FuzzSupport.h"

#include "ir/Json.h"

using namespace shardcheck;

// TEMPORARY SKIP (issue 13 findings json-ir-duplicate-id-in-domain and
// json-ir-free-op-spelling): the JSON IR reader accepts documents the dump
// reader cannot read back once printed (a domain listing one IterDomain
// twice; an op spelled with any characters), so this harness does not ask
// that of its printouts. Set it to true once the JSON IR reader rejects them.
constexpr bool kPrintoutReadsBack = false;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Document doc;
  if (!fuzz::acceptsInput("documentFromJsonText", [&] {
        doc = documentFromJsonText(fuzz::textOf(data, size), "fuzz.json");
      }))
    return 0;
  fuzz::checkJsonRoundTrip(doc);
  fuzz::checkDocumentUsers(doc, kPrintoutReadsBack);
  return 0;
}
