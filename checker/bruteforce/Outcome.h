// The brute-force evaluator's verdict type and its work limit.
//
// The brute-force evaluator (checker/bruteforce) is the independent reference
// implementation of docs/semantics.md that the SMT checker is cross-checked
// against. This header holds what every part of it returns: an outcome
// (holds / fails / unsupported / the bindings are not valid), a counterexample
// in the checker's vocabulary (checker/Lowering.h) and a reason.
//
// It also holds the internal `Stop` exception the evaluator uses to leave deep
// helpers with an unsupported or invalid-bindings verdict. Stop never escapes
// the public entry points: they catch it and return a BruteResult.
//
// Nothing here evaluates anything.
#pragma once

#include "checker/Lowering.h"
#include "util/Checked.h"

#include <cstdint>
#include <optional>
#include <string>

namespace shardcheck::bruteforce {

/// What the brute-force evaluator concluded about a claim.
enum class BruteOutcome {
  Holds,           ///< The claim holds for these bindings.
  Fails,           ///< The claim fails; a counterexample is attached.
  Unsupported,     ///< The semantics do not cover the edge (or it is too large).
  InvalidBindings, ///< A symbol is unbound or the bindings violate the
                   ///< fusion's implied constraints: nothing to check.
};

/// `holds`, `fails`, `unsupported`, `invalid-bindings`.
const char *bruteOutcomeName(BruteOutcome outcome);

/// The result of one brute-force check.
struct BruteResult {
  BruteOutcome outcome = BruteOutcome::Holds;
  /// Set exactly when outcome == Fails: the first failure in the fixed
  /// enumeration order (devices ascending, offsets ascending).
  std::optional<Counterexample> counterexample;
  /// Why, for Unsupported and InvalidBindings.
  std::string reason;

  bool holds() const { return outcome == BruteOutcome::Holds; }
  bool fails() const { return outcome == BruteOutcome::Fails; }

  static BruteResult holding() { return {}; }
  static BruteResult failing(Counterexample cex);
  static BruteResult unsupported(std::string reason);
  static BruteResult invalidBindings(std::string reason);
};

/// Bound on the work one check may do: elements x devices of each tensor, and
/// consumer elements x needed elements x devices for an edge. Beyond it the
/// check answers Unsupported ("too large for brute force") instead of hanging.
inline constexpr int64_t kWorkLimit = int64_t{1} << 20;

/// Internal: thrown by evaluator helpers to stop with a non-proof verdict.
struct Stop {
  BruteOutcome outcome;
  std::string reason;
};

[[noreturn]] void stopUnsupported(std::string reason);
[[noreturn]] void stopInvalidBindings(std::string reason);

using shardcheck::checkedAdd;
using shardcheck::checkedMul;

} // namespace shardcheck::bruteforce
