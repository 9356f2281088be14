// The plan's consistency checks, as one verifier (docs/plan-format.md,
// "Consistency").
//
// Every name defined before use, buffer fields that fit their kind, one
// count per device of a collective step equal to its buffer's size, teams
// inside the plan's devices, step inputs written by an earlier step, the
// fusion's computed outputs written. Each failure names the offending value
// by JSON pointer (`/steps/3/counts/0`); the plan reader turns that into a
// position in the text, verifyPlan into an unlocated error. Lookups are
// indexed, so a plan is checked in time linear in its size.
//
// Does not: read or write JSON, or judge whether the plan is *right* (the
// checker proves it and the executor's validation confirms it).
#pragma once

#include "plan/Plan.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace shardcheck {

/// The checks, run piece by piece as a plan is read (so that an error is
/// reported where reading reached) or all at once by verifyPlan.
class PlanVerifier {
public:
  /// Reports a failure at a JSON pointer; must throw.
  using Fail = std::function<void(const std::string &path, const std::string &message)>;

  /// `plan` is read as the checks go: its devices and fusion must be in
  /// place, buffers and steps may be appended between the calls below.
  PlanVerifier(const Plan &plan, Fail fail);

  /// Buffer `index` (the last one so far): its fields fit its kind, and no
  /// earlier buffer has its name.
  void checkBuffer(size_t index);
  /// Indexes the buffers: call once, after the last buffer and before steps.
  void indexBuffers();
  /// Step `index` (the last one so far) against the buffers and the steps
  /// before it.
  void checkStep(size_t index);
  /// Every fusion output that an expression computes is written by a step,
  /// and every loop's body ends within the steps.
  void checkOutputsWritten() const;

  /// localCount(shape), a shape deeper than JSON nesting allows or a product
  /// overflowing int64 failing at `path`.
  Extent slots(const std::vector<Extent> &shape, const std::string &path) const;

private:
  [[noreturn]] void fail(const std::string &path, const std::string &message) const;
  void checkBufferFields(const std::string &at, const PlanBuffer &b) const;
  void checkTeamsWithin(const std::string &at, const std::vector<PlanTeam> &teams,
                        const std::set<int64_t> &known) const;
  void checkCompute(const std::string &at, const PlanStep &s, const PlanBuffer &out) const;
  void checkCopy(const std::string &at, const PlanStep &s, const PlanBuffer &in,
                 const PlanBuffer &out) const;
  void checkCounts(const std::string &at, const PlanStep &s, const PlanBuffer &in,
                   const PlanBuffer &out) const;
  void checkCount(const std::string &path, const PlanBuffer &b, int64_t device,
                  const std::optional<Extent> &count, const char *which) const;
  void checkSlice(const std::string &at, const PlanBuffer &slice) const;
  void checkSwizzledWindow(const std::string &path, const PlanBuffer &slice, int64_t device,
                           const Extent &axisExtent) const;
  void checkRing(const std::string &at, const PlanStep &s) const;
  void checkLoop(const std::string &at, size_t index, const PlanStep &s);
  /// A slice buffer used at `path` by step `index` is used inside a loop
  /// over its variable.
  void checkSliceUse(const std::string &path, size_t index, const PlanBuffer &b) const;
  /// Ends the open loop when step `index` is past its body: the bases its
  /// slices wrote count as written from then on.
  void closeLoopBefore(size_t index);
  const PlanBuffer *bufferNamed(const std::string &name) const;
  const PlanLocal *localOn(const PlanBuffer &b, int64_t device) const;

  const Plan &plan_;
  Fail fail_;
  std::set<int64_t> planDevices_;
  std::set<std::string> names_, written_;
  /// The loop whose body is being checked: its step, last body step, and the
  /// bases its slices write.
  struct OpenLoop {
    size_t step = 0, last = 0;
    std::set<std::string> writtenBases;
  };
  std::optional<OpenLoop> loop_;
  std::map<std::string, const PlanBuffer *> buffers_;
  std::map<std::pair<const PlanBuffer *, int64_t>, const PlanLocal *> locals_;
};

/// The checks that need sizes (docs/plan-format.md, "Loops"): at `bindings`,
/// every iteration of every loop indexes each slice buffer of its body
/// within its base's axis on every device. The first violation as a
/// sentence naming the step, buffer, device and iteration; nullopt if none.
std::optional<std::string> loopRangeViolation(const Plan &plan,
                                              const std::map<std::string, int64_t> &bindings);

/// Runs every check of PlanVerifier on a whole plan (one built in code);
/// the first failure is a `plan-invalid` InputError naming the JSON pointer.
void verifyPlan(const Plan &plan);

} // namespace shardcheck
