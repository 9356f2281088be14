// Brute-force loop claims; see LoopSlices.h.
#include "checker/bruteforce/LoopSlices.h"

#include "checker/bruteforce/ConcreteTensor.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardcheck::bruteforce {

namespace {

ConcreteTensor concrete(const Fusion &f, TensorNum t, const Bindings &b) {
  auto built = ConcreteTensor::build(f, t, b, ElementBasis::Logical);
  if (auto *failed = std::get_if<BruteResult>(&built))
    throw Stop{failed->outcome, failed->reason};
  return std::get<ConcreteTensor>(std::move(built));
}

int64_t valueOf(const Extent &e, const Bindings &b) {
  auto v = e.evaluate(b);
  if (!v)
    stopInvalidBindings("the loop bound " + e.str() + " is not bound");
  return *v;
}

BruteResult failAt(const Bindings &b, int64_t device, std::string message) {
  Counterexample c;
  c.bindings = b;
  c.device = device;
  c.message = std::move(message);
  return BruteResult::failing(std::move(c));
}

/// One iteration range and the slices it runs over, at concrete bindings.
class LoopRun {
public:
  LoopRun(const Fusion &f, const LoopedStatement &loop, const Bindings &b)
      : f_(f), loop_(loop), b_(b), lo_(valueOf(loop.loop.lo, b)), hi_(valueOf(loop.loop.hi, b)) {}

  std::optional<BruteResult> sliceMismatch(const SliceView &view) const;
  std::optional<BruteResult> readOutOfRange(const SliceView &in) const;
  std::optional<BruteResult> outputNotCovered(const SliceView &out) const;
  /// A swizzled write view: every device writes each slot once.
  std::optional<BruteResult> swizzledNotCovered(const SliceView &out) const;
  /// The slot device `d` takes in iteration `s` of a swizzled slice
  /// (nvFuser's ShardByStream: (s + team index) % team size).
  int64_t swizzledSlot(const SliceView &view, int64_t s, int64_t d) const;

private:
  std::string iteration(int64_t s) const {
    return "iteration " + loop_.loop.var + " = " + std::to_string(s);
  }
  int64_t axisExtent(const ConcreteTensor &base, const SliceView &view) const {
    return base.elementExtents().at(view.position);
  }

  const Fusion &f_;
  const LoopedStatement &loop_;
  const Bindings &b_;
  int64_t lo_, hi_;
};

std::optional<BruteResult> LoopRun::sliceMismatch(const SliceView &view) const {
  ConcreteTensor v = concrete(f_, view.view, b_), base = concrete(f_, view.base, b_);
  std::vector<int64_t> rest = base.elementExtents();
  rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(view.position));
  if (rest != v.elementExtents())
    stopInvalidBindings(v.name() + "'s extents are not those of " + base.name() +
                        " without its sliced axis");
  std::set<int64_t> devices(v.devices().begin(), v.devices().end());
  devices.insert(base.devices().begin(), base.devices().end());
  auto work = checkedMul(std::max<int64_t>(0, hi_ - lo_), v.elementCount());
  if (work)
    work = checkedMul(*work, static_cast<int64_t>(devices.size()));
  if (!work || *work > kWorkLimit)
    stopUnsupported("the loop over " + v.name() + " is too large for brute force");
  int64_t last = view.swizzled ? hi_ : std::min(hi_, axisExtent(base, view));
  for (int64_t s = std::max<int64_t>(lo_, 0); s < last; ++s)
    for (int64_t d : devices)
      for (int64_t y = 0; y < v.elementCount(); ++y) {
        Coords x = v.coordsOf(y);
        int64_t index = view.swizzled ? swizzledSlot(view, s, d) : s;
        if (index >= axisExtent(base, view))
          continue; // Past the axis: the coverage claim reports it.
        x.insert(x.begin() + static_cast<std::ptrdiff_t>(view.position), index);
        int64_t element = *base.elementAt(x);
        if (v.holds(d, y) == base.holds(d, element))
          continue;
        BruteResult r =
            failAt(b_, d,
                   iteration(s) + ": device " + std::to_string(d) + " holds " +
                       (v.holds(d, y) ? v.elementStr(y) : base.elementStr(element)) + " but not " +
                       (v.holds(d, y) ? base.elementStr(element) : v.elementStr(y)) +
                       ", the same element of the slice and of its base");
        r.counterexample->consumerIndex = v.coordsOf(y);
        r.counterexample->producerIndex = x;
        return r;
      }
  return std::nullopt;
}

std::optional<BruteResult> LoopRun::readOutOfRange(const SliceView &in) const {
  ConcreteTensor base = concrete(f_, in.base, b_);
  int64_t extent = axisExtent(base, in);
  for (int64_t s = lo_; s < hi_; ++s)
    if (s < 0 || s >= extent)
      return failAt(b_, -1,
                    iteration(s) + " reads index " + std::to_string(s) + " of " + base.name() +
                        "'s sliced axis, whose extent is " + std::to_string(extent));
  return std::nullopt;
}

int64_t LoopRun::swizzledSlot(const SliceView &view, int64_t s, int64_t d) const {
  const TensorView &base = f_.tensor(view.base);
  if (!base.mesh || base.mesh->rank() != 1 || !base.mesh->contains(d))
    stopUnsupported("the swizzled slice is not of a tensor on a 1-D mesh holding every device");
  return (s + base.mesh->coordinate(d, ParallelType::DIDx)) % base.mesh->size();
}

std::optional<BruteResult> LoopRun::swizzledNotCovered(const SliceView &out) const {
  ConcreteTensor base = concrete(f_, out.base, b_);
  int64_t extent = axisExtent(base, out);
  const DeviceMesh &mesh = *f_.tensor(out.base).mesh;
  if (lo_ < 0)
    return failAt(b_, -1, iteration(lo_) + " takes a negative stream index");
  for (int64_t d : mesh.devices()) {
    std::map<int64_t, int64_t> first; // slot -> the iteration writing it
    for (int64_t s = lo_; s < hi_; ++s) {
      int64_t slot = swizzledSlot(out, s, d);
      if (slot >= extent)
        return failAt(b_, d,
                      iteration(s) + " writes slot " + std::to_string(slot) + " of " + base.name() +
                          ", past its stream axis (extent " + std::to_string(extent) + ")");
      if (!first.emplace(slot, s).second)
        return failAt(b_, d,
                      iteration(s) + " writes slot " + std::to_string(slot) + " of " + base.name() +
                          " a second time");
    }
    for (int64_t slot = 0; slot < extent; ++slot)
      if (!first.count(slot))
        return failAt(b_, d,
                      "slot " + std::to_string(slot) + " of " + base.name() + " on device " +
                          std::to_string(d) + " is written by no iteration");
  }
  return std::nullopt;
}

std::optional<BruteResult> LoopRun::outputNotCovered(const SliceView &out) const {
  if (out.swizzled)
    return swizzledNotCovered(out);
  ConcreteTensor base = concrete(f_, out.base, b_);
  int64_t extent = axisExtent(base, out);
  for (int64_t s = std::min<int64_t>(lo_, 0); s < std::max(hi_, extent); ++s) {
    bool ran = lo_ <= s && s < hi_, exists = 0 <= s && s < extent;
    if (ran && !exists)
      return failAt(b_, -1,
                    iteration(s) + " writes index " + std::to_string(s) + " of " + base.name() +
                        ", past its sliced axis (extent " + std::to_string(extent) + ")");
    if (exists && !ran)
      return failAt(b_, -1,
                    iteration(s) + " is missing: index " + std::to_string(s) + " of " +
                        base.name() + " is written by no iteration");
  }
  return std::nullopt;
}

} // namespace

BruteResult bruteLoopedStatement(const Fusion &fusion, const LoopedStatement &loop,
                                 const Bindings &bindings) {
  try {
    LoopRun run(fusion, loop, bindings);
    // Every claim is evaluated (bindings that violate a constraint show
    // anywhere), and the first failure in the checker's order is reported.
    std::vector<std::optional<BruteResult>> failures;
    for (const SliceView &read : loop.reads)
      failures.push_back(run.sliceMismatch(read));
    if (loop.write)
      failures.push_back(run.sliceMismatch(*loop.write));
    for (const SliceView &read : loop.reads)
      failures.push_back(run.readOutOfRange(read));
    if (loop.write)
      failures.push_back(run.outputNotCovered(*loop.write));
    for (auto &failure : failures)
      if (failure)
        return *failure;
    return BruteResult::holding();
  } catch (const Stop &stop) {
    if (stop.outcome == BruteOutcome::InvalidBindings)
      return BruteResult::invalidBindings(stop.reason);
    return BruteResult::unsupported(stop.reason);
  }
}

} // namespace shardcheck::bruteforce
