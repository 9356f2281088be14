// Implementation of ir/Limits.h.
#include "ir/Limits.h"

#include "util/Checked.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace shardcheck {

namespace {

/// Derivation depth of every IterDomain, computed with an explicit stack so
/// that the check itself cannot overflow the one it guards.
class DepthWalk {
public:
  explicit DepthWalk(const Fusion &f) : f_(f) {}

  void run() {
    for (const auto &[n, id] : f_.ids)
      visit(n);
  }

private:
  enum class State { InProgress, Done };

  void visit(IdNum root) {
    if (state_.count(root))
      return;
    std::vector<IdNum> stack{root};
    while (!stack.empty()) {
      IdNum n = stack.back();
      auto [it, fresh] = state_.try_emplace(n, State::InProgress);
      const Transform *t = definitionOf(n);
      if (!fresh && it->second == State::Done) {
        stack.pop_back();
        continue;
      }
      bool waiting = false;
      if (t)
        for (IdNum in : t->inputs) {
          auto s = state_.find(in);
          if (s == state_.end()) {
            stack.push_back(in);
            waiting = true;
          } else if (s->second == State::InProgress && fresh) {
            throwInputError("transform-cycle",
                            f_.id(in).str() + " is derived from itself through " +
                                transformKindName(t->kind),
                            t->loc);
          }
        }
      if (waiting)
        continue;
      finish(n, t);
      stack.pop_back();
    }
  }

  const Transform *definitionOf(IdNum n) const {
    auto it = f_.ids.find(n);
    if (it == f_.ids.end() || !it->second.definition ||
        *it->second.definition >= f_.transforms.size())
      return nullptr;
    return &f_.transforms[*it->second.definition];
  }

  void finish(IdNum n, const Transform *t) {
    int d = 0;
    if (t)
      for (IdNum in : t->inputs)
        d = std::max(d, depth_[in] + 1);
    if (d > kMaxTransformDepth)
      throwInputError("transform-depth",
                      f_.id(n).str() + " is derived through more than " +
                          std::to_string(kMaxTransformDepth) +
                          " transforms; shardcheck's limit (docs/limits.md)",
                      t->loc);
    depth_[n] = d;
    state_[n] = State::Done;
  }

  const Fusion &f_;
  std::map<IdNum, State> state_;
  std::map<IdNum, int> depth_;
};

} // namespace

/// Every tensor's element count, as far as its extents are constants, fits
/// in int64: every count the checker and the executor derive from it (local
/// counts, offsets) is at most that large.
void checkElementCounts(const Fusion &fusion) {
  for (const auto &[n, tv] : fusion.tensors) {
    int64_t count = 1;
    for (IdNum i : tv.logical) {
      const IterDomain &id = fusion.id(i);
      auto c = id.extent.asConstant();
      if (id.isReduction() || !c)
        continue;
      auto next = checkedMul(count, *c);
      if (!next)
        throwInputError("size-overflow",
                        tv.name() + " has more elements than a signed 64-bit integer counts (" +
                            std::to_string(count) + " * " + std::to_string(*c) +
                            " overflows); see docs/limits.md",
                        tv.loc);
      count = *next;
    }
  }
}

void checkFusionLimits(const Fusion &fusion) {
  DepthWalk(fusion).run();
  checkElementCounts(fusion);
}

} // namespace shardcheck
