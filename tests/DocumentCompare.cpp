// Field-by-field comparison of Documents; see DocumentCompare.h.
//
// The comparison walks every field of every struct of ir/Fusion.h and stops at
// the first difference, describing it with its place (`fusion 0: tensor T3:
// logical`) and both values, which is what a failing round-trip test needs to
// show. Options relax locations and transform order for printer round trips;
// nothing else is ever ignored.
#include "tests/DocumentCompare.h"

#include "ir/Json.h"
#include "ir/json/JsonSpellings.h"

#include <map>
#include <sstream>

namespace shardcheck {

namespace {

using namespace jsonir;

std::string show(int64_t v) {
  return std::to_string(v);
}
std::string show(int v) {
  return std::to_string(v);
}
std::string show(size_t v) {
  return std::to_string(v);
}
std::string show(bool v) {
  return v ? "true" : "false";
}
std::string show(const std::string &s) {
  return "\"" + s + "\"";
}
std::string show(const Extent &e) {
  return e.str();
}
std::string show(const DeviceMesh &m) {
  return m.str();
}
std::string show(IterType t) {
  return iterTypeJsonName(t);
}
std::string show(ParallelType p) {
  return parallelTypeJsonName(p);
}
std::string show(MemoryType m) {
  return memoryTypeJsonName(m);
}
std::string show(DataType d) {
  return d == DataType::Unknown ? "unknown" : dataTypeJsonName(d);
}
std::string show(Transform::Kind k) {
  return transformKindJsonName(k);
}
std::string show(OpKind k) {
  return opKindJsonName(k);
}
std::string show(CollectiveType c) {
  return collectiveTypeName(c);
}
std::string show(BlockKind k) {
  return blockKindJsonName(k);
}
std::string show(Contiguity c) {
  return c == Contiguity::True ? "t" : c == Contiguity::False ? "f" : "n";
}
std::string show(const std::pair<std::string, std::string> &kv) {
  return kv.first + "=" + kv.second;
}
template <typename T> std::string show(const std::optional<T> &v) {
  return v ? show(*v) : "none";
}
template <typename T> std::string show(const std::vector<T> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + show(static_cast<const T &>(v[i]));
  return s + "]";
}
std::string show(const std::vector<bool> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + show(static_cast<bool>(v[i]));
  return s + "]";
}

class Comparer {
public:
  explicit Comparer(const DocumentCompareOptions &options) : options_(options) {}

  bool documents(const Document &a, const Document &b);
  const std::string &why() const { return why_; }

private:
  template <typename T> bool same(const std::string &what, const T &a, const T &b) {
    if (a == b)
      return true;
    why_ = what + " differs: " + show(a) + " vs " + show(b);
    return false;
  }
  bool sameLoc(const std::string &what, const SourceLoc &a, const SourceLoc &b) {
    if (options_.ignoreLocations)
      return true;
    return same(what, a.file, b.file) && same(what, a.line, b.line) &&
           same(what, a.column, b.column);
  }
  bool mismatch(std::string message) {
    why_ = std::move(message);
    return false;
  }

  bool fusions(const std::string &at, const Fusion &a, const Fusion &b);
  bool iterDomains(const std::string &at, const Fusion &a, const Fusion &b);
  bool iterDomain(const std::string &at, const Fusion &fa, const IterDomain &a, const Fusion &fb,
                  const IterDomain &b);
  bool transforms(const std::string &at, const Fusion &a, const Fusion &b);
  bool transform(const std::string &at, const Transform &a, const Transform &b);
  bool tensors(const std::string &at, const Fusion &a, const Fusion &b);
  bool tensor(const std::string &at, const TensorView &a, const TensorView &b);
  bool exprs(const std::string &at, const Fusion &a, const Fusion &b);
  bool expr(const std::string &at, const Expr &a, const Expr &b);
  bool communication(const std::string &at, const std::optional<CommunicationInfo> &a,
                     const std::optional<CommunicationInfo> &b);
  bool groups(const std::string &at, const Fusion &a, const Fusion &b);

  /// Both maps have the same keys; otherwise says which key one lacks.
  template <typename K, typename V>
  bool sameKeys(const std::string &what, const std::string &prefix, const std::map<K, V> &a,
                const std::map<K, V> &b) {
    for (const auto &kv : a)
      if (!b.count(kv.first))
        return mismatch(what + prefix + std::to_string(kv.first) + " is only in the first");
    for (const auto &kv : b)
      if (!a.count(kv.first))
        return mismatch(what + prefix + std::to_string(kv.first) + " is only in the second");
    return true;
  }

  DocumentCompareOptions options_;
  std::string why_;
};

bool Comparer::documents(const Document &a, const Document &b) {
  if (!same("document file", a.file, b.file))
    return false;
  if (!same("number of fusions", a.fusions.size(), b.fusions.size()))
    return false;
  for (size_t i = 0; i < a.fusions.size(); ++i)
    if (!fusions("fusion " + std::to_string(i) + ": ", a.fusions[i], b.fusions[i]))
      return false;
  return true;
}

bool Comparer::fusions(const std::string &at, const Fusion &a, const Fusion &b) {
  return same(at + "kind", a.kind, b.kind) && sameLoc(at + "location", a.loc, b.loc) &&
         same(at + "inputs", a.inputs, b.inputs) && same(at + "outputs", a.outputs, b.outputs) &&
         iterDomains(at, a, b) && transforms(at, a, b) && tensors(at, a, b) && exprs(at, a, b) &&
         groups(at, a, b);
}

bool Comparer::iterDomains(const std::string &at, const Fusion &a, const Fusion &b) {
  if (!sameKeys(at, "IterDomain ", a.ids, b.ids))
    return false;
  for (const auto &[number, id] : a.ids)
    if (!iterDomain(at + "IterDomain " + std::to_string(number) + ": ", a, id, b, b.ids.at(number)))
      return false;
  return true;
}

bool Comparer::iterDomain(const std::string &at, const Fusion &fa, const IterDomain &a,
                          const Fusion &fb, const IterDomain &b) {
  if (!(same(at + "number", a.number, b.number) && same(at + "iter type", a.iterType, b.iterType) &&
        same(at + "parallel type", a.parallel, b.parallel) &&
        same(at + "extent", a.extent, b.extent) &&
        same(at + "expanded extent", a.expandedExtent, b.expandedExtent) &&
        same(at + "start", a.start, b.start) && same(at + "stop", a.stop, b.stop) &&
        same(at + "rfactor", a.rfactor, b.rfactor) &&
        same(at + "extra suffix", a.extraSuffix, b.extraSuffix) &&
        sameLoc(at + "location", a.loc, b.loc)))
    return false;
  if (!options_.ignoreTransformOrder)
    return same(at + "definition", a.definition, b.definition);
  // By content: transforms themselves are compared as a set elsewhere, so
  // the defining transforms are the same iff they produce the same IDs.
  if (a.definition.has_value() != b.definition.has_value())
    return same(at + "definition", a.definition, b.definition);
  return !a.definition || same(at + "definition's outputs", fa.transforms[*a.definition].outputs,
                               fb.transforms[*b.definition].outputs);
}

bool Comparer::transforms(const std::string &at, const Fusion &a, const Fusion &b) {
  if (!same(at + "number of transforms", a.transforms.size(), b.transforms.size()))
    return false;
  if (!options_.ignoreTransformOrder) {
    for (size_t i = 0; i < a.transforms.size(); ++i)
      if (!transform(at + "transform " + std::to_string(i) + ": ", a.transforms[i],
                     b.transforms[i]))
        return false;
    return true;
  }
  // Each ID has at most one definition, so outputs identify a transform.
  std::map<std::vector<IdNum>, const Transform *> byOutputs;
  for (const auto &t : b.transforms)
    byOutputs[t.outputs] = &t;
  for (const auto &t : a.transforms) {
    auto it = byOutputs.find(t.outputs);
    if (it == byOutputs.end())
      return mismatch(at + "the transform producing " + show(t.outputs) + " is only in the first");
    if (!transform(at + "transform producing " + show(t.outputs) + ": ", t, *it->second))
      return false;
  }
  return true;
}

bool Comparer::transform(const std::string &at, const Transform &a, const Transform &b) {
  return same(at + "kind", a.kind, b.kind) && same(at + "inputs", a.inputs, b.inputs) &&
         same(at + "outputs", a.outputs, b.outputs) && same(at + "factor", a.factor, b.factor) &&
         same(at + "inner split", a.innerSplit, b.innerSplit) &&
         same(at + "chunked", a.chunked, b.chunked) && same(at + "left", a.left, b.left) &&
         same(at + "right", a.right, b.right) && same(at + "detail", a.detail, b.detail) &&
         sameLoc(at + "location", a.loc, b.loc);
}

bool Comparer::tensors(const std::string &at, const Fusion &a, const Fusion &b) {
  if (!sameKeys(at, "tensor T", a.tensors, b.tensors))
    return false;
  for (const auto &[number, tv] : a.tensors)
    if (!tensor(at + tv.name() + ": ", tv, b.tensors.at(number)))
      return false;
  return true;
}

bool Comparer::tensor(const std::string &at, const TensorView &a, const TensorView &b) {
  return same(at + "number", a.number, b.number) && same(at + "memory type", a.memory, b.memory) &&
         same(at + "dtype", a.dtype, b.dtype) && same(at + "root domain", a.root, b.root) &&
         same(at + "logical domain", a.logical, b.logical) &&
         same(at + "allocation domain", a.allocation, b.allocation) &&
         same(at + "loop domain", a.loop, b.loop) &&
         same(at + "contiguity", a.contiguity, b.contiguity) && same(at + "mesh", a.mesh, b.mesh) &&
         same(at + "ca_pos", a.caPos, b.caPos) &&
         same(at + "produce_pos", a.producePos, b.producePos) &&
         same(at + "hasTransformInfo", a.hasTransformInfo, b.hasTransformInfo) &&
         sameLoc(at + "location", a.loc, b.loc) &&
         sameLoc(at + "domains location", a.domainsLoc, b.domainsLoc);
}

bool Comparer::exprs(const std::string &at, const Fusion &a, const Fusion &b) {
  if (!same(at + "number of exprs", a.exprs.size(), b.exprs.size()))
    return false;
  for (size_t i = 0; i < a.exprs.size(); ++i)
    if (!expr(at + "expr " + std::to_string(i) + ": ", a.exprs[i], b.exprs[i]))
      return false;
  return true;
}

bool Comparer::expr(const std::string &at, const Expr &a, const Expr &b) {
  if (!(same(at + "kind", a.kind, b.kind) && same(at + "op", a.op, b.op) &&
        same(at + "number of inputs", a.inputs.size(), b.inputs.size())))
    return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    std::string operand = at + "input " + std::to_string(i) + " ";
    if (!(same(operand + "tensor", a.inputs[i].tensor, b.inputs[i].tensor) &&
          same(operand + "scalar", a.inputs[i].scalar, b.inputs[i].scalar)))
      return false;
  }
  return same(at + "outputs", a.outputs, b.outputs) && same(at + "flags", a.flags, b.flags) &&
         same(at + "attributes", a.attrs, b.attrs) &&
         communication(at + "communication ", a.communication, b.communication) &&
         sameLoc(at + "location", a.loc, b.loc);
}

bool Comparer::communication(const std::string &at, const std::optional<CommunicationInfo> &a,
                             const std::optional<CommunicationInfo> &b) {
  if (a.has_value() != b.has_value())
    return mismatch(at + "is only in the " + (a ? "first" : "second"));
  if (!a)
    return true;
  return same(at + "number", a->number, b->number) && same(at + "type", a->type, b->type) &&
         same(at + "team", a->team, b->team) && same(at + "root", a->root, b->root) &&
         same(at + "backend", a->backend, b->backend);
}

bool Comparer::groups(const std::string &at, const Fusion &a, const Fusion &b) {
  if (!same(at + "number of segment groups", a.groups.size(), b.groups.size()))
    return false;
  for (size_t i = 0; i < a.groups.size(); ++i) {
    std::string g = at + "segment group " + std::to_string(i) + ": ";
    if (!(same(g + "name", a.groups[i].name, b.groups[i].name) &&
          same(g + "scheduler", a.groups[i].scheduler, b.groups[i].scheduler) &&
          same(g + "exprs", a.groups[i].exprs, b.groups[i].exprs)))
      return false;
  }
  return true;
}

} // namespace

bool documentsEqual(const Document &a, const Document &b, const DocumentCompareOptions &options,
                    std::string *why) {
  Comparer comparer(options);
  bool equal = comparer.documents(a, b);
  if (!equal && why)
    *why = comparer.why();
  return equal;
}

bool documentsEqual(const Document &a, const Document &b, std::string *why) {
  return documentsEqual(a, b, DocumentCompareOptions{}, why);
}

} // namespace shardcheck
