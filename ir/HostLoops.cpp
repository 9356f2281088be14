// Reading a Communication posted in a host loop into a LoopedCommunication;
// see HostLoops.h.
//
// This file does not check what it reads: a slice whose sharding differs
// from its base's, or a loop that misses an index, is the checker's finding.
#include "ir/HostLoops.h"

#include "ir/FusionGraph.h"

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
  return key == kOutputViewAttr || key == kOutputViewAxisAttr || key == kOutputViewIndexAttr;
}

std::optional<Expr> outputViewStatement(const Fusion &f, const Expr &communication) {
  auto base = outputViewBase(communication);
  if (!base || !f.hasTensor(*base) || communication.outputs.size() != 1)
    return std::nullopt;
  Expr view;
  view.kind = OpKind::Other;
  view.op = "HirAliasSelect";
  view.inputs = {Operand::ofTensor(*base)};
  view.outputs = communication.outputs;
  view.attrs = {{"axis", communication.attr(kOutputViewAxisAttr)},
                {"index", communication.attr(kOutputViewIndexAttr)}};
  view.loc = communication.loc;
  return view;
}

bool isInHostLoop(const Expr &expr) {
  return !expr.attr(kHostLoopAttr).empty();
}

std::variant<LoopedCommunication, std::string> loopedCommunication(const Fusion &f, const Expr &e) {
  if (e.kind != OpKind::Communication || !isInHostLoop(e))
    return std::string("it is not a Communication posted in a host loop");
  if (std::string branch = e.attr(kHostBranchAttr); !branch.empty())
    return "it is posted in the branch `" + branch + "` of the loop, which only some devices take";
  auto loop = parseLoop(f, e.attr(kHostLoopAttr));
  if (auto *why = std::get_if<std::string>(&loop))
    return "the loop `" + e.attr(kHostLoopAttr) + "` is not modelled: " + *why;
  LoopedCommunication lc;
  lc.loop = std::get<HostLoop>(loop);
  if (e.inputs.size() != 1 || !e.inputs[0].tensor || e.outputs.size() != 1)
    return std::string("it does not read one tensor into one tensor");
  TensorNum in = *e.inputs[0].tensor, out = e.outputs[0];
  const Expr *read = f.producerExpr(in);
  if (!read || read->op != "HirAliasSelect" || read->tensorInputs().size() != 1)
    return "its input " + f.tensor(in).name() + " is not a HirAliasSelect of a tensor in the loop";
  auto outBase = outputViewBase(e);
  if (!outBase || !f.hasTensor(*outBase))
    return "its output " + f.tensor(out).name() +
           " is not a HirAliasSelect of a tensor in the loop";
  auto input =
      sliceOf(f, in, read->tensorInputs()[0], read->attr("axis"), read->attr("index"), lc.loop);
  if (auto *why = std::get_if<std::string>(&input))
    return *why;
  auto output =
      sliceOf(f, out, *outBase, e.attr(kOutputViewAxisAttr), e.attr(kOutputViewIndexAttr), lc.loop);
  if (auto *why = std::get_if<std::string>(&output))
    return *why;
  lc.input = std::get<SliceView>(input);
  lc.output = std::get<SliceView>(output);
  return lc;
}

} // namespace shardcheck
