// Brute-force edge semantics and lowering checks; see BruteForce.h and
// docs/semantics.md ("What a consumer element needs", "Lowerings").
#include "checker/bruteforce/BruteForce.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardcheck::bruteforce {

namespace {

std::string devicesStr(const std::vector<int64_t> &devices) {
  std::string s = "(";
  for (size_t i = 0; i < devices.size(); ++i)
    s += (i ? " " : "") + std::to_string(devices[i]);
  return s + ")";
}

std::string heldByStr(const std::vector<int64_t> &holders) {
  if (holders.empty())
    return "(held by no device)";
  std::string s = "(held by";
  for (int64_t d : holders)
    s += " " + std::to_string(d);
  return s + ")";
}

BruteResult resultOf(const Stop &stop) {
  if (stop.outcome == BruteOutcome::InvalidBindings)
    return BruteResult::invalidBindings(stop.reason);
  return BruteResult::unsupported(stop.reason);
}

} // namespace

// --- EdgeModel. ---

std::variant<EdgeModel, BruteResult> EdgeModel::build(const Fusion &fusion, const FusionEdge &edge,
                                                      const Bindings &bindings) {
  if (edge.map.unsupported)
    return BruteResult::unsupported(*edge.map.unsupported);
  auto producer = ConcreteTensor::build(fusion, edge.producer, bindings, ElementBasis::Logical);
  if (auto *failed = std::get_if<BruteResult>(&producer))
    return *failed;
  auto consumer = ConcreteTensor::build(fusion, edge.consumer, bindings, ElementBasis::Root);
  if (auto *failed = std::get_if<BruteResult>(&consumer))
    return *failed;
  EdgeModel model(std::get<ConcreteTensor>(std::move(producer)),
                  std::get<ConcreteTensor>(std::move(consumer)), bindings);
  try {
    model.deriveRules(fusion, edge);
  } catch (const Stop &stop) {
    return resultOf(stop);
  }
  const auto &c = model.consumer_;
  auto work = checkedMul(c.elementCount(), model.rangedCount_);
  if (work)
    work = checkedMul(*work, std::max<int64_t>(1, c.devices().size()));
  if (!work || *work > kWorkLimit)
    return BruteResult::unsupported("the edge " + model.producer_.name() + " -> " + c.name() +
                                    " is too large for brute force");
  return model;
}

void EdgeModel::deriveRules(const Fusion &fusion, const FusionEdge &edge) {
  const auto &consumerIds = consumer_.elementIds();
  for (IdNum q : producer_.elementIds()) {
    const auto &qId = fusion.id(q);
    int64_t qExtent = *producer_.extentOf(q);
    auto c = edge.map.consumerOf(q);
    AxisRule rule;
    if (!c) {
      if (!qId.isBroadcast())
        stopUnsupported(qId.str() + " of " + producer_.name() + " maps to no axis of " +
                        consumer_.name() + " and is not a broadcast");
    } else if (fusion.id(*c).isReduction()) {
      rule = {AxisRule::Kind::Ranged, 0, qExtent};
      reductionEdge_ = reductionEdge_ || !qId.isBroadcast();
      auto product = checkedMul(rangedCount_, qExtent);
      if (!product || *product > kWorkLimit)
        stopUnsupported("the reduction of " + producer_.name() + " is too large for brute force");
      rangedCount_ = *product;
    } else if (!qId.isBroadcast()) {
      auto pos = std::find(consumerIds.begin(), consumerIds.end(), *c);
      if (pos == consumerIds.end())
        stopUnsupported(qId.str() + " of " + producer_.name() + " maps to " + fusion.id(*c).str() +
                        ", which is not a root data axis of " + consumer_.name());
      size_t index = pos - consumerIds.begin();
      if (consumer_.elementExtents()[index] > qExtent)
        stopUnsupported(fusion.id(*c).str() + " of " + consumer_.name() + " (extent " +
                        std::to_string(consumer_.elementExtents()[index]) + ") is larger than " +
                        qId.str() + " of " + producer_.name() + " (extent " +
                        std::to_string(qExtent) + ") it maps to");
      rule = {AxisRule::Kind::FromConsumer, index, 1};
    }
    rules_.push_back(rule);
  }
}

std::vector<int64_t> EdgeModel::needs(int64_t y) const {
  Coords yCoords = consumer_.coordsOf(y);
  Coords x(rules_.size(), 0);
  std::vector<int64_t> result;
  for (int64_t r = 0; r < rangedCount_; ++r) {
    int64_t rest = r; // Row-major digits of the reduced coordinates.
    for (size_t k = rules_.size(); k-- > 0;) {
      const AxisRule &rule = rules_[k];
      if (rule.kind == AxisRule::Kind::FromConsumer) {
        x[k] = yCoords[rule.consumerCoord];
      } else if (rule.kind == AxisRule::Kind::Ranged) {
        x[k] = rest % rule.extent;
        rest /= rule.extent;
      } else {
        x[k] = 0;
      }
    }
    auto element = producer_.elementAt(x);
    SC_ASSERT(element, "needed producer index out of range");
    result.push_back(*element);
  }
  std::sort(result.begin(), result.end());
  return result;
}

// --- Needs no communication. ---

BruteResult bruteNeedsNoCommunication(const EdgeModel &model) {
  const auto &p = model.producer();
  const auto &c = model.consumer();
  for (int64_t d : c.devices())
    for (int64_t y : c.heldBy(d))
      for (int64_t x : model.needs(y)) {
        if (p.holds(d, x))
          continue;
        Counterexample cex;
        cex.bindings = model.bindings();
        cex.device = d;
        cex.consumerIndex = c.coordsOf(y);
        cex.producerIndex = p.coordsOf(x);
        cex.holders = p.holders(x);
        cex.message = "device " + std::to_string(d) + " holds " + c.elementStr(y) + " but lacks " +
                      p.elementStr(x) + ", which it needs " + heldByStr(cex.holders);
        return BruteResult::failing(std::move(cex));
      }
  return BruteResult::holding();
}

namespace {

/// An edge of a Set.Permute whose permutation is unknown (printed without
/// its root domain): each consumer element needs one producer element,
/// which one is unknown. Nothing moves iff every device
/// that may hold consumer elements holds every producer element; otherwise
/// the edge stays unsupported.
BruteResult unmappedCopyNeedsNothing(const Fusion &fusion, const FusionEdge &edge,
                                     const Bindings &bindings) {
  const Expr &e = fusion.exprs[edge.expr];
  if (e.kind != OpKind::Permute || e.inputs.size() != 1)
    return BruteResult::unsupported(*edge.map.unsupported);
  auto producer = ConcreteTensor::build(fusion, edge.producer, bindings, ElementBasis::Logical);
  if (auto *failed = std::get_if<BruteResult>(&producer))
    return *failed;
  auto consumer = ConcreteTensor::build(fusion, edge.consumer, bindings, ElementBasis::Logical);
  if (auto *failed = std::get_if<BruteResult>(&consumer))
    return *failed;
  const auto &p = std::get<ConcreteTensor>(producer);
  for (int64_t d : std::get<ConcreteTensor>(consumer).devices())
    for (int64_t x = 0; x < p.elementCount(); ++x)
      if (!p.holds(d, x))
        return BruteResult::unsupported(*edge.map.unsupported);
  return BruteResult::holding();
}

} // namespace

BruteResult bruteNeedsNoCommunication(const Fusion &fusion, const FusionEdge &edge,
                                      const Bindings &bindings) {
  if (edge.map.unsupported)
    return unmappedCopyNeedsNothing(fusion, edge, bindings);
  auto model = EdgeModel::build(fusion, edge, bindings);
  if (auto *failed = std::get_if<BruteResult>(&model))
    return *failed;
  return bruteNeedsNoCommunication(std::get<EdgeModel>(model));
}

// --- Lowerings. ---

namespace {

/// No element (an empty slot, nothing delivered); element numbers are >= 0.
constexpr int64_t kNothing = -1;

/// Checks one lowering against the model, in the fixed order: shape, layouts,
/// counts (team by team), then devices ascending and offsets ascending.
class LoweringChecker {
public:
  LoweringChecker(const EdgeModel &model, const Lowering &lowering, Issuer issuer)
      : model_(model), p_(model.producer()), c_(model.consumer()), lowering_(lowering),
        kind_(lowering.kind), issuer_(issuer) {}

  BruteResult run();

private:
  /// How a device of a team takes part. Only receiving devices get one.
  struct Role {
    size_t team = 0;
    int64_t rank = 0;
    int64_t source = -1; ///< SendRecv: the device it receives from.
  };
  /// Where a delivered value comes from: an offset of a producer buffer.
  struct Source {
    int64_t device = 0;
    int64_t offset = 0;
  };
  using Failure = std::optional<BruteResult>;

  Failure checkShape();
  Failure checkTeamShape(size_t t, std::set<int64_t> &seen);
  Failure checkLayouts() const;
  Failure checkCounts();
  Failure checkTeamCounts(size_t t);
  Failure checkOutputs(size_t t, int64_t expected, const std::string &shape) const;
  Failure checkGatherCounts(size_t t);
  Failure checkScatterCounts(size_t t);
  Failure checkAllToAllCounts(size_t t);
  Failure checkReduceScatterCounts(size_t t);
  Failure checkSendRecvCounts();
  Failure checkAliasCounts() const;
  Failure checkDevice(int64_t d);
  Failure checkLocal(int64_t d) const;
  Failure checkDelivered(int64_t d, const Role &role) const;
  Failure checkReduced(int64_t d, const Role &role) const;
  Failure checkBufferReductionCounts(size_t t);
  Failure checkBufferSum(int64_t d, const Role &role) const;
  /// A reduction of the producer's own buffers rather than of partials.
  bool readsBuffers() const {
    return lowering_.reduceInput == Lowering::ReduceInput::ProducerBuffer;
  }
  /// The padded lowerings docs/semantics.md defines (Padded collectives),
  /// spelled out here rather than asked of Lowering.h: Allgather and
  /// AllToAll with the unpad copy or slot for slot, SendRecv pairs, and
  /// reductions of partials or of the members' own padded buffers.
  bool paddable() const {
    if (kind_ == CommKind::Allgather || kind_ == CommKind::AllToAll)
      return true;
    if (kind_ == CommKind::SendRecv)
      return !lowering_.localPermute;
    bool reduction = kind_ == CommKind::Allreduce || kind_ == CommKind::Reduce ||
                     kind_ == CommKind::ReduceScatter;
    return reduction && !lowering_.localPermute;
  }
  /// A padded collective that moves whole padded buffers slot for slot (a
  /// compiler's Communication with `padded=true`, or SendRecv+pad): no
  /// unpad copy, and a reduction reads the members' own buffers.
  bool slotForSlot() const {
    return lowering_.padded && !lowering_.localPermute &&
           (!isReductionComm(kind_) || readsBuffers());
  }
  Failure checkPaddedCounts(size_t t);
  Failure checkSlotForSlotCounts(size_t t);
  Failure checkPaddedGather(int64_t d, const Role &role) const;
  BruteResult wrongDelivery(int64_t d, const Role &role, const BufferSlot &slot, int64_t position,
                            std::optional<Source> source, int64_t delivered) const;

  bool receives(const Team &team, int64_t device) const;
  std::vector<int64_t> receivers(size_t t) const;
  std::optional<Source> deliver(int64_t d, const Role &role, int64_t position) const;
  std::vector<int64_t> slotPositions(int64_t d) const;
  Failure checkPermuted(int64_t d, const Role &role) const;

  std::string label(size_t t) const;
  std::string countsStr(const ConcreteTensor &tensor, const std::vector<int64_t> &devices,
                        int64_t bad) const;
  BruteResult fail(int64_t device, std::string message) const;
  BruteResult failAt(int64_t device, int64_t y, std::optional<int64_t> x, int64_t offset,
                     std::string message) const;

  const EdgeModel &model_;
  const ConcreteTensor &p_;
  const ConcreteTensor &c_;
  const Lowering &lowering_;
  CommKind kind_;
  Issuer issuer_;
  std::map<int64_t, Role> roles_;
  std::vector<int64_t> chunk_; ///< k per team.
};

std::string LoweringChecker::label(size_t t) const {
  std::string s = commKindName(kind_);
  if (lowering_.padded)
    s += "+pad";
  else if (lowering_.localPermute)
    s += "+permute";
  if (kind_ == CommKind::None || kind_ == CommKind::Alias || kind_ == CommKind::SendRecv ||
      t >= lowering_.teams.size())
    return s;
  const Team &team = lowering_.teams[t];
  s += " over team " + devicesStr(team.devices);
  if (team.root && isRootedComm(kind_))
    s += (commRootRole(kind_) == RootRole::Sends ? " from root " : " to root ") +
         std::to_string(*team.root);
  return s;
}

BruteResult LoweringChecker::fail(int64_t device, std::string message) const {
  Counterexample cex;
  cex.bindings = model_.bindings();
  cex.device = device;
  cex.message = std::move(message);
  return BruteResult::failing(std::move(cex));
}

BruteResult LoweringChecker::failAt(int64_t device, int64_t y, std::optional<int64_t> x,
                                    int64_t offset, std::string message) const {
  BruteResult r = fail(device, std::move(message));
  r.counterexample->consumerIndex = c_.coordsOf(y);
  r.counterexample->offset = offset;
  if (x) {
    r.counterexample->producerIndex = p_.coordsOf(*x);
    r.counterexample->holders = p_.holders(*x);
  }
  return r;
}

/// "T1 holds 1 on each device" when all of `devices` agree, else the count
/// on the first offender `bad`.
std::string LoweringChecker::countsStr(const ConcreteTensor &tensor,
                                       const std::vector<int64_t> &devices, int64_t bad) const {
  bool same = std::all_of(devices.begin(), devices.end(),
                          [&](int64_t d) { return tensor.count(d) == tensor.count(devices[0]); });
  if (same && devices.size() > 1)
    return tensor.name() + " holds " + std::to_string(tensor.count(bad)) + " on each device";
  return tensor.name() + " holds " + std::to_string(tensor.count(bad)) + " on device " +
         std::to_string(bad);
}

// Shape: which devices receive, and whether the teams make sense at all.

bool LoweringChecker::receives(const Team &team, int64_t device) const {
  switch (kind_) {
  case CommKind::Gather:
  case CommKind::Reduce:
    return team.root == device;
  case CommKind::Scatter:
  case CommKind::Broadcast:
    // A root outside the consumer's mesh only sends.
    return team.root != device ||
           std::binary_search(c_.devices().begin(), c_.devices().end(), device);
  default:
    return true;
  }
}

LoweringChecker::Failure LoweringChecker::checkTeamShape(size_t t, std::set<int64_t> &seen) {
  const Team &team = lowering_.teams[t];
  std::string what = "malformed " + label(t) + ": ";
  if (team.devices.empty())
    return fail(-1, what + "the team is empty");
  if (isRootedComm(kind_) && !team.root)
    return fail(team.devices[0], what + "it has no root");
  auto addReceiver = [&](int64_t d, int64_t rank) -> Failure {
    const auto &owners = c_.devices();
    if (!std::count(owners.begin(), owners.end(), d))
      return fail(d, what + "it writes " + c_.name() + " on device " + std::to_string(d) +
                         ", which is outside " + c_.name() + "'s devices");
    roles_[d] = Role{t, rank, -1};
    return std::nullopt;
  };
  for (size_t r = 0; r < team.devices.size(); ++r) {
    int64_t d = team.devices[r];
    if (!seen.insert(d).second)
      return fail(d, what + "device " + std::to_string(d) + " is in a team twice");
    if (receives(team, d))
      if (auto f = addReceiver(d, static_cast<int64_t>(r)))
        return f;
  }
  // A Gather's or Reduce's root need not contribute (docs/semantics.md,
  // Lowerings): outside the data members it only receives.
  bool rootInTeam = team.root && std::count(team.devices.begin(), team.devices.end(), *team.root);
  if ((kind_ == CommKind::Gather || kind_ == CommKind::Reduce) && !rootInTeam) {
    if (!seen.insert(*team.root).second)
      return fail(*team.root,
                  what + "device " + std::to_string(*team.root) + " is in a team twice");
    return addReceiver(*team.root, -1);
  }
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkShape() {
  bool permutable =
      kind_ == CommKind::Allgather || kind_ == CommKind::Gather || kind_ == CommKind::AllToAll;
  if (lowering_.localPermute && !permutable)
    return BruteResult::unsupported(std::string("brute force models a local permute only after "
                                                "Allgather, Gather and AllToAll, not ") +
                                    commKindName(kind_));
  if (lowering_.padded && !paddable())
    return BruteResult::unsupported("brute force models padding for Allgather and AllToAll "
                                    "(with the unpad copy or slot for slot), SendRecv pairs "
                                    "and reductions, not " +
                                    label(0));
  if (kind_ == CommKind::None)
    return std::nullopt;
  if (kind_ == CommKind::Alias) {
    for (int64_t d : c_.devices())
      roles_[d] = Role{0, 0, d};
    return std::nullopt;
  }
  if (lowering_.teams.empty())
    return fail(-1, "malformed " + label(0) + ": it has no team");
  if (kind_ == CommKind::SendRecv) {
    for (const Team &team : lowering_.teams)
      for (const auto &[src, dst] : team.pairs) {
        if (roles_.count(dst))
          return fail(dst, "malformed SendRecv: device " + std::to_string(dst) + " receives twice");
        roles_[dst] = Role{0, 0, src};
      }
    return std::nullopt;
  }
  std::set<int64_t> seen;
  for (size_t t = 0; t < lowering_.teams.size(); ++t)
    if (auto f = checkTeamShape(t, seen))
      return f;
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkLayouts() const {
  if (c_.layoutError())
    return BruteResult::unsupported(*c_.layoutError());
  // Non-reduction collectives read the producer's buffers; reductions read
  // local partials, and `none` reads nothing.
  bool readsProducerBuffer = kind_ != CommKind::None && (!isReductionComm(kind_) || readsBuffers());
  if (readsProducerBuffer && p_.layoutError())
    return BruteResult::unsupported(*p_.layoutError());
  return std::nullopt;
}

// Counts.

std::vector<int64_t> LoweringChecker::receivers(size_t t) const {
  // Team members in rank order, then a root that is not a data member.
  std::vector<int64_t> r;
  for (int64_t d : lowering_.teams[t].devices)
    if (auto it = roles_.find(d); it != roles_.end() && it->second.team == t)
      r.push_back(d);
  for (const auto &[d, role] : roles_)
    if (role.team == t && role.rank < 0)
      r.push_back(d);
  return r;
}

/// Every receiver of team `t` must hold `expected` elements of the consumer.
LoweringChecker::Failure LoweringChecker::checkOutputs(size_t t, int64_t expected,
                                                       const std::string &shape) const {
  const std::vector<int64_t> outs = receivers(t);
  for (int64_t d : outs)
    if (c_.count(d) != expected)
      return fail(d, label(t) + " needs an output of " + shape + " elements but " +
                         countsStr(c_, outs, d));
  return std::nullopt;
}

/// Allgather and Gather: all |in| = k; receivers' |out| = n * k.
LoweringChecker::Failure LoweringChecker::checkGatherCounts(size_t t) {
  const auto &members = lowering_.teams[t].devices;
  const int64_t n = static_cast<int64_t>(members.size());
  const int64_t k = p_.count(members[0]);
  for (int64_t d : members)
    if (p_.count(d) != k)
      return fail(d, label(t) + " needs inputs of equal size but " + p_.name() + " holds " +
                         std::to_string(k) + " on device " + std::to_string(members[0]) + " and " +
                         std::to_string(p_.count(d)) + " on device " + std::to_string(d));
  chunk_[t] = k;
  return checkOutputs(t, n * k, std::to_string(n) + " x " + std::to_string(k));
}

/// Scatter: receivers' |out| = k; |in_root| = n * k.
LoweringChecker::Failure LoweringChecker::checkScatterCounts(size_t t) {
  const Team &team = lowering_.teams[t];
  const int64_t n = static_cast<int64_t>(team.devices.size());
  const int64_t root = *team.root;
  const std::vector<int64_t> outs = receivers(t);
  const int64_t k = outs.empty() ? p_.count(root) / n : c_.count(outs[0]);
  if (auto f = checkOutputs(t, k, std::to_string(k)))
    return f;
  chunk_[t] = k;
  if (p_.count(root) != n * k)
    return fail(root, label(t) + " needs an input of " + std::to_string(n) + " x " +
                          std::to_string(k) + " elements on the root but " + p_.name() + " holds " +
                          std::to_string(p_.count(root)) + " on device " + std::to_string(root));
  return std::nullopt;
}

/// AllToAll: all |in| = |out| = n * k.
LoweringChecker::Failure LoweringChecker::checkAllToAllCounts(size_t t) {
  const auto &members = lowering_.teams[t].devices;
  const int64_t n = static_cast<int64_t>(members.size());
  if (p_.count(members[0]) % n != 0)
    return fail(members[0], label(t) + " needs inputs of " + std::to_string(n) +
                                " equal chunks but " + countsStr(p_, members, members[0]));
  const int64_t k = p_.count(members[0]) / n;
  const std::string shape = std::to_string(n) + " x " + std::to_string(k);
  for (int64_t d : members)
    if (p_.count(d) != n * k)
      return fail(d, label(t) + " needs inputs of " + shape + " elements but " +
                         countsStr(p_, members, d));
  chunk_[t] = k;
  return checkOutputs(t, n * k, shape);
}

/// ReduceScatter: all |out| = k. The partial inputs are laid out by the
/// plan's local reduction from the consumer's elements (n x k by
/// construction, docs/semantics.md), so they have no count to check.
LoweringChecker::Failure LoweringChecker::checkReduceScatterCounts(size_t t) {
  const auto &members = lowering_.teams[t].devices;
  const int64_t k = c_.count(members[0]);
  return checkOutputs(t, k, "equal size (" + std::to_string(k) + ")");
}

/// A reduction of the producer's own buffers (a compiler's lowering): every
/// member holds a buffer of |out| elements (Allreduce, Reduce) or of
/// n x |out| (ReduceScatter, one chunk per rank).
LoweringChecker::Failure LoweringChecker::checkBufferReductionCounts(size_t t) {
  const Team &team = lowering_.teams[t];
  const int64_t n = static_cast<int64_t>(team.devices.size());
  const auto &owners = p_.devices();
  for (int64_t m : team.devices)
    if (!std::binary_search(owners.begin(), owners.end(), m))
      return fail(m, label(t) + " reads " + p_.name() + " on device " + std::to_string(m) +
                         ", which holds none of it");
  const std::vector<int64_t> outs = receivers(t);
  const int64_t out = outs.empty() ? 0 : c_.count(outs[0]);
  if (auto f = checkOutputs(t, out, "equal size (" + std::to_string(out) + ")"))
    return f;
  const int64_t in = kind_ == CommKind::ReduceScatter ? n * out : out;
  for (int64_t m : team.devices)
    if (p_.count(m) != in)
      return fail(m, label(t) + " needs an input of " + std::to_string(in) + " elements but " +
                         countsStr(p_, team.devices, m));
  chunk_[t] = out;
  return std::nullopt;
}

/// The padded count of `tensor`: the product of its layout extents.
int64_t paddedCount(const ConcreteTensor &tensor) {
  int64_t k = 1;
  for (int64_t e : tensor.layoutExtents())
    k *= e;
  return k;
}

/// Padded lowerings: every member's padded buffer (the product of the
/// layout extents, padding included) has one size k, the chunk the
/// collective moves; the held counts may differ.
LoweringChecker::Failure LoweringChecker::checkPaddedCounts(size_t t) {
  const ConcreteTensor &chunked = isReductionComm(kind_) ? c_ : p_;
  int64_t k = paddedCount(chunked);
  const auto &owners = p_.devices();
  for (int64_t d : lowering_.teams[t].devices) {
    // Allgather and AllToAll read every member's producer buffer; members of
    // a reduction without one contribute zero partials.
    if (!isReductionComm(kind_) && !std::binary_search(owners.begin(), owners.end(), d))
      return fail(d, label(t) + " reads " + p_.name() + " on device " + std::to_string(d) +
                         ", which holds none of it");
    if (chunked.count(d) > k)
      return fail(d, label(t) + " pads to " + std::to_string(k) + " slots but " + chunked.name() +
                         " holds " + std::to_string(chunked.count(d)) + " elements on device " +
                         std::to_string(d));
  }
  chunk_[t] = k;
  return std::nullopt;
}

/// A collective moved slot for slot on the padded buffers: the plain
/// kind's count rule on the padded counts kP (producer) and kC (consumer),
/// the held counts aside. Allgather: kC = n * kP, chunk kP; AllToAll: kP =
/// kC, n chunks of kC / n; ReduceScatter: kP = n * kC, chunk kC; Allreduce
/// and Reduce: kP = kC. Every member reads its own producer buffer.
LoweringChecker::Failure LoweringChecker::checkSlotForSlotCounts(size_t t) {
  const auto &members = lowering_.teams[t].devices;
  const int64_t n = static_cast<int64_t>(members.size());
  const int64_t kP = paddedCount(p_), kC = paddedCount(c_);
  const auto &owners = p_.devices();
  for (int64_t m : members)
    if (!std::binary_search(owners.begin(), owners.end(), m))
      return fail(m, label(t) + " reads " + p_.name() + " on device " + std::to_string(m) +
                         ", which holds none of it");
  bool fits = kP == kC; // Allreduce, Reduce.
  int64_t chunk = kC;
  if (kind_ == CommKind::Allgather) {
    fits = kC == n * kP;
    chunk = kP;
  } else if (kind_ == CommKind::AllToAll) {
    fits = kP == kC && kC % n == 0;
    chunk = kC / n;
  } else if (kind_ == CommKind::ReduceScatter) {
    fits = kP == n * kC;
  }
  if (!fits)
    return fail(members[0], label(t) + " moves padded buffers of " + std::to_string(kP) +
                                " slots, which do not fit " + c_.name() + "'s padded buffers of " +
                                std::to_string(kC) + " slots");
  chunk_[t] = chunk;
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkTeamCounts(size_t t) {
  const Team &team = lowering_.teams[t];
  if (slotForSlot())
    return checkSlotForSlotCounts(t);
  if (lowering_.padded)
    return checkPaddedCounts(t);
  if (isReductionComm(kind_) && readsBuffers())
    return checkBufferReductionCounts(t);
  switch (kind_) {
  case CommKind::Allgather:
  case CommKind::Gather:
    return checkGatherCounts(t);
  case CommKind::Scatter:
    return checkScatterCounts(t);
  case CommKind::Broadcast: {
    const int64_t in = p_.count(*team.root);
    return checkOutputs(t, in, std::to_string(in));
  }
  case CommKind::AllToAll:
    return checkAllToAllCounts(t);
  case CommKind::Allreduce: {
    const int64_t out = c_.count(team.devices[0]);
    return checkOutputs(t, out, "equal size (" + std::to_string(out) + ")");
  }
  case CommKind::ReduceScatter:
    return checkReduceScatterCounts(t);
  default: // Reduce requires no counts.
    return std::nullopt;
  }
}

LoweringChecker::Failure LoweringChecker::checkSendRecvCounts() {
  // SendRecv+pad copies whole padded buffers; the held counts may differ.
  if (lowering_.padded && paddedCount(c_) != paddedCount(p_))
    return fail(roles_.empty() ? -1 : roles_.begin()->first,
                label(0) + " copies padded buffers of " + std::to_string(paddedCount(p_)) +
                    " slots into " + std::to_string(paddedCount(c_)) + " slots of " + c_.name());
  for (const auto &[dst, role] : roles_)
    if (!lowering_.padded && c_.count(dst) != p_.count(role.source))
      return fail(dst, "SendRecv " + std::to_string(role.source) + " -> " + std::to_string(dst) +
                           " needs an output of " + std::to_string(p_.count(role.source)) +
                           " elements but " + c_.name() + " holds " +
                           std::to_string(c_.count(dst)) + " on device " + std::to_string(dst));
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkAliasCounts() const {
  for (int64_t d : c_.devices())
    if (c_.count(d) != p_.count(d))
      return fail(d, "alias needs " + c_.name() + " and " + p_.name() +
                         " to hold as many elements on device " + std::to_string(d) + " but " +
                         c_.name() + " holds " + std::to_string(c_.count(d)) + " and " + p_.name() +
                         " " + std::to_string(p_.count(d)));
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkCounts() {
  if (kind_ == CommKind::None)
    return std::nullopt;
  if (kind_ == CommKind::Alias)
    return checkAliasCounts();
  if (kind_ == CommKind::SendRecv)
    return checkSendRecvCounts();
  chunk_.assign(lowering_.teams.size(), 0);
  for (size_t t = 0; t < lowering_.teams.size(); ++t)
    if (auto f = checkTeamCounts(t))
      return f;
  return std::nullopt;
}

// Slots.

std::optional<LoweringChecker::Source> LoweringChecker::deliver(int64_t d, const Role &role,
                                                                int64_t position) const {
  if (kind_ == CommKind::Alias || kind_ == CommKind::SendRecv)
    return Source{role.source, position};
  const Team &team = lowering_.teams[role.team];
  const int64_t n = static_cast<int64_t>(team.devices.size());
  const int64_t k = chunk_[role.team];
  switch (kind_) {
  case CommKind::Allgather:
  case CommKind::Gather:
    if (k == 0 || position / k >= n)
      return std::nullopt;
    return Source{team.devices[position / k], position % k};
  case CommKind::Scatter:
    return Source{*team.root, role.rank * k + position};
  case CommKind::Broadcast:
    return Source{*team.root, position};
  case CommKind::AllToAll:
    if (k == 0 || position / k >= n)
      return std::nullopt;
    return Source{team.devices[position / k], role.rank * k + position % k};
  default:
    return std::nullopt;
  }
}

/// Where each slot of `d`'s buffer sits in what the collective writes: the
/// buffer itself (no local permute).
std::vector<int64_t> LoweringChecker::slotPositions(int64_t d) const {
  std::vector<int64_t> positions;
  for (const auto &slot : c_.buffer(d))
    positions.push_back(slot.offset);
  return positions;
}

/// With a local permute (docs/semantics.md, Lowerings): the collective fills
/// a temporary, and a local copy places every element. Allgather/Gather: the
/// temporary holds every member's whole buffer. AllToAll: each member packs
/// what it holds by destination, so each held element must be needed by
/// exactly one member of the team. Then every slot's needed element must be
/// in the temporary.
LoweringChecker::Failure LoweringChecker::checkPermuted(int64_t d, const Role &role) const {
  const Team &team = lowering_.teams[role.team];
  std::set<int64_t> temporary;
  for (int64_t m : team.devices)
    for (const auto &slot : p_.buffer(m))
      temporary.insert(slot.element);
  if (kind_ == CommKind::AllToAll)
    for (int64_t m : team.devices)
      for (const auto &slot : p_.buffer(m)) {
        int64_t destinations = 0;
        for (int64_t r : team.devices)
          for (const auto &cs : c_.buffer(r)) {
            auto needed = model_.needs(cs.element);
            if (std::count(needed.begin(), needed.end(), slot.element)) {
              ++destinations;
              break;
            }
          }
        if (destinations != 1) {
          BruteResult r =
              fail(m, p_.elementStr(slot.element) + " on device " + std::to_string(m) +
                          " is needed by " + std::to_string(destinations) + " members of " +
                          label(role.team) + "; an AllToAll sends each element to exactly one");
          r.counterexample->producerIndex = p_.coordsOf(slot.element);
          return r;
        }
      }
  for (const auto &slot : c_.buffer(d)) {
    auto needed = model_.needs(slot.element);
    if (needed.size() != 1)
      return BruteResult::unsupported("a local permute of a reduction edge is not modeled");
    if (!temporary.count(needed[0]))
      return failAt(d, slot.element, needed[0], slot.offset,
                    "no member of " + label(role.team) + " sends " + p_.elementStr(needed[0]) +
                        ", which " + c_.elementStr(slot.element) + " at offset " +
                        std::to_string(slot.offset) + " on device " + std::to_string(d) +
                        " needs " + heldByStr(p_.holders(needed[0])));
  }
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkLocal(int64_t d) const {
  for (const auto &slot : c_.buffer(d))
    for (int64_t x : model_.needs(slot.element)) {
      if (p_.holds(d, x))
        continue;
      std::string who = kind_ == CommKind::None
                            ? "device " + std::to_string(d)
                            : "device " + std::to_string(d) + " receives nothing from the " +
                                  commKindName(kind_) + " and";
      return failAt(d, slot.element, x, slot.offset,
                    who + " lacks " + p_.elementStr(x) + ", which " + c_.elementStr(slot.element) +
                        " at offset " + std::to_string(slot.offset) + " needs " +
                        heldByStr(p_.holders(x)));
    }
  return std::nullopt;
}

BruteResult LoweringChecker::wrongDelivery(int64_t d, const Role &role, const BufferSlot &slot,
                                           int64_t position, std::optional<Source> source,
                                           int64_t delivered) const {
  const auto expected = model_.needs(slot.element);
  std::string what = !source                 ? "nothing (no member sends to that position)"
                     : delivered == kNothing ? "nothing (offset " + std::to_string(source->offset) +
                                                   " of " + p_.name() + " on device " +
                                                   std::to_string(source->device) + " is empty)"
                                             : p_.elementStr(delivered);
  std::string where = lowering_.localPermute
                          ? "slot " + std::to_string(position) + " of the temporary for offset "
                          : "offset ";
  std::string wanted = expected.size() == 1 ? p_.elementStr(expected[0])
                                            : "the sum of " + std::to_string(expected.size()) +
                                                  " elements of " + p_.name();
  std::optional<int64_t> firstExpected;
  if (!expected.empty())
    firstExpected = expected[0];
  return failAt(d, slot.element, firstExpected, slot.offset,
                label(role.team) + " delivers " + what + " to " + where +
                    std::to_string(slot.offset) + " of " + c_.name() + " on device " +
                    std::to_string(d) + ", which expects " + wanted);
}

/// Allgather+pad: the temporary is every member's padded buffer (chunk
/// size k, padding slots empty) in rank order; each consumer slot's needed
/// element must sit in a non-empty slot of it.
LoweringChecker::Failure LoweringChecker::checkPaddedGather(int64_t d, const Role &role) const {
  const Team &team = lowering_.teams[role.team];
  const int64_t k = chunk_[role.team];
  std::vector<int64_t> temporary;
  for (int64_t m : team.devices)
    for (int64_t s = 0; s < k; ++s)
      temporary.push_back(p_.elementAtOffset(m, s).value_or(kNothing));
  for (const auto &slot : c_.buffer(d)) {
    auto needed = model_.needs(slot.element);
    if (needed.size() != 1)
      return BruteResult::unsupported("a padded gather of a reduction edge is not modeled");
    if (std::find(temporary.begin(), temporary.end(), needed[0]) == temporary.end())
      return failAt(d, slot.element, needed[0], slot.offset,
                    "no member of " + label(role.team) + " has " + p_.elementStr(needed[0]) +
                        " in its padded buffer, which " + c_.elementStr(slot.element) +
                        " at offset " + std::to_string(slot.offset) + " on device " +
                        std::to_string(d) + " needs " + heldByStr(p_.holders(needed[0])));
  }
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkDelivered(int64_t d, const Role &role) const {
  if (lowering_.padded && kind_ == CommKind::Allgather && lowering_.localPermute)
    return checkPaddedGather(d, role);
  if (lowering_.localPermute)
    return checkPermuted(d, role);
  auto positions = slotPositions(d);
  const auto &slots = c_.buffer(d);
  for (size_t i = 0; i < slots.size(); ++i) {
    const int64_t position = positions[i];
    const auto expected = model_.needs(slots[i].element);
    const auto source = deliver(d, role, position);
    int64_t delivered = kNothing;
    if (source)
      delivered = p_.elementAtOffset(source->device, source->offset).value_or(kNothing);
    // Exactly one element is expected: a reduction edge's sum is never
    // delivered by a non-reduction collective.
    if (expected.size() != 1 || delivered != expected[0])
      return wrongDelivery(d, role, slots[i], position, source, delivered);
  }
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkReduced(int64_t d, const Role &role) const {
  const Team &team = lowering_.teams[role.team];
  for (const auto &slot : c_.buffer(d)) {
    const int64_t y = slot.element;
    std::string at =
        " at offset " + std::to_string(slot.offset) + " on device " + std::to_string(d);
    // Allreduce sums position t of every member's buffer: each must be y.
    for (int64_t m : team.devices) {
      if (kind_ != CommKind::Allreduce)
        break;
      auto z = c_.elementAtOffset(m, slot.offset);
      if (z == y)
        continue;
      std::string other = z ? c_.elementStr(*z) : std::string("nothing");
      return failAt(d, y, std::nullopt, slot.offset,
                    label(role.team) + " sums " + c_.elementStr(y) + at + " with " + other +
                        " at offset " + std::to_string(slot.offset) + " on device " +
                        std::to_string(m));
    }
    // Every needed element must be contributed by exactly one member.
    for (int64_t x : model_.needs(y)) {
      auto contributors = std::count_if(team.devices.begin(), team.devices.end(),
                                        [&](int64_t m) { return p_.holds(m, x); });
      if (contributors == 1)
        continue;
      std::string problem =
          contributors == 0
              ? " misses " + p_.elementStr(x) + ", which " + c_.elementStr(y) + at + " needs "
              : " counts " + p_.elementStr(x) + " " + std::to_string(contributors) + " times for " +
                    c_.elementStr(y) + at + " ";
      return failAt(d, y, x, slot.offset, label(role.team) + problem + heldByStr(p_.holders(x)));
    }
  }
  return std::nullopt;
}

/// Slot t of a receiver of rank r sums offset src = t (Allreduce, Reduce) or
/// r * |out| + t (ReduceScatter) of every member's producer buffer; those
/// elements must be exactly the ones the slot's element needs.
LoweringChecker::Failure LoweringChecker::checkBufferSum(int64_t d, const Role &role) const {
  const Team &team = lowering_.teams[role.team];
  for (const auto &slot : c_.buffer(d)) {
    int64_t src = slot.offset;
    if (kind_ == CommKind::ReduceScatter)
      src += role.rank * chunk_[role.team];
    std::vector<int64_t> summed;
    for (int64_t m : team.devices)
      if (auto x = p_.elementAtOffset(m, src))
        summed.push_back(*x);
    std::sort(summed.begin(), summed.end());
    auto needed = model_.needs(slot.element);
    if (summed == needed)
      continue;
    std::string list;
    for (int64_t x : summed)
      list += (list.empty() ? "" : ", ") + p_.elementStr(x);
    return failAt(d, slot.element, needed.empty() ? std::nullopt : std::optional(needed[0]),
                  slot.offset,
                  label(role.team) + " sums {" + list + "} (offset " + std::to_string(src) +
                      " of the members' buffers) into " + c_.elementStr(slot.element) +
                      " on device " + std::to_string(d) + ", which needs " +
                      std::to_string(needed.size()) + " element(s) of " + p_.name() + " each once");
  }
  return std::nullopt;
}

LoweringChecker::Failure LoweringChecker::checkDevice(int64_t d) {
  auto role = roles_.find(d);
  if (kind_ != CommKind::None && role == roles_.end() && issuer_ == Issuer::Compiler)
    return fail(d, "device " + std::to_string(d) + " holds " + c_.name() + " but " + label(0) +
                       " writes nothing there, and a compiler's collective fills no output "
                       "outside it");
  if (kind_ == CommKind::None || role == roles_.end())
    return checkLocal(d);
  if (isReductionComm(kind_) && readsBuffers())
    return checkBufferSum(d, role->second);
  if (isReductionComm(kind_))
    return checkReduced(d, role->second);
  return checkDelivered(d, role->second);
}

BruteResult LoweringChecker::run() {
  if (auto f = checkShape())
    return *f;
  if (auto f = checkLayouts())
    return *f;
  if (auto f = checkCounts())
    return *f;
  for (int64_t d : c_.devices())
    if (auto f = checkDevice(d))
      return *f;
  return BruteResult::holding();
}

} // namespace

BruteResult bruteCheckLowering(const EdgeModel &model, const Lowering &lowering, Issuer issuer) {
  // A ring's peers are per device and per iteration: not an edge lowering.
  if (lowering.kind == CommKind::CollectivePermute)
    return BruteResult::unsupported("a CollectivePermute ring is no lowering of one edge");
  return LoweringChecker(model, lowering, issuer).run();
}

BruteResult bruteCheckLowering(const Fusion &fusion, const FusionEdge &edge,
                               const Bindings &bindings, const Lowering &lowering, Issuer issuer) {
  auto model = EdgeModel::build(fusion, edge, bindings);
  if (auto *failed = std::get_if<BruteResult>(&model))
    return *failed;
  return bruteCheckLowering(std::get<EdgeModel>(model), lowering, issuer);
}

} // namespace shardcheck::bruteforce
