// libFuzzer harness: the DTensor document reader (docs/dtensor.md), as
// check-sharding reads a file (dtensor::readInputDocument: a JSON object
// whose "format" names shardcheck-dtensor is read and mapped to the IR), and
// the model of DTensor's own plan on what reads (dtensor/DTensorPlan.h).
//
// Properties (fuzz/FuzzSupport.h): only InputError escapes the reader and
// the mapping; a document they return writes to JSON IR and reads back
// equal, and linting, building its graph and printing it do not throw; on
// every document the schema reader accepts (mapped or not), the model of
// DTensor's plan, on both process-group kinds, and the bytes report never
// throw (a plan it cannot model is "unknown", not an exception), and a
// modelled plan compared with itself has no difference.
//
// This harness does not check verdicts or plans (fuzz_pipeline.cpp does)
// and does not judge what a document should mean (tests/dtensor_test.cpp,
// tests/dtensor_plan_test.cpp do).
#include "fuzz/FuzzSupport.h"

#include "dtensor/DTensorInput.h"
#include "dtensor/DTensorPlan.h"
#include "dtensor/DTensorReader.h"

using namespace shardcheck;
using namespace shardcheck::dtensor;

namespace {

/// The model and the report on a case the schema reader accepted.
void checkModel(const DTensorCase &c) {
  for (DTensorBackend backend : {DTensorBackend::Cpu, DTensorBackend::Cuda}) {
    ModelledPlan model;
    fuzz::mustSucceed("modelDTensorPlan", [&] { model = modelDTensorPlan(c, backend); });
    if (model.plan && !firstDifference(*model.plan, *model.plan).empty())
      fuzz::violated("a modelled plan equals itself", firstDifference(*model.plan, *model.plan));
    if (!model.plan && model.unknownWhy.empty())
      fuzz::violated("an unknown plan says why", c.name);
  }
  fuzz::mustSucceed("dtensorBytesReport", [&] { (void)dtensorBytesReport(c); });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::textOf(data, size);
  if (!isDTensorText(text))
    return 0; // Dumps and JSON IR have their own harnesses.
  DTensorCase c;
  if (fuzz::acceptsInput("readDTensorCase", [&] { c = readDTensorCase(text, "fuzz.json"); }))
    checkModel(c);
  InputDocument in;
  if (!fuzz::acceptsInput("readInputDocument", [&] { in = readInputDocument(text, "fuzz.json"); }))
    return 0;
  fuzz::checkJsonRoundTrip(in.doc);
  fuzz::checkDocumentUsers(in.doc);
  return 0;
}
