// Reading a statement posted in a host loop into a LoopedStatement; see
// HostLoops.h.
//
// This file does not check what it reads: a slice whose sharding differs
// from its base's, or a loop that misses an index, is the checker's finding.
// What it does decide is the data flow the model allows (an operand is a
// read view of this iteration, a tensor computed before the loop, or a value
// computed earlier in the same iteration); anything else is a reason.
#include "ir/HostLoops.h"

#include "ir/FusionGraph.h"
#include "ir/RingPermute.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace shardcheck {

namespace {

std::vector<std::string> words(const std::string &s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

bool isIdentifier(const std::string &s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

/// `3` or `i0` as an extent; nullopt for anything else.
std::optional<Extent> boundOf(const std::string &s) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); }) &&
      s.size() < 18)
    return Extent::constant(std::stoll(s));
  if (isIdentifier(s))
    return Extent::symbol(s);
  return std::nullopt;
}

/// The name number of a printed IterDomain (`iStreamIdx11{i0}` -> 11).
std::optional<IdNum> idNumberOf(const std::string &printed) {
  std::string head = printed.substr(0, printed.find('{'));
  size_t digits = head.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(head[digits - 1])))
    --digits;
  if (digits == head.size() || head.size() - digits > 15)
    return std::nullopt;
  return std::stoll(head.substr(digits));
}

std::variant<HostLoop, std::string> parseLoop(const Fusion &f, const std::string &header) {
  std::vector<std::string> w = words(header);
  HostLoop loop;
  loop.header = header;
  if (w.size() == 6 && w[0] == "FOR" && w[2] == "from" && w[4] == "to") {
    auto lo = boundOf(w[3]), hi = boundOf(w[5]);
    if (!lo || !hi)
      return "its bounds are not integers or symbols";
    loop.var = w[1];
    loop.lo = *lo;
    loop.hi = *hi;
    return loop;
  }
  if (w.size() == 4 && w[0] == "FOR" && w[2] == "in") {
    auto id = idNumberOf(w[3]);
    if (!id || !f.hasId(*id))
      return "it ranges over " + w[3] + ", which no tensor of the fusion has";
    loop.var = w[1];
    loop.lo = Extent::constant(0);
    loop.hi = f.id(*id).extent;
    loop.rangeId = *id;
    return loop;
  }
  return "its header is not `FOR v from A to B` or `FOR v in ID`";
}

/// The view of `base` along the printed `axis` at `index`, checked to be a
/// slice by the loop variable.
std::variant<SliceView, std::string> sliceOf(const Fusion &f, TensorNum view, TensorNum base,
                                             const std::string &axis, const std::string &index,
                                             const HostLoop &loop) {
  std::string what = "the slice " + f.tensor(view).name() + " of " + f.tensor(base).name();
  if (index != loop.var)
    return what + " is taken at index `" + index + "`, not at the loop variable " + loop.var;
  auto id = idNumberOf(axis);
  std::vector<IdNum> data = dataLogicalIds(f, f.tensor(base));
  auto pos = id ? std::find(data.begin(), data.end(), *id) : data.end();
  if (pos == data.end())
    return what + " is along " + axis + ", which is no logical axis of " + f.tensor(base).name();
  // nvFuser takes such a slice of a broadcast axis at any index (the one
  // value, expanded); the model's slices are of real axes only.
  if (f.id(*id).isBroadcast())
    return what + " is along the broadcast axis " + axis + ", which the loop model does not slice";
  if (dataLogicalIds(f, f.tensor(view)).size() + 1 != data.size())
    return what + " does not drop exactly the sliced axis";
  return SliceView{view, base, *id, static_cast<size_t>(pos - data.begin())};
}

} // namespace

std::optional<TensorNum> outputViewBase(const Expr &e) {
  std::string base = e.attr(kOutputViewAttr);
  if (base.size() < 2 || base[0] != 'T' || base.size() > 10 ||
      !std::all_of(base.begin() + 1, base.end(), [](char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoi(base.substr(1));
}

bool isOutputViewAttr(const std::string &key) {
  return key == kOutputViewAttr || key == kOutputViewAxisAttr || key == kOutputViewIndexAttr ||
         key == kOutputViewOpAttr;
}

bool isHostScopeAttr(const std::string &key) {
  return key == kHostLoopAttr || key == kHostLoopIdAttr || key == kHostLoopOuterAttr ||
         key == kHostBranchAttr;
}

bool isSliceView(const Expr &e) {
  return e.kind == OpKind::Other &&
         (e.op == "HirAliasSelect" || e.op == "ShardByStream" || e.op == "select");
}

std::optional<Expr> outputViewStatement(const Fusion &f, const Expr &writer) {
  auto base = outputViewBase(writer);
  if (!base || !f.hasTensor(*base) || writer.outputs.size() != 1)
    return std::nullopt;
  Expr view;
  view.kind = OpKind::Other;
  view.op =
      writer.attr(kOutputViewOpAttr).empty() ? "HirAliasSelect" : writer.attr(kOutputViewOpAttr);
  view.inputs = {Operand::ofTensor(*base)};
  view.outputs = writer.outputs;
  if (view.op == "ShardByStream")
    view.attrs = {{"stream_index", writer.attr(kOutputViewIndexAttr)}};
  else
    view.attrs = {{"axis", writer.attr(kOutputViewAxisAttr)},
                  {"index", writer.attr(kOutputViewIndexAttr)}};
  view.loc = writer.loc;
  return view;
}

bool isInHostLoop(const Expr &expr) {
  return !expr.attr(kHostLoopAttr).empty();
}

bool sameHostLoop(const Expr &a, const Expr &b) {
  return isInHostLoop(a) && a.attr(kHostLoopAttr) == b.attr(kHostLoopAttr) &&
         a.attr(kHostLoopIdAttr) == b.attr(kHostLoopIdAttr) &&
         a.attr(kHostLoopOuterAttr) == b.attr(kHostLoopOuterAttr);
}

size_t exprIndexOf(const Fusion &f, const Expr &e) {
  for (size_t i = 0; i < f.exprs.size(); ++i)
    if (&f.exprs[i] == &e)
      return i;
  return f.exprs.size();
}

std::optional<std::string> writtenBaseProblem(const Fusion &f, const Expr &writer, TensorNum base) {
  std::string name = f.tensor(base).name();
  if (f.producerExpr(base))
    return name + " is also computed whole by a statement";
  for (const Expr &other : f.exprs) {
    if (&other != &writer && outputViewBase(other) == base)
      return name + " is written by more than one statement";
    const auto &ins = other.tensorInputs();
    if (sameHostLoop(other, writer) && std::find(ins.begin(), ins.end(), base) != ins.end())
      return name + " is read whole inside the loop that writes it";
  }
  return std::nullopt;
}

namespace {

/// A ShardByStream write view: read only where the print implies its
/// swizzle (ir/RingPermute.h, swizzledWrite).
std::optional<std::string> modelSwizzledWrite(const Fusion &f, const Expr &e, LoopedStatement &ls) {
  if (isCollectivePermute(e)) { // A ring step writes its slot (ir/RingPermute.h).
    auto ring = ringPermute(f, e);
    if (auto *why = std::get_if<std::string>(&ring))
      return *why;
    const auto &r = std::get<RingPermute>(ring);
    ls.write = SliceView{r.view, r.base, r.streamAxis, r.position, /*swizzled=*/true};
    return std::nullopt;
  }
  auto write = swizzledWrite(f, e);
  if (auto *why = std::get_if<std::string>(&write))
    return *why;
  const auto &w = std::get<SwizzledWrite>(write);
  if (auto why = writtenBaseProblem(f, e, w.base))
    return *why;
  ls.write = SliceView{e.outputs[0], w.base, w.streamAxis, w.position, /*swizzled=*/true};
  return std::nullopt;
}

/// The write side: the write view, or a value that only later statements
/// of the same iteration read.
std::optional<std::string> modelWrite(const Fusion &f, const Expr &e, LoopedStatement &ls) {
  TensorNum out = e.outputs[0];
  if (auto base = outputViewBase(e)) {
    if (e.attr(kOutputViewOpAttr) == "ShardByStream")
      return modelSwizzledWrite(f, e, ls);
    if (!e.attr(kOutputViewOpAttr).empty())
      return "it writes through a " + e.attr(kOutputViewOpAttr) +
             " view, which the loop model does not read";
    if (!f.hasTensor(*base))
      return "its write view's base " + e.attr(kOutputViewAttr) + " is no tensor of the program";
    auto write =
        sliceOf(f, out, *base, e.attr(kOutputViewAxisAttr), e.attr(kOutputViewIndexAttr), ls.loop);
    if (auto *why = std::get_if<std::string>(&write))
      return *why;
    if (auto why = writtenBaseProblem(f, e, *base))
      return *why;
    ls.write = std::get<SliceView>(write);
    return std::nullopt;
  }
  std::string name = f.tensor(out).name();
  if (std::find(f.outputs.begin(), f.outputs.end(), out) != f.outputs.end())
    return "its result " + name + " is a program output, but holds only the last iteration's value";
  for (const Expr &user : f.exprs) {
    const auto &ins = user.tensorInputs();
    if (std::find(ins.begin(), ins.end(), out) != ins.end() && !sameHostLoop(user, e))
      return "its result " + name +
             " is read outside the loop, which sees only the last iteration's value";
  }
  return std::nullopt;
}

/// One operand: a read view at the loop variable, a tensor computed before
/// the loop (or a program input), or a value computed earlier in the same
/// iteration.
std::optional<std::string> modelRead(const Fusion &f, const Expr &e, TensorNum in,
                                     LoopedStatement &ls) {
  std::string name = f.tensor(in).name();
  const Expr *p = f.producerExpr(in);
  if (p && isSliceView(*p)) {
    if (p->op != "HirAliasSelect" || p->tensorInputs().size() != 1)
      return "its operand " + name + " is a " + p->op + " view, which the loop model does not read";
    TensorNum base = p->tensorInputs()[0];
    for (const Expr &w : f.exprs)
      if (sameHostLoop(w, e) && outputViewBase(w) == base)
        return "its operand " + name + " is a slice of " + f.tensor(base).name() +
               ", which the same loop writes";
    auto read = sliceOf(f, in, base, p->attr("axis"), p->attr("index"), ls.loop);
    if (auto *why = std::get_if<std::string>(&read))
      return *why;
    ls.reads.push_back(std::get<SliceView>(read));
    return std::nullopt;
  }
  if (p && isInHostLoop(*p)) {
    if (!sameHostLoop(*p, e))
      return "its operand " + name + " is computed in another loop (`" + p->attr(kHostLoopAttr) +
             "`), which leaves only its last iteration's value";
    if (exprIndexOf(f, *p) > exprIndexOf(f, e))
      return "its operand " + name + " is computed later in the loop body";
    return std::nullopt;
  }
  for (const Expr &w : f.exprs)
    if (sameHostLoop(w, e) && outputViewBase(w) == in)
      return "its operand " + name + " is read whole inside the loop that writes it";
  return std::nullopt;
}

} // namespace

std::variant<HostLoop, std::string> hostLoopOf(const Fusion &f, const Expr &e) {
  if (std::string branch = e.attr(kHostBranchAttr); !branch.empty())
    return "it is posted in the branch `" + branch + "` of the loop, which only some devices take";
  if (std::string outer = e.attr(kHostLoopOuterAttr); !outer.empty())
    return "its loop is nested in `" + outer + "`";
  auto loop = parseLoop(f, e.attr(kHostLoopAttr));
  if (auto *why = std::get_if<std::string>(&loop))
    return "the loop `" + e.attr(kHostLoopAttr) + "` is not modelled: " + *why;
  return loop;
}

std::variant<LoopedStatement, std::string> loopedStatement(const Fusion &f, const Expr &e) {
  if (!isInHostLoop(e) || isSliceView(e))
    return std::string("it is not a statement posted in a host loop");
  auto loop = hostLoopOf(f, e);
  if (auto *why = std::get_if<std::string>(&loop))
    return *why;
  LoopedStatement ls;
  ls.loop = std::get<HostLoop>(loop);
  if (e.outputs.size() != 1)
    return std::string("it has several outputs");
  if (auto why = modelWrite(f, e, ls))
    return *why;
  for (TensorNum in : e.tensorInputs())
    if (auto why = modelRead(f, e, in, ls))
      return *why;
  return ls;
}

std::variant<LoopedStatement, std::string> loopedCommunication(const Fusion &f, const Expr &e) {
  if (e.kind != OpKind::Communication || !isInHostLoop(e))
    return std::string("it is not a Communication posted in a host loop");
  if (e.inputs.size() != 1 || !e.inputs[0].tensor || e.outputs.size() != 1)
    return std::string("it does not read one tensor into one tensor");
  auto model = loopedStatement(f, e);
  auto *ls = std::get_if<LoopedStatement>(&model);
  if (!ls)
    return model;
  if (ls->reads.size() != 1)
    return "its input " + f.tensor(*e.inputs[0].tensor).name() +
           " is not a HirAliasSelect of a tensor in the loop";
  if (!ls->write)
    return "its output " + f.tensor(e.outputs[0]).name() +
           " is not a HirAliasSelect of a tensor in the loop";
  return model;
}

std::optional<std::string> unloopedSliceWrite(const Fusion &f, const Expr &e) {
  if (!outputViewBase(e) || isInHostLoop(e))
    return std::nullopt;
  return "it writes " + f.tensor(e.outputs.at(0)).name() + ", the slice of " +
         e.attr(kOutputViewAttr) + " at index `" + e.attr(kOutputViewIndexAttr) +
         "`, outside a host loop: the rest of " + e.attr(kOutputViewAttr) +
         " is written by nothing shardcheck reads";
}

std::vector<TensorNum> loopWrittenBases(const Fusion &f) {
  std::vector<TensorNum> bases;
  for (const Expr &e : f.exprs)
    if (auto base = outputViewBase(e))
      if (std::holds_alternative<LoopedStatement>(loopedStatement(f, e)))
        bases.push_back(*base);
  return bases;
}

} // namespace shardcheck
