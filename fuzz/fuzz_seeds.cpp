// fuzz-seeds: writes the harnesses' seed corpora from corpus files.
//
//   fuzz-seeds OUT FILE...
//
// For every FILE (corpus/*.txt and corpus/*.json): OUT/dump/NAME is the file
// as it is (the dump reader's and the pipeline's seeds); when it reads,
// OUT/json-ir/NAME.json is its JSON IR (ir/Json.h), and for each of its
// first fuzz::kLimits.fusions fusions OUT/plan/NAME.K.checker.json is the
// plan check-sharding --emit-plan --fusion K writes, and, where the fusion
// carries compiler choices, OUT/plan/NAME.K.compiler.json the plan with
// --plan-lowerings compiler. check-sharding runs in-process with the
// pipeline harness's exit-status checks, so a broken rule stops the build.
// Prints the counts.
//
// This tool does not fuzz, minimize or merge corpora (libFuzzer does).
#include "fuzz/FuzzSupport.h"

#include "ir/Json.h"
#include "ir/reader/DumpReader.h"

#include <cstdio>

using namespace shardcheck;
using namespace shardcheck::fuzz;
namespace fs = std::filesystem;

namespace {

constexpr unsigned kSeedTimeoutMs = 2000;

struct Counts {
  int dump = 0, jsonIr = 0, plan = 0;
};

/// Whether check-sharding's JSON output shows a compiler choice.
bool hasCompilerChoice(const nlohmann::json &doc) {
  for (const auto &f : doc.value("files", nlohmann::json::array()))
    for (const auto &e : f.value("edges", nlohmann::json::array()))
      if (e.contains("compiler") && !e.at("compiler").is_null())
        return true;
  return false;
}

/// The plans of fusion `k` of `file` (see the banner).
void writePlans(const fs::path &file, size_t k, const fs::path &out, Counts &c) {
  const std::string stem = (out / "plan" / file.filename()).string() + "." + std::to_string(k);
  fs::path checker = stem + ".checker.json", compiler = stem + ".compiler.json";
  ToolRun run = emitPlan(file, checker, "checker", k, kSeedTimeoutMs);
  c.plan += fs::exists(checker);
  if (!hasCompilerChoice(checkCheckExit(run)))
    return;
  checkCheckExit(emitPlan(file, compiler, "compiler", k, kSeedTimeoutMs));
  c.plan += fs::exists(compiler);
}

void writeSeeds(const fs::path &file, const fs::path &out, Counts &c) {
  std::optional<std::string> text = readFile(file);
  if (!text)
    violated("fuzz-seeds reads its corpus files", file.string());
  bool json = file.extension() == ".json";
  writeFile(out / (json ? "json-ir" : "dump") / file.filename(), *text);
  ++(json ? c.jsonIr : c.dump);
  Document doc;
  if (!acceptsInput("readDocument", [&] { doc = readDocument(*text, file.string()); }))
    return;
  if (!json) {
    writeFile(out / "json-ir" / (file.filename().string() + ".json"), documentToJsonText(doc));
    ++c.jsonIr;
  }
  for (size_t k = 0; k < doc.fusions.size() && k < kLimits.fusions; ++k)
    writePlans(file, k, out, c);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz-seeds OUT FILE...\n");
    return 2;
  }
  const fs::path out = argv[1];
  for (const char *dir : {"dump", "json-ir", "plan"})
    fs::create_directories(out / dir);
  Counts c;
  for (int i = 2; i < argc; ++i)
    writeSeeds(argv[i], out, c);
  std::printf("fuzz-seeds: %d dump, %d JSON IR and %d plan seed(s) in %s\n", c.dump, c.jsonIr,
              c.plan, out.string().c_str());
  return 0;
}
