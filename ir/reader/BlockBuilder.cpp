// Implementation of BlockBuilder; see BlockBuilder.h.
#include "ir/reader/BlockBuilder.h"

#include "ir/HostLoops.h"

#include "ir/reader/Cursor.h"
#include "util/Checked.h"

#include <algorithm>
#include <utility>

namespace shardcheck::reader {

namespace {

[[noreturn]] void conflict(const std::string &message, const SourceLoc &here) {
  throwInputError(kConflictError, message, here);
}

[[noreturn]] void structureError(const std::string &message, const SourceLoc &here) {
  throwInputError(kParseError, message, here);
}

bool sameTransform(const Transform &a, const Transform &b) {
  return a.kind == b.kind && a.inputs == b.inputs && a.outputs == b.outputs &&
         a.factor == b.factor && a.innerSplit == b.innerSplit && a.left == b.left &&
         a.right == b.right && a.detail == b.detail;
}

/// A key equal for expressions that print identically (locations aside).
std::string exprKey(const Expr &e) {
  std::string k = std::to_string(static_cast<int>(e.kind)) + "|" + e.op + "|";
  for (TensorNum t : e.outputs)
    k += "T" + std::to_string(t) + ",";
  k += "|";
  for (const auto &o : e.inputs)
    k += o.tensor ? "T" + std::to_string(*o.tensor) + "," : "s" + o.scalar + ",";
  k += "|";
  for (bool f : e.flags)
    k += f ? '1' : '0';
  for (const auto &[key, value] : e.attrs)
    k += "|" + key + "=" + value;
  if (e.communication) {
    const auto &c = *e.communication;
    k += "|comm" + std::to_string(c.number) + "," + collectiveTypeName(c.type) + ",";
    for (int64_t d : c.team)
      k += std::to_string(d) + " ";
    k += c.root ? std::to_string(*c.root) : "-";
    k += "," + c.backend;
  }
  return k;
}

/// Records on a statement the write view `view` that named its output
/// (`T5 = HirAliasSelect( T3, axis = .., index = StreamIdx )`): its base
/// tensor, axis and index, as the attributes of ir/HostLoops.h; a view of
/// another kind (`ShardByStream`, `select`) also records its op, which the
/// loop model reports as not read.
void recordOutputView(const Expr &view, Expr &writer) {
  const auto &inputs = view.tensorInputs();
  if (inputs.size() != 1)
    return;
  bool byStream = view.op == "ShardByStream";
  const char *index = byStream ? "stream_index" : "index";
  // Where the statement writes is part of what it means: a view missing a
  // field cannot be recorded faithfully (nor printed back), so it is refused.
  for (const char *field : {byStream ? index : "axis", index})
    if (view.attr(field).empty())
      structureError(view.op + " names the slice T" + std::to_string(view.outputs.at(0)) +
                         " a later statement writes, but has no `" + field + " =`",
                     view.loc);
  writer.attrs.emplace_back(kOutputViewAttr, "T" + std::to_string(inputs[0]));
  writer.attrs.emplace_back(kOutputViewAxisAttr, view.attr("axis"));
  writer.attrs.emplace_back(kOutputViewIndexAttr, view.attr(index));
  if (view.op != "HirAliasSelect")
    writer.attrs.emplace_back(kOutputViewOpAttr, view.op);
}

/// Numbers the loops that hold a statement 1, 2, ... in order, so that a
/// program printed back (without its empty loops) reads the same numbers.
void renumberHostLoops(std::vector<Expr> &exprs) {
  std::map<std::string, std::string> dense;
  for (Expr &e : exprs)
    for (auto &[key, value] : e.attrs)
      if (key == kHostLoopIdAttr) {
        auto [it, added] = dense.emplace(value, std::to_string(dense.size() + 1));
        value = it->second;
      }
}

} // namespace

std::vector<Expr> BlockBuilder::exprsWithoutWriteViews() const {
  // In host IR a slice view whose output another statement then writes (a
  // Communication's output, a matmul's) names where that statement writes:
  // it is no data flow into the slice, and keeping it would define the
  // slice twice. The writing statement keeps where it writes as its output
  // view (kOutputViewAttr ...), which the loop model needs: a statement
  // writing a slice must never pass for one computing a whole tensor.
  if (kind_ != BlockKind::HostIr)
    return exprs_;
  std::set<TensorNum> written;
  for (const Expr &e : exprs_)
    if (!isSliceView(e))
      written.insert(e.outputs.begin(), e.outputs.end());
  std::map<TensorNum, const Expr *> writeViews; // the last one naming each slice
  std::vector<Expr> kept;
  for (const Expr &e : exprs_) {
    if (isSliceView(e) && e.outputs.size() == 1 && written.count(e.outputs[0])) {
      writeViews[e.outputs[0]] = &e;
      continue;
    }
    kept.push_back(e);
    auto view = e.outputs.size() == 1 ? writeViews.find(e.outputs[0]) : writeViews.end();
    if (view != writeViews.end())
      recordOutputView(*view->second, kept.back());
  }
  renumberHostLoops(kept);
  return kept;
}

std::string BlockBuilder::idStr(IdNum n) const {
  auto it = ids_.find(n);
  return shownToken(it != ids_.end() ? it->second.str() : std::to_string(n));
}

std::string BlockBuilder::idListStr(const std::vector<IdNum> &ids) const {
  std::string s = "(";
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i > 0 ? ", " : "") + idStr(ids[i]);
  return shownToken(s + ")", 240);
}

std::string BlockBuilder::transformStr(const Transform &t) const {
  std::string s = transformKindName(t.kind);
  s += ": ";
  for (size_t i = 0; i < t.inputs.size(); ++i)
    s += (i ? ", " : "") + idStr(t.inputs[i]);
  s += " -> ";
  for (size_t i = 0; i < t.outputs.size(); ++i)
    s += (i ? ", " : "") + idStr(t.outputs[i]);
  return s;
}

void BlockBuilder::noteId(const IterDomain &id) {
  auto [it, inserted] = ids_.emplace(id.number, id);
  if (inserted)
    return;
  const IterDomain &old = it->second;
  // Every print of one IterDomain is identical in nvFuser, so comparing the
  // spellings compares iter type, parallel type, extents and suffixes.
  if (old.str() != id.str())
    conflict("IterDomain " + std::to_string(id.number) + " is printed as '" + shownToken(id.str()) +
                 "' here but as '" + shownToken(old.str()) + "' at " + old.loc.str(),
             id.loc);
}

void BlockBuilder::noteTensor(const TensorPrint &print) {
  auto it = tensors_.find(print.number);
  if (it == tensors_.end()) {
    tensors_.emplace(print.number, TensorFacts{print, std::nullopt});
    return;
  }
  TensorPrint &old = it->second.print;
  std::string name = "T" + std::to_string(print.number);
  if (old.loop != print.loop)
    conflict(name + " is printed with loop domain " + idListStr(print.loop) + " here but " +
                 idListStr(old.loop) + " at " + old.loc.str(),
             print.loc);
  if (old.dtype != DataType::Unknown && print.dtype != DataType::Unknown &&
      old.dtype != print.dtype)
    conflict(name + " is printed with data type " + dataTypeName(print.dtype) + " here but " +
                 dataTypeName(old.dtype) + " at " + old.loc.str(),
             print.loc);
  if (old.mesh && print.mesh && *old.mesh != *print.mesh)
    conflict(name + " is printed with " + shownToken(print.mesh->str()) + " here but " +
                 shownToken(old.mesh->str()) + " at " + old.loc.str(),
             print.loc);
  // Prints without a dtype or mesh (older styles, some host IR lines) add
  // nothing; later prints may fill in what earlier ones left out.
  if (old.dtype == DataType::Unknown)
    old.dtype = print.dtype;
  if (!old.mesh)
    old.mesh = print.mesh;
  if (!old.caPos)
    old.caPos = print.caPos;
  if (!old.producePos)
    old.producePos = print.producePos;
}

void BlockBuilder::mergeDomains(const TensorFacts &facts, const DomainPrint &d) const {
  const DomainPrint &old = *facts.domains;
  std::string name = "T" + std::to_string(facts.print.number);
  auto differ = [&](const char *what, const std::vector<IdNum> &now,
                    const std::vector<IdNum> &before) {
    if (now != before)
      conflict("the " + std::string(what) + " domain of " + name + " is " + idListStr(now) +
                   " here but " + idListStr(before) + " at " + old.loc.str(),
               d.loc);
  };
  differ("root", d.root, old.root);
  differ("logical", d.logical, old.logical);
  differ("allocation", d.allocation, old.allocation);
  if (d.sawContiguity && old.sawContiguity && d.contiguity != old.contiguity)
    conflict("the contiguity of " + name + " differs from its entry at " + old.loc.str(),
             d.contiguityLoc);
}

void BlockBuilder::noteDomains(TensorNum tensor, DomainPrint d) {
  TensorFacts &facts = tensors_.at(tensor);
  std::string name = "T" + std::to_string(tensor);
  // Old dumps print a root domain for every tensor and a logical (`rfactor`)
  // domain only when it differs: then the printed root is the logical domain.
  if (!d.sawLogical) {
    d.logical = d.root;
    d.logicalLoc = d.rootLoc;
    d.root.clear();
  } else if (d.root == d.logical) {
    d.root.clear();
  }
  if (d.loop && *d.loop != facts.print.loop)
    conflict("the loop domain of " + name + " is " + idListStr(*d.loop) +
                 " but its header prints " + idListStr(facts.print.loop) + " at " +
                 facts.print.loc.str(),
             d.loopLoc);
  if (facts.domains) {
    mergeDomains(facts, d);
    return;
  }
  facts.domains = std::move(d);
}

void BlockBuilder::checkTransformShape(const Transform &t) const {
  std::vector<IdNum> all = t.inputs;
  all.insert(all.end(), t.outputs.begin(), t.outputs.end());
  std::vector<IdNum> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end())
    structureError("IterDomain " + std::to_string(*dup) + " appears twice in '" + transformStr(t) +
                       "'",
                   t.loc);
}

void BlockBuilder::noteTransform(Transform t) {
  checkTransformShape(t);
  for (IdNum out : t.outputs) {
    auto it = definedBy_.find(out);
    if (it == definedBy_.end())
      continue;
    const Transform &old = transforms_[it->second];
    if (sameTransform(old, t))
      return; // The same transform printed again (another entry of a tensor).
    conflict("IterDomain " + idStr(out) + " is defined by '" + transformStr(t) + "' here but by '" +
                 transformStr(old) + "' at " + old.loc.str(),
             t.loc);
  }
  for (IdNum out : t.outputs)
    definedBy_[out] = transforms_.size();
  transforms_.push_back(std::move(t));
}

size_t BlockBuilder::noteExpr(Expr e) {
  std::string key = exprKey(e);
  auto it = exprIndex_.find(key);
  if (it != exprIndex_.end())
    return it->second;
  exprs_.push_back(std::move(e));
  exprIndex_.emplace(std::move(key), exprs_.size() - 1);
  return exprs_.size() - 1;
}

void BlockBuilder::setInputs(std::vector<TensorNum> inputs) {
  inputs_ = std::move(inputs);
}
void BlockBuilder::setOutputs(std::vector<TensorNum> outputs) {
  outputs_ = std::move(outputs);
}

void BlockBuilder::checkNoCycles() const {
  // Iterative DFS over "defined from" edges: a malicious dump may chain
  // thousands of transforms, which must not exhaust the stack.
  enum : char { Unseen, Active, Done };
  std::map<IdNum, char> state;
  for (const auto &[start, unused] : definedBy_) {
    if (state[start] != Unseen)
      continue;
    std::vector<std::pair<IdNum, size_t>> stack{{start, 0}};
    state[start] = Active;
    while (!stack.empty()) {
      auto &[id, next] = stack.back();
      auto def = definedBy_.find(id);
      const std::vector<IdNum> *inputs =
          def != definedBy_.end() ? &transforms_[def->second].inputs : nullptr;
      if (!inputs || next >= inputs->size()) {
        state[id] = Done;
        stack.pop_back();
        continue;
      }
      IdNum in = (*inputs)[next++];
      if (state[in] == Active)
        structureError("transforms form a cycle through IterDomain " + idStr(in),
                       transforms_[def->second].loc);
      if (state[in] == Unseen) {
        state[in] = Active;
        stack.emplace_back(in, 0);
      }
    }
  }
}

std::optional<IdNum> BlockBuilder::firstUnderived(const std::vector<IdNum> &ids,
                                                  const std::set<IdNum> &base) const {
  // One `seen` for all of `ids`: an ID reached before is known derived (or
  // is being explored), so the walk is linear in the transforms, not in
  // their product with the domain's length.
  std::set<IdNum> seen;
  for (IdNum top : ids) {
    std::vector<IdNum> work{top};
    while (!work.empty()) {
      IdNum id = work.back();
      work.pop_back();
      if (base.count(id) || !seen.insert(id).second)
        continue;
      auto def = definedBy_.find(id);
      if (def != definedBy_.end()) {
        for (IdNum in : transforms_[def->second].inputs)
          work.push_back(in);
        continue;
      }
      // nvFuser may add broadcast IDs to a loop domain that no logical ID
      // produces (TensorDomain::broadcast); anything else must be derived.
      if (!ids_.at(id).isBroadcast())
        return top;
    }
  }
  return std::nullopt;
}

void BlockBuilder::checkDerived(const TensorFacts &facts) const {
  const DomainPrint &d = *facts.domains;
  std::string name = "T" + std::to_string(facts.print.number);
  auto complain = [&](IdNum id, const char *domain, const char *from, const SourceLoc &at) {
    structureError(std::string("the ") + domain + " domain of " + name + " contains " + idStr(id) +
                       ", which is not derived from its " + from + " domain",
                   at.known() ? at : d.loc);
  };
  if (!d.root.empty()) {
    std::set<IdNum> root(d.root.begin(), d.root.end());
    if (auto bad = firstUnderived(d.logical, root))
      complain(*bad, "logical", "root", d.logicalLoc);
  }
  std::set<IdNum> base(d.logical.begin(), d.logical.end());
  base.insert(d.root.begin(), d.root.end());
  if (auto bad = firstUnderived(d.allocation, base))
    complain(*bad, "allocation", "logical", d.allocationLoc);
  if (auto bad = firstUnderived(facts.print.loop, base))
    complain(*bad, "loop", "logical", d.loopLoc.known() ? d.loopLoc : facts.print.loc);
}

void BlockBuilder::checkContiguity(const TensorFacts &facts) const {
  const DomainPrint &d = *facts.domains;
  if (!d.sawContiguity)
    return;
  size_t expected = d.allocation.empty() ? d.logical.size() : d.allocation.size();
  if (d.contiguity.size() != expected)
    structureError("the contiguity of T" + std::to_string(facts.print.number) + " has " +
                       std::to_string(d.contiguity.size()) + " entries, expected " +
                       std::to_string(expected) + " (one per " +
                       (d.allocation.empty() ? "logical" : "allocation") + " IterDomain)",
                   d.contiguityLoc);
}

TensorView BlockBuilder::makeTensorView(const TensorFacts &facts) const {
  const TensorPrint &p = facts.print;
  TensorView tv;
  tv.number = p.number;
  tv.memory = p.memory;
  tv.dtype = p.dtype;
  tv.loop = p.loop;
  tv.mesh = p.mesh;
  tv.caPos = p.caPos;
  tv.producePos = p.producePos;
  tv.loc = p.loc;
  if (facts.domains) {
    const DomainPrint &d = *facts.domains;
    tv.root = d.root;
    tv.logical = d.logical;
    tv.allocation = d.allocation;
    tv.contiguity = d.contiguity;
    tv.hasTransformInfo = true;
    tv.domainsLoc = d.loc;
  } else {
    // Without a TransformPrinter entry the printed (loop) domain is all we
    // know: take it as the logical domain too.
    tv.logical = p.loop;
  }
  return tv;
}

void BlockBuilder::inferInputsAndOutputs(Fusion &f) const {
  // Dumps without an `Inputs:`/`Outputs:` header (a bare `%kernel {`):
  // inputs are tensors used but never defined, outputs tensors defined but
  // never used, each in order of first appearance.
  std::set<TensorNum> defined, used;
  for (const Expr &e : exprs_) {
    defined.insert(e.outputs.begin(), e.outputs.end());
    for (TensorNum t : e.tensorInputs())
      used.insert(t);
  }
  std::set<TensorNum> seen;
  for (const Expr &e : exprs_)
    for (TensorNum t : e.tensorInputs())
      if (!defined.count(t) && seen.insert(t).second)
        f.inputs.push_back(t);
  for (const Expr &e : exprs_)
    for (TensorNum t : e.outputs)
      if (!used.count(t) && seen.insert(t).second)
        f.outputs.push_back(t);
}

std::set<TensorNum> BlockBuilder::orphanTensors(const std::vector<Expr> &exprs) const {
  // Tensors no kept statement and no input/output list names: the slice a
  // dropped write view read, or the output of a statement a paste cut off.
  std::set<TensorNum> named;
  for (const Expr &e : exprs) {
    named.insert(e.outputs.begin(), e.outputs.end());
    for (TensorNum t : e.tensorInputs())
      named.insert(t);
    if (auto base = outputViewBase(e))
      named.insert(*base);
  }
  for (const auto *list : {&inputs_, &outputs_})
    if (*list)
      named.insert((*list)->begin(), (*list)->end());
  std::set<TensorNum> orphans;
  for (const auto &[num, facts] : tensors_)
    if (!named.count(num))
      orphans.insert(num);
  return orphans;
}

std::set<IdNum> BlockBuilder::idsOf(const std::set<TensorNum> &tensors) const {
  // Every ID of the tensors' domains, closed over the transforms joining them.
  std::set<IdNum> ids;
  for (TensorNum t : tensors) {
    const TensorFacts &facts = tensors_.at(t);
    ids.insert(facts.print.loop.begin(), facts.print.loop.end());
    if (facts.domains)
      for (const auto *d :
           {&facts.domains->root, &facts.domains->logical, &facts.domains->allocation})
        ids.insert(d->begin(), d->end());
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const Transform &t : transforms_) {
      bool touches = false;
      for (const auto *side : {&t.inputs, &t.outputs})
        for (IdNum id : *side)
          touches |= ids.count(id) > 0;
      if (!touches)
        continue;
      for (const auto *side : {&t.inputs, &t.outputs})
        for (IdNum id : *side)
          grew |= ids.insert(id).second;
    }
  }
  return ids;
}

Fusion BlockBuilder::build(bool cut) const {
  checkNoCycles();
  for (const auto &[num, facts] : tensors_) {
    if (!facts.domains)
      continue;
    checkContiguity(facts);
    checkDerived(facts);
  }

  std::vector<Expr> exprs = exprsWithoutWriteViews();
  // Host IR and cut pastes may leave tensors nothing names (see
  // orphanTensors); they, and the IDs only they use, are left out.
  std::set<TensorNum> orphans;
  if (kind_ == BlockKind::HostIr || (cut && kind_ != BlockKind::TransformsOnly))
    orphans = orphanTensors(exprs);
  std::set<TensorNum> kept;
  for (const auto &[num, facts] : tensors_)
    if (!orphans.count(num))
      kept.insert(num);
  std::set<IdNum> keptIds = orphans.empty() ? std::set<IdNum>{} : idsOf(kept);
  auto keepId = [&](IdNum id) { return orphans.empty() || keptIds.count(id) > 0; };

  Fusion f;
  f.kind = kind_;
  f.loc = loc_;
  for (const auto &[num, id] : ids_) {
    if (!keepId(num))
      continue;
    IterDomain copy = id;
    f.addIterDomain(std::move(copy));
  }
  for (const Transform &t : transforms_)
    if (keepId(t.outputs.front()))
      f.addTransform(t);
  for (TensorNum t : kept)
    f.addTensor(makeTensorView(tensors_.at(t)));
  for (const Expr &e : exprs)
    f.addExpr(e);
  if (inputs_)
    f.inputs = *inputs_;
  if (outputs_)
    f.outputs = *outputs_;
  if (!inputs_ && !outputs_ && kind_ != BlockKind::TransformsOnly)
    inferInputsAndOutputs(f);
  f.groups = groups_;
  return f;
}

} // namespace shardcheck::reader
