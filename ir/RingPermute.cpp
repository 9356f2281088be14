// Reading a looped CollectivePermute into a RingPermute; see RingPermute.h.
//
// This file does not check the ring: peers that send to the wrong device,
// or a loop that misses a slot, read fine and are the checker's finding.
// What it refuses (with the reason) is what the model does not cover: peers
// not in dispatchSwizzle1D's printed form, a mesh that is not the team, an
// input not sharded by DIDx directly on the slotted axis, a layout other
// than the logical order.
#include "ir/RingPermute.h"

#include "ir/FusionGraph.h"
#include "ir/Swizzle1D.h"

#include <algorithm>
#include <cctype>
#include <memory>

namespace shardcheck {

namespace {

/// A peer expression as nvFuser prints it: fully parenthesised binary
/// operations over integers and the loop variable.
struct PeerNode {
  enum class Kind { Int, Var, Op } kind = Kind::Int;
  int64_t value = 0;
  std::string var;
  char op = 0;
  std::shared_ptr<PeerNode> lhs, rhs;
};
using PeerTree = std::shared_ptr<PeerNode>;

class PeerParser {
public:
  explicit PeerParser(const std::string &s) : s_(s) {}

  PeerTree parseAll() {
    PeerTree t = atom();
    skip();
    return pos_ == s_.size() ? t : nullptr;
  }

private:
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ')
      ++pos_;
  }
  PeerTree atom() {
    skip();
    if (pos_ >= s_.size() || ++depth_ > 16)
      return nullptr;
    auto n = std::make_shared<PeerNode>();
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      n->kind = PeerNode::Kind::Op;
      n->lhs = atom();
      skip();
      if (!n->lhs || pos_ >= s_.size() || std::string("+-*%").find(s_[pos_]) == std::string::npos)
        return nullptr;
      n->op = s_[pos_++];
      n->rhs = atom();
      skip();
      if (!n->rhs || pos_ >= s_.size() || s_[pos_] != ')')
        return nullptr;
      ++pos_;
      return n;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    std::string word = s_.substr(start, pos_ - start);
    if (word.empty())
      return nullptr;
    if (std::all_of(word.begin(), word.end(), [](char ch) { return std::isdigit(ch); })) {
      if (word.size() > 15)
        return nullptr;
      n->value = std::stoll(word);
      return n;
    }
    n->kind = PeerNode::Kind::Var;
    n->var = word;
    return n;
  }

  const std::string &s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool isInt(const PeerTree &t) {
  return t && t->kind == PeerNode::Kind::Int;
}
bool isVar(const PeerTree &t, const std::string &var) {
  return t && t->kind == PeerNode::Kind::Var && t->var == var;
}
bool isOp(const PeerTree &t, char op) {
  return t && t->kind == PeerNode::Kind::Op && t->op == op;
}

/// `( ( v + c ) % m )`.
std::optional<RecvPeerForm> recvForm(const std::string &text, const std::string &var) {
  PeerTree t = PeerParser(text).parseAll();
  if (!isOp(t, '%') || !isInt(t->rhs) || !isOp(t->lhs, '+') || !isVar(t->lhs->lhs, var) ||
      !isInt(t->lhs->rhs))
    return std::nullopt;
  return RecvPeerForm{t->lhs->rhs->value, t->rhs->value};
}

/// `( ( a + ( c - v ) ) % m )`.
std::optional<SendPeerForm> sendForm(const std::string &text, const std::string &var) {
  PeerTree t = PeerParser(text).parseAll();
  if (!isOp(t, '%') || !isInt(t->rhs) || !isOp(t->lhs, '+') || !isInt(t->lhs->lhs))
    return std::nullopt;
  PeerTree diff = t->lhs->rhs;
  if (!isOp(diff, '-') || !isInt(diff->lhs) || !isVar(diff->rhs, var))
    return std::nullopt;
  return SendPeerForm{t->lhs->lhs->value, diff->lhs->value, t->rhs->value};
}

std::string teamString(const std::vector<int64_t> &team) {
  std::string s = "(";
  for (size_t i = 0; i < team.size(); ++i)
    s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

bool onTeamMesh(const TensorView &tv, const std::vector<int64_t> &team) {
  return tv.mesh && tv.mesh->rank() == 1 && tv.mesh->devices() == team;
}

/// Whether `tv` is laid out in logical order with no transform: its loop
/// (what the host IR prints) is its logical domain.
bool plainLayout(const TensorView &tv) {
  return (tv.loop.empty() || tv.loop == tv.logical) &&
         (!tv.hasAllocation() || tv.allocation == tv.logical) && !tv.hasRoot();
}

bool anyDeviceParallel(const Fusion &f, const std::vector<IdNum> &ids) {
  for (IdNum id : ids)
    if (f.id(id).isDeviceParallel() && !f.id(id).isBroadcast() && !f.id(id).isReduction())
      return true;
  return false;
}

/// P's axis at `position` is DIDx over the team (extent D), no other axis is
/// device-parallel, and the other axes match C's.
std::optional<std::string> inputProblem(const Fusion &f, const RingPermute &r) {
  const TensorView &p = f.tensor(r.input), &c = f.tensor(r.base);
  std::vector<IdNum> pIds = dataLogicalIds(f, p), cIds = dataLogicalIds(f, c);
  auto d = static_cast<int64_t>(r.team.size());
  if (!plainLayout(p))
    return "its input " + p.name() + " is not laid out in its logical order";
  if (pIds.size() != cIds.size())
    return "its input " + p.name() + " and " + c.name() + " differ in rank";
  const IterDomain &sharded = f.id(pIds[r.position]);
  if (sharded.parallel != ParallelType::DIDx || sharded.extent.asConstant() != d)
    return "its input " + p.name() + " is not sharded by DIDx over the team on the axis " +
           sharded.str() + " that " + c.name() + "'s stream axis slots";
  for (size_t k = 0; k < pIds.size(); ++k) {
    if (k == r.position)
      continue;
    if (f.id(pIds[k]).isDeviceParallel())
      return "its input " + p.name() + " is also sharded on " + f.id(pIds[k]).str();
    if (f.id(pIds[k]).extent != f.id(cIds[k]).extent)
      return "its input " + p.name() + "'s axis " + f.id(pIds[k]).str() + " and " + c.name() +
             "'s " + f.id(cIds[k]).str() + " differ in extent";
  }
  return std::nullopt;
}

/// W is C's slot: C's axes without the stream axis, nothing device-parallel.
std::optional<std::string> viewProblem(const Fusion &f, const RingPermute &r) {
  const TensorView &w = f.tensor(r.view), &c = f.tensor(r.base);
  std::vector<IdNum> wIds = dataLogicalIds(f, w), cIds = dataLogicalIds(f, c);
  if (!plainLayout(w) || !plainLayout(c))
    return "its output " + w.name() + " or its base " + c.name() +
           " is not laid out in its logical order";
  if (anyDeviceParallel(f, w.loop.empty() ? w.logical : w.loop) ||
      anyDeviceParallel(f, c.loop.empty() ? c.logical : c.loop))
    return "its output " + w.name() + " or its base " + c.name() + " is sharded across devices";
  if (wIds.size() + 1 != cIds.size())
    return "its output " + w.name() + " does not drop exactly " + c.name() + "'s stream axis";
  for (size_t k = 0, j = 0; k < cIds.size(); ++k)
    if (k != r.position && f.id(cIds[k]).extent != f.id(wIds[j++]).extent)
      return "its output " + w.name() + " is not " + c.name() + "'s slot: " + f.id(cIds[k]).str() +
             " and " + f.id(wIds[j - 1]).str() + " differ in extent";
  return std::nullopt;
}

/// The tensors: P computed before the loop, W the ShardByStream slot of C
/// at the loop variable, every mesh the team's.
std::optional<std::string> readTensors(const Fusion &f, const Expr &e, RingPermute &r) {
  r.input = *e.inputs[0].tensor;
  r.view = e.outputs[0];
  if (const Expr *p = f.producerExpr(r.input); p && isInHostLoop(*p))
    return "its input " + f.tensor(r.input).name() + " is computed inside a host loop";
  auto base = outputViewBase(e);
  if (!base || e.attr(kOutputViewOpAttr) != "ShardByStream" || !f.hasTensor(*base))
    return "its output " + f.tensor(r.view).name() +
           " is not a ShardByStream of a tensor (nvFuser writes the ring's slots through one)";
  r.base = *base;
  if (e.attr(kOutputViewIndexAttr) != r.loop.var)
    return "its output's stream_index is `" + e.attr(kOutputViewIndexAttr) +
           "`, not the loop variable " + r.loop.var;
  if (auto why = writtenBaseProblem(f, e, r.base))
    return *why;
  for (TensorNum t : {r.input, r.view, r.base})
    if (!onTeamMesh(f.tensor(t), r.team))
      return f.tensor(t).name() + " is not on the 1-D mesh of the team " + teamString(r.team) +
             " (which mesh axis its Swizzle1D runs along is not printed)";
  auto stream = streamAxisOf(f, f.tensor(r.base));
  if (!stream)
    return f.tensor(r.base).name() + " has no single stream-parallel axis";
  std::tie(r.streamAxis, r.position) = *stream;
  if (f.id(r.streamAxis).extent.asConstant() != static_cast<int64_t>(r.team.size()))
    return f.tensor(r.base).name() + "'s stream axis " + f.id(r.streamAxis).str() +
           " does not have the team's size " + std::to_string(r.team.size()) +
           " (its Swizzle1D slot is (index + team index) % team size)";
  if (auto why = inputProblem(f, r))
    return *why;
  return viewProblem(f, r);
}

} // namespace

bool isCollectivePermute(const Expr &e) {
  return e.communication && e.communication->type == CollectiveType::CollectivePermute;
}

std::optional<std::pair<IdNum, size_t>> streamAxisOf(const Fusion &f, const TensorView &tv) {
  std::vector<IdNum> ids = dataLogicalIds(f, tv);
  std::optional<std::pair<IdNum, size_t>> found;
  for (size_t k = 0; k < ids.size(); ++k)
    if (f.id(ids[k]).parallel == ParallelType::Stream) {
      if (found)
        return std::nullopt;
      found = std::make_pair(ids[k], k);
    }
  return found;
}

std::optional<RingShifts> ringShifts(const RingPermute &r) {
  auto d = static_cast<int64_t>(r.team.size());
  if (d > 1 && (r.recv.modulus != d || r.send.modulus != d))
    return std::nullopt;
  // Device t runs (a + (c_s - c_r + t - v)) % D: nvFuser's (D + t - v) % D
  // shifted by a + c_s - c_r (mod D).
  return RingShifts{0, floorMod(r.send.addend + r.send.teamIndex - r.recv.teamIndex, d)};
}

std::variant<RingPermute, std::string> ringPermute(const Fusion &f, const Expr &e) {
  if (!isCollectivePermute(e) || !isInHostLoop(e))
    return std::string("it is not a CollectivePermute posted in a host loop");
  if (e.inputs.size() != 1 || !e.inputs[0].tensor || e.outputs.size() != 1)
    return std::string("it does not read one tensor into one tensor");
  auto loop = hostLoopOf(f, e);
  if (auto *why = std::get_if<std::string>(&loop))
    return *why;
  RingPermute r;
  r.loop = std::get<HostLoop>(loop);
  r.team = e.communication->team;
  if (r.team.empty())
    return std::string("its team is empty");
  r.recvText = e.attr("recv_peer");
  r.sendText = e.attr("send_peer");
  auto recv = recvForm(r.recvText, r.loop.var);
  auto send = sendForm(r.sendText, r.loop.var);
  if (!recv || !send)
    return "its peers (send_peer=" + r.sendText + ", recv_peer=" + r.recvText +
           ") are not dispatchSwizzle1D's `( ( D + ( c - " + r.loop.var + " ) ) % D )` and `( ( " +
           r.loop.var +
           " + c ) % D )`, the only form whose printed constant c is known to be "
           "the printing device's team index";
  r.recv = *recv;
  r.send = *send;
  if (auto why = readTensors(f, e, r))
    return *why;
  return r;
}

namespace {

/// Whether `t`, read by a statement of `loopExpr`'s loop, is a ring's slot
/// of the same iteration or computed from one in it (depth-bounded).
bool fromRingSlot(const Fusion &f, const Expr &loopExpr, TensorNum t, int depth) {
  const Expr *p = f.producerExpr(t);
  if (!p || depth > 8 || !sameHostLoop(*p, loopExpr) ||
      exprIndexOf(f, *p) >= exprIndexOf(f, loopExpr))
    return false;
  if (isCollectivePermute(*p))
    return std::holds_alternative<RingPermute>(ringPermute(f, *p));
  if (p->kind == OpKind::Communication || outputViewBase(*p) || isSliceView(*p))
    return false;
  for (TensorNum in : p->tensorInputs())
    if (fromRingSlot(f, *p, in, depth + 1))
      return true;
  return false;
}

} // namespace

std::variant<SwizzledWrite, std::string> swizzledWrite(const Fusion &f, const Expr &e) {
  std::string why = "it writes through a ShardByStream view, whose slot (swizzled or not) the "
                    "print does not show";
  auto base = outputViewBase(e);
  if (!base || !f.hasTensor(*base) || e.kind == OpKind::Communication || e.outputs.size() != 1)
    return why;
  bool ringSlot = false;
  for (TensorNum in : e.tensorInputs()) {
    const Expr *p = f.producerExpr(in);
    if (p && isSliceView(*p))
      return why + " (it also reads the " + p->op + " " + f.tensor(in).name() + ")";
    ringSlot |= fromRingSlot(f, e, in, 0);
  }
  if (!ringSlot)
    return why + " (it reads no slot of a CollectivePermute ring of the same iteration)";
  auto loop = hostLoopOf(f, e);
  if (auto *bad = std::get_if<std::string>(&loop))
    return *bad;
  if (e.attr(kOutputViewIndexAttr) != std::get<HostLoop>(loop).var)
    return "its ShardByStream write view's stream_index is `" + e.attr(kOutputViewIndexAttr) +
           "`, not the loop variable";
  const TensorView &b = f.tensor(*base), &w = f.tensor(e.outputs[0]);
  auto stream = streamAxisOf(f, b);
  if (!stream)
    return b.name() + " has no single stream-parallel axis";
  std::vector<IdNum> bIds = dataLogicalIds(f, b), wIds = dataLogicalIds(f, w);
  if (wIds.size() + 1 != bIds.size())
    return "its write view " + w.name() + " does not drop exactly " + b.name() + "'s stream axis";
  if (!b.mesh || b.mesh->rank() != 1 || !w.mesh || !(*w.mesh == *b.mesh))
    return b.name() + " and its slot " + w.name() + " are not on one 1-D mesh";
  return SwizzledWrite{*base, stream->first, stream->second};
}

} // namespace shardcheck
