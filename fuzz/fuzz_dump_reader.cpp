// libFuzzer harness: the nvFuser dump reader (readDocument on text, as
// check-sharding reads a file; text starting with `{` goes to the JSON IR
// reader, as there).
//
// Properties (fuzz/FuzzSupport.h): only InputError escapes the reader; a
// document it returns writes to JSON IR and reads back equal; linting,
// building its graph and printing it do not throw, and its printout reads
// back.
//
// This harness does not check verdicts or plans (fuzz_pipeline.cpp does) and
// does not judge what a dump should mean (tests/reader_test.cpp does).
#include "fuzz/FuzzSupport.h"

#include "ir/reader/DumpReader.h"

using namespace shardcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Document doc;
  if (!fuzz::acceptsInput("readDocument",
                          [&] { doc = readDocument(fuzz::textOf(data, size), "fuzz.txt"); }))
    return 0;
  fuzz::checkJsonRoundTrip(doc);
  fuzz::checkDocumentUsers(doc);
  return 0;
}
