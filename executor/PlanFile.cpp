// A plan file made ready to run; see PlanFile.h.
#include "executor/PlanFile.h"

#include "executor/core/Run.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace shardcheck {

namespace {

/// The bytes of the plan file; an InputError naming the file and the
/// system's reason when it cannot be opened or read (a directory, EIO).
std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    try {
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure &) { // Thrown by the read; errno says why.
    }
  }
  throwInputError("unreadable", std::string("cannot read the plan file: ") + std::strerror(errno),
                  SourceLoc{path, 0, 0});
}

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + v[i];
  return s;
}

/// An InputError for a bound name that is not a symbol of the plan.
void checkBindNames(const Plan &plan, const Bindings &given, const std::string &file) {
  std::vector<std::string> symbols = planSymbols(plan);
  for (const auto &[name, value] : given)
    if (std::find(symbols.begin(), symbols.end(), name) == symbols.end())
      throwInputError("unknown-symbol",
                      "--bind " + name + ": the plan has no symbol '" + name + "'; " +
                          (symbols.empty() ? std::string("its sizes are all constant")
                                           : "its symbols are " + joined(symbols)),
                      SourceLoc{file, 0, 0});
}

} // namespace

Plan readPlanFile(const std::string &path, const Bindings &given) {
  Plan plan = planFromJsonText(readBytes(path), path);
  checkBindNames(plan, given, path);
  return plan;
}

Bindings bindRemainingSymbols(const Plan &plan, const Bindings &given, const std::string &path) {
  auto bindings = satisfyingBindings(plan, given);
  if (!bindings)
    throwInputError("constraint-violated",
                    "no small sizes satisfy the plan's constraints with the given --bind "
                    "values; bind the symbols by hand",
                    SourceLoc{path, 0, 0});
  return *bindings;
}

} // namespace shardcheck
