// The brute-force verdict type; see Outcome.h.
#include "checker/bruteforce/Outcome.h"

namespace shardcheck::bruteforce {

const char *bruteOutcomeName(BruteOutcome outcome) {
  switch (outcome) {
  case BruteOutcome::Holds:
    return "holds";
  case BruteOutcome::Fails:
    return "fails";
  case BruteOutcome::Unsupported:
    return "unsupported";
  case BruteOutcome::InvalidBindings:
    return "invalid-bindings";
  }
  return "?";
}

BruteResult BruteResult::failing(Counterexample cex) {
  BruteResult r;
  r.outcome = BruteOutcome::Fails;
  r.counterexample = std::move(cex);
  return r;
}

BruteResult BruteResult::unsupported(std::string reason) {
  BruteResult r;
  r.outcome = BruteOutcome::Unsupported;
  r.reason = std::move(reason);
  return r;
}

BruteResult BruteResult::invalidBindings(std::string reason) {
  BruteResult r;
  r.outcome = BruteOutcome::InvalidBindings;
  r.reason = std::move(reason);
  return r;
}

void stopUnsupported(std::string reason) {
  throw Stop{BruteOutcome::Unsupported, std::move(reason)};
}

void stopInvalidBindings(std::string reason) {
  throw Stop{BruteOutcome::InvalidBindings, std::move(reason)};
}

} // namespace shardcheck::bruteforce
