// Seeded random compiler padded Communications; see RandomPadded.h.
//
// Draws with std::mt19937_64 and util/RandomDraw.h (not the standard
// distributions, whose output differs across standard libraries), so a seed
// names one case. It does not check anything.
#include "checker/bruteforce/RandomPadded.h"

#include "checker/bruteforce/RandomEdges.h"
#include "ir/FusionBuilder.h"
#include "util/RandomDraw.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>

namespace shardcheck::bruteforce {

const char *paddedDrawName(PaddedDraw draw) {
  switch (draw) {
#define SC_PADDED_DRAW_NAME(name, spelling)                                                        \
  case PaddedDraw::name:                                                                           \
    return spelling;
    SC_PADDED_DRAWS(SC_PADDED_DRAW_NAME)
#undef SC_PADDED_DRAW_NAME
  }
  return "right";
}

namespace {

enum class Shape { Allgather, ReduceScatter, Allreduce, AllToAll, SendRecv };

constexpr const char *kShapeNames[] = {"Allgather", "ReduceScatter", "Allreduce", "AllToAll",
                                       "SendRecv"};

/// Each shape's collective, and the one a wrong-kind draw puts in its place
/// (its count rule cannot fit the shape's padded counts).
constexpr std::pair<CommKind, CommKind> kShapeKinds[] = {
    {CommKind::Allgather, CommKind::AllToAll},
    {CommKind::ReduceScatter, CommKind::Allreduce},
    {CommKind::Allreduce, CommKind::ReduceScatter},
    {CommKind::AllToAll, CommKind::Allgather},
    {CommKind::SendRecv, CommKind::SendRecv}};

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// A pad factor other than `n` whose padded length of `extent` differs
/// from n's: the padded counts then differ, so the collective cannot fit
/// (a wrong shape by construction, whatever the slots).
int64_t otherPadFactor(int64_t extent, int64_t n) {
  int64_t f = n + 1;
  while (f * ceilDiv(extent, f) == n * ceilDiv(extent, n))
    ++f;
  return f;
}

class PaddedBuilder {
public:
  explicit PaddedBuilder(uint64_t seed) : rng_(seed), rand_(rng_) {}
  RandomPaddedCase build();

private:
  void drawMesh(Shape shape);
  bool twoD() const { return mesh_->rank() == 2; }
  /// The DID type of mesh axis `axis` (DIDx is the innermost axis).
  ParallelType didOf(int axis) const { return deviceDimFromIndex(mesh_->rank() - 1 - axis); }
  /// The size of the mesh axis other than the collective's (2-D meshes).
  int64_t otherSize() const { return mesh_->shape()[1 - axis_]; }
  bool applicable(Shape shape, PaddedDraw draw) const;
  PaddedDraw drawMutation(Shape shape);
  /// The pad factor `n` of a padded split, or another for a wrong shape.
  int64_t padFactor(int64_t extent, int64_t n) const {
    return draw_ == PaddedDraw::WrongShape ? otherPadFactor(extent, n) : n;
  }
  TensorNum tensor(std::vector<IdNum> logical, std::vector<IdNum> loop,
                   std::vector<IdNum> allocation, const DeviceMesh &mesh);
  void allgather();
  void reduceScatter();
  void allreduce();
  void allToAll();
  void sendRecv();
  void setLowering(CommKind kind);
  void addCommunication();

  std::mt19937_64 rng_;
  DrawFrom rand_;
  FusionBuilder b_;
  std::optional<DeviceMesh> mesh_;
  int axis_ = 0;  ///< The collective's mesh axis.
  int64_t n_ = 2; ///< Its size: the team size.
  int64_t a_ = 1, e_ = 1;
  int64_t pad_ = 2; ///< Allreduce on a 1-D mesh: E's pad factor.
  PaddedDraw draw_ = PaddedDraw::Right;
  TensorNum p_ = 0, c_ = 0;
  Lowering lowering_;
};

void PaddedBuilder::drawMesh(Shape shape) {
  std::vector<std::vector<int64_t>> shapes{{2}, {3}, {4}, {2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 2}};
  // SendRecv moves between two 1-D meshes of n devices each (at most 8).
  std::vector<int64_t> s =
      shape == Shape::SendRecv ? std::vector<int64_t>{rand_.between(2, 4)} : rand_.pick(shapes);
  std::vector<int64_t> devices(
      std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()));
  std::iota(devices.begin(), devices.end(), 0);
  if (rand_.percent(30))
    rand_.shuffle(devices);
  mesh_ = DeviceMesh::create(s, devices);
  axis_ = static_cast<int>(rand_.between(0, mesh_->rank() - 1));
  n_ = s[axis_];
}

/// Whether `draw` is wrong by construction for this shape and these sizes.
bool PaddedBuilder::applicable(Shape shape, PaddedDraw draw) const {
  switch (draw) {
  case PaddedDraw::Right:
  case PaddedDraw::WrongTeam: // n >= 2: a reversed team moves chunk 0 elsewhere.
    return true;
  case PaddedDraw::MissingPad: // Some split does not divide: the buffers have padding.
    switch (shape) {
    case Shape::Allreduce:
      return e_ % (twoD() ? otherSize() : pad_) != 0;
    case Shape::AllToAll:
      return a_ % n_ != 0 || e_ % n_ != 0;
    default:
      return e_ % n_ != 0;
    }
  case PaddedDraw::WrongShape: // Needs a padded split to mis-pad.
  case PaddedDraw::WrongKind:  // The kinds swapped have other count rules.
    return shape != Shape::SendRecv &&
           !(draw == PaddedDraw::WrongShape && shape == Shape::Allreduce && twoD());
  case PaddedDraw::WrongSlots: // Two layout IDs of extent >= 2 swap places.
    switch (shape) {
    case Shape::Allgather:
    case Shape::ReduceScatter:
      return a_ >= 2;
    case Shape::Allreduce:
      return a_ >= 2 && (!twoD() || ceilDiv(e_, otherSize()) >= 2);
    case Shape::AllToAll:
      return ceilDiv(a_, n_) >= 2;
    case Shape::SendRecv:
      return a_ >= 2 && ceilDiv(e_, n_) >= 2;
    }
  }
  return false;
}

PaddedDraw PaddedBuilder::drawMutation(Shape shape) {
  if (rand_.percent(40))
    return PaddedDraw::Right;
  auto draw = static_cast<PaddedDraw>(rand_.between(1, 5));
  return applicable(shape, draw) ? draw : PaddedDraw::WrongTeam;
}

TensorNum PaddedBuilder::tensor(std::vector<IdNum> logical, std::vector<IdNum> loop,
                                std::vector<IdNum> allocation, const DeviceMesh &mesh) {
  FusionBuilder::TensorSpec spec;
  spec.logical = std::move(logical);
  spec.loop = std::move(loop);
  spec.allocation = std::move(allocation);
  spec.mesh = mesh;
  return b_.tensor(spec);
}

/// Shard(E) -> E gathered: each member's padded shard is chunk `rank` of
/// the output, E padded to n chunks with the chunks outermost.
void PaddedBuilder::allgather() {
  ParallelType did = didOf(axis_);
  IdNum pa = b_.iter(a_), pe = b_.iter(e_);
  auto ps = b_.split(pe, n_, false, did);
  p_ = tensor({pa, pe}, {pa, ps.outer, ps.inner}, {}, *mesh_);
  IdNum ca = b_.iter(a_), ce = b_.iter(e_);
  auto cs = b_.split(ce, padFactor(e_, n_), false);
  std::vector<IdNum> layout{cs.outer, ca, cs.inner};
  if (draw_ == PaddedDraw::WrongSlots) // A >= 2: the chunks are no longer outermost.
    layout = {ca, cs.outer, cs.inner};
  c_ = tensor({ca, ce}, layout, layout, *mesh_);
}

/// A partial axis (the members' own buffers, E padded to n chunks,
/// rank-major) -> Shard(E): rank r sums chunk r.
void PaddedBuilder::reduceScatter() {
  ParallelType did = didOf(axis_);
  IdNum pp = b_.iter(n_, did), pa = b_.iter(a_), pe = b_.iter(e_);
  auto ps = b_.split(pe, padFactor(e_, n_), false);
  std::vector<IdNum> layout{pp, ps.outer, pa, ps.inner};
  if (draw_ == PaddedDraw::WrongSlots) // A >= 2: chunk r is no longer r * |out| on.
    layout = {pp, pa, ps.outer, ps.inner};
  p_ = tensor({pp, pa, pe}, layout, layout, *mesh_);
  IdNum cr = b_.reduction(n_), ca = b_.iter(a_), ce = b_.iter(e_);
  auto cs = b_.split(ce, n_, false, did);
  c_ = tensor({cr, ca, ce}, {cr, ca, cs.outer, cs.inner}, {}, *mesh_);
}

/// A partial axis -> reduced, E padded: sharded unevenly on the other mesh
/// axis (2-D), or split by a pad factor that need not divide (1-D).
void PaddedBuilder::allreduce() {
  ParallelType did = didOf(axis_);
  IdNum pp = b_.iter(n_, did), pa = b_.iter(a_), pe = b_.iter(e_);
  IdNum cr = b_.reduction(n_), ca = b_.iter(a_), ce = b_.iter(e_);
  if (twoD()) {
    ParallelType other = didOf(1 - axis_);
    auto ps = b_.split(pe, otherSize(), false, other);
    p_ = tensor({pp, pa, pe}, {pp, pa, ps.outer, ps.inner}, {}, *mesh_);
    auto cs = b_.split(ce, otherSize(), false, other);
    std::vector<IdNum> layout; // The default: [A, E's local part].
    if (draw_ == PaddedDraw::WrongSlots)
      layout = {cr, cs.inner, ca};
    c_ = tensor({cr, ca, ce}, {cr, ca, cs.outer, cs.inner}, layout, *mesh_);
    return;
  }
  auto ps = b_.split(pe, pad_, false);
  std::vector<IdNum> pLayout{pp, ps.outer, pa, ps.inner};
  p_ = tensor({pp, pa, pe}, pLayout, pLayout, *mesh_);
  auto cs = b_.split(ce, padFactor(e_, pad_), false);
  std::vector<IdNum> cLayout{cr, cs.outer, ca, cs.inner};
  if (draw_ == PaddedDraw::WrongSlots)
    cLayout = {cr, ca, cs.outer, cs.inner};
  c_ = tensor({cr, ca, ce}, cLayout, cLayout, *mesh_);
}

/// Shard(A) -> Shard(E), both uneven: the producer's E and the consumer's A
/// padded to n chunks, rank-major (chunk r goes to, or came from, rank r).
void PaddedBuilder::allToAll() {
  ParallelType did = didOf(axis_);
  IdNum pa = b_.iter(a_), pe = b_.iter(e_);
  auto pas = b_.split(pa, n_, false, did);
  auto pes = b_.split(pe, n_, false);
  std::vector<IdNum> pLayout{pas.outer, pes.outer, pas.inner, pes.inner};
  p_ = tensor({pa, pe}, pLayout, pLayout, *mesh_);
  IdNum ca = b_.iter(a_), ce = b_.iter(e_);
  auto ces = b_.split(ce, n_, false, did);
  auto cas = b_.split(ca, padFactor(a_, n_), false);
  std::vector<IdNum> cLayout{ces.outer, cas.outer, cas.inner, ces.inner};
  if (draw_ == PaddedDraw::WrongSlots) // ceilDiv(A, n) >= 2: the chunks are not outermost.
    cLayout = {ces.outer, cas.inner, cas.outer, ces.inner};
  c_ = tensor({ca, ce}, cLayout, cLayout, *mesh_);
}

/// Shard(E) on one 1-D mesh -> the same on another (devices n.. or the
/// same devices reversed): pair i sends mesh position i's padded buffer.
void PaddedBuilder::sendRecv() {
  ParallelType did = deviceDimFromIndex(0);
  std::vector<int64_t> to = mesh_->devices();
  if (rand_.percent(50))
    std::reverse(to.begin(), to.end());
  else
    for (int64_t &d : to)
      d = (d + n_) % (2 * n_); // Other devices, in the mesh's order.
  DeviceMesh cMesh = DeviceMesh::linear(to);
  IdNum pa = b_.iter(a_), pe = b_.iter(e_);
  auto ps = b_.split(pe, n_, false, did);
  p_ = tensor({pa, pe}, {pa, ps.outer, ps.inner}, {}, *mesh_);
  IdNum ca = b_.iter(a_), ce = b_.iter(e_);
  auto cs = b_.split(ce, n_, false, did);
  std::vector<IdNum> layout;
  if (draw_ == PaddedDraw::WrongSlots) // A >= 2 and a local E part >= 2.
    layout = {cs.inner, ca};
  c_ = tensor({ca, ce}, {ca, cs.outer, cs.inner}, layout, cMesh);
  Team pairs;
  const auto &from = mesh_->devices();
  for (size_t i = 0; i < from.size(); ++i)
    pairs.pairs.emplace_back(from[i],
                             draw_ == PaddedDraw::WrongTeam ? to[to.size() - 1 - i] : to[i]);
  lowering_ = Lowering{};
  lowering_.kind = CommKind::SendRecv;
  lowering_.padded = true;
  lowering_.teams = {pairs};
}

/// The lines of the collective's mesh axis as teams; a wrong team is each
/// line reversed, or, for an Allreduce (which sums in any order), every
/// device alone.
void PaddedBuilder::setLowering(CommKind kind) {
  lowering_ = Lowering{};
  lowering_.kind = kind;
  lowering_.padded = true;
  if (isReductionComm(kind))
    lowering_.reduceInput = Lowering::ReduceInput::ProducerBuffer;
  for (auto line : meshLines(*mesh_, axis_)) {
    if (draw_ == PaddedDraw::WrongTeam && kind == CommKind::Allreduce) {
      for (int64_t d : line)
        lowering_.teams.push_back(Team{{d}, std::nullopt, {}});
      continue;
    }
    if (draw_ == PaddedDraw::WrongTeam)
      std::reverse(line.begin(), line.end());
    lowering_.teams.push_back(Team{line, std::nullopt, {}});
  }
}

/// The Communication as a host IR would print it (padded=true, its first
/// team): the fusion describes itself, though the cases are judged on
/// `lowering_`.
void PaddedBuilder::addCommunication() {
  CollectiveType type = *collectiveOfCommKind(lowering_.kind);
  b_.expr(OpKind::Communication, collectiveTypeName(type), {p_}, c_);
  Expr &e = b_.fusion().exprs.back();
  if (lowering_.padded)
    e.attrs.emplace_back(kPaddedAttr, "true");
  CommunicationInfo info;
  info.type = type;
  const Team &first = lowering_.teams.at(0);
  info.team = first.devices;
  if (!first.pairs.empty()) {
    info.team = {first.pairs[0].first, first.pairs[0].second};
    info.root = first.pairs[0].first;
  }
  e.communication = info;
}

RandomPaddedCase PaddedBuilder::build() {
  const auto shape = static_cast<Shape>(rand_.between(0, 4));
  drawMesh(shape);
  a_ = rand_.between(1, shape == Shape::AllToAll ? 7 : 3);
  e_ = rand_.between(1, 7);
  pad_ = rand_.between(2, 3);
  draw_ = drawMutation(shape);
  switch (shape) {
  case Shape::Allgather:
    allgather();
    break;
  case Shape::ReduceScatter:
    reduceScatter();
    break;
  case Shape::Allreduce:
    allreduce();
    break;
  case Shape::AllToAll:
    allToAll();
    break;
  case Shape::SendRecv:
    sendRecv(); // Its pairs are its own.
    break;
  }
  const auto &[kind, wrongKind] = kShapeKinds[static_cast<int>(shape)];
  if (shape != Shape::SendRecv)
    setLowering(draw_ == PaddedDraw::WrongKind ? wrongKind : kind);
  if (draw_ == PaddedDraw::MissingPad)
    lowering_.padded = false;
  addCommunication();
  RandomPaddedCase r;
  r.edge = b_.edge(p_, c_);
  r.lowering = lowering_;
  r.draw = draw_;
  r.description = std::string(kShapeNames[static_cast<int>(shape)]) + " edge, " + lowering_.str() +
                  " on " + mesh_->str() + " axis " + std::to_string(axis_) +
                  ", A=" + std::to_string(a_) + " E=" + std::to_string(e_) +
                  (shape == Shape::Allreduce && !twoD() ? " pad " + std::to_string(pad_) : "") +
                  ", " + paddedDrawName(draw_) + ": " + b_.fusion().tensorStr(p_) + " -> " +
                  b_.fusion().tensorStr(c_);
  r.fusion = b_.take();
  return r;
}

} // namespace

RandomPaddedCase randomPaddedCommunication(uint64_t seed) {
  return PaddedBuilder(seed).build();
}

} // namespace shardcheck::bruteforce
