// Implementation of the fusion IR's factories and lookups; see Fusion.h.
#include "ir/Fusion.h"

#include "ir/Scalars.h"

#include <cstdlib>
#include <limits>

namespace shardcheck {

std::string IterDomain::str() const {
  std::string s(1, iterTypeLetter(iterType));
  s += parallelTypeName(parallel);
  s += std::to_string(number);
  s += "{";
  if (start)
    s += start->str() + " : ";
  if (stop)
    s += stop->str() + " : ";
  s += extent.str();
  if (expandedExtent)
    s += " ex " + expandedExtent->str();
  s += "}";
  if (rfactor)
    s += "rf";
  s += extraSuffix;
  return s;
}

const char *transformKindName(Transform::Kind k) {
  switch (k) {
  case Transform::Kind::Split:
    return "Split";
  case Transform::Kind::Merge:
    return "Merge";
  case Transform::Kind::Resize:
    return "Resize";
  case Transform::Kind::Swizzle2D:
    return "Swizzle2D";
  case Transform::Kind::Swizzle1D:
    return "Swizzle1D";
  }
  return "?";
}

const char *opKindName(OpKind k) {
  switch (k) {
  case OpKind::Set:
    return "Set";
  case OpKind::Permute:
    return "Permute";
  case OpKind::SegmenterSet:
    return "SegmenterSet";
  case OpKind::LoadStore:
    return "LoadStore";
  case OpKind::Unary:
    return "Unary";
  case OpKind::Cast:
    return "Cast";
  case OpKind::Binary:
    return "Binary";
  case OpKind::Ternary:
    return "Ternary";
  case OpKind::Where:
    return "Where";
  case OpKind::Broadcast:
    return "Broadcast";
  case OpKind::Squeeze:
    return "Squeeze";
  case OpKind::Expand:
    return "Expand";
  case OpKind::Reduction:
    return "Reduction";
  case OpKind::Reshape:
    return "Reshape";
  case OpKind::Matmul:
    return "Matmul";
  case OpKind::Linear:
    return "Linear";
  case OpKind::Communication:
    return "Communication";
  case OpKind::Other:
    return "Other";
  }
  return "?";
}

bool isPointwiseKind(OpKind k) {
  switch (k) {
  case OpKind::Set:
  case OpKind::SegmenterSet:
  case OpKind::LoadStore:
  case OpKind::Unary:
  case OpKind::Cast:
  case OpKind::Binary:
  case OpKind::Ternary:
  case OpKind::Where:
  case OpKind::Expand:
  case OpKind::Communication:
    return true;
  default:
    return false;
  }
}

bool isCopyKind(OpKind k) {
  switch (k) {
  case OpKind::Set:
  case OpKind::SegmenterSet:
  case OpKind::LoadStore:
  case OpKind::Permute:
  case OpKind::Broadcast:
  case OpKind::Squeeze:
  case OpKind::Expand:
  case OpKind::Reshape:
  case OpKind::Communication:
    return true;
  default:
    return false;
  }
}

const char *blockKindName(BlockKind k) {
  switch (k) {
  case BlockKind::KernelMath:
    return "kernel_math";
  case BlockKind::Kernel:
    return "kernel";
  case BlockKind::TransformsOnly:
    return "transforms";
  case BlockKind::HostIr:
    return "host_ir";
  case BlockKind::SegmentedFusion:
    return "segmented_fusion";
  case BlockKind::Json:
    return "json";
  }
  return "?";
}

std::string Expr::attr(const std::string &key) const {
  for (const auto &[k, v] : attrs)
    if (k == key)
      return v;
  return {};
}

/// A host IR communication that reduces (its values are a sum).
bool isReducingCommunication(const Expr &e) {
  if (e.kind != OpKind::Communication || !e.communication)
    return false;
  return isReductionCollective(e.communication->type);
}

bool isReductionOp(const Expr &e) {
  return e.kind == OpKind::Reduction || e.kind == OpKind::Matmul || e.kind == OpKind::Linear ||
         isReducingCommunication(e);
}

bool isPaddedCommunication(const Expr &e) {
  return e.kind == OpKind::Communication && e.attr(kPaddedAttr) == "true";
}

std::optional<ReduceOp> reduceOpOf(const Expr &e) {
  // nvFuser's reducing communications sum (its default reduction op); one
  // read from elsewhere (a DTensor collective) may name its operator.
  if (isReducingCommunication(e) && e.attr(kCommunicationOpAttr).empty())
    return ReduceOp::Sum;
  if (e.kind == OpKind::Matmul || e.kind == OpKind::Linear)
    return ReduceOp::Sum;
  if (e.kind != OpKind::Reduction && !isReducingCommunication(e))
    return std::nullopt;
  std::string op = e.attr("op");
  if (op == "add")
    return ReduceOp::Sum;
  if (op == "mul")
    return ReduceOp::Prod;
  if (op == "max")
    return ReduceOp::Max;
  if (op == "min")
    return ReduceOp::Min;
  return std::nullopt;
}

std::string reductionOperatorOf(const Expr &e) {
  std::optional<ReduceOp> op = reduceOpOf(e);
  return op ? reduceOpName(*op) : "";
}

std::optional<bool> initialValueIsIdentity(const Expr &e) {
  std::string text = e.attr("initial value");
  if (text.empty())
    return true;
  std::optional<double> read = scalarValue(text, {});
  if (!read)
    return std::nullopt;
  double v = *read;
  std::optional<ReduceOp> op = reduceOpOf(e);
  if (!op)
    return std::nullopt;
  return v == reduceIdentity(*op);
}

std::vector<TensorNum> Expr::tensorInputs() const {
  std::vector<TensorNum> r;
  for (const auto &o : inputs)
    if (o.tensor)
      r.push_back(*o.tensor);
  return r;
}

IterDomain &Fusion::addIterDomain(IterDomain d) {
  SC_ASSERT(!hasId(d.number), "IterDomain " + std::to_string(d.number) + " added twice");
  // Derived from the transforms, which addTransform records (a copied ID
  // arrives with its old fusion's).
  d.definition.reset();
  d.uses.clear();
  IdNum n = d.number;
  return ids.emplace(n, std::move(d)).first->second;
}

size_t Fusion::addTransform(Transform t) {
  for (IdNum in : t.inputs)
    SC_ASSERT(hasId(in), "transform input " + std::to_string(in) + " unknown");
  size_t index = transforms.size();
  for (IdNum in : t.inputs)
    id(in).uses.push_back(index);
  for (IdNum out : t.outputs) {
    SC_ASSERT(hasId(out), "transform output " + std::to_string(out) + " unknown");
    SC_ASSERT(!id(out).definition, "IterDomain " + std::to_string(out) + " defined twice");
    id(out).definition = index;
  }
  transforms.push_back(std::move(t));
  return index;
}

TensorView &Fusion::addTensor(TensorView tv) {
  SC_ASSERT(!hasTensor(tv.number), tv.name() + " added twice");
  for (const auto *dom : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
    for (IdNum n : *dom)
      SC_ASSERT(hasId(n), tv.name() + " refers to unknown IterDomain " + std::to_string(n));
  TensorNum n = tv.number;
  return tensors.emplace(n, std::move(tv)).first->second;
}

size_t Fusion::addExpr(Expr e) {
  for (const auto &o : e.inputs)
    if (o.tensor)
      SC_ASSERT(hasTensor(*o.tensor), "expr operand T" + std::to_string(*o.tensor) + " unknown");
  for (TensorNum t : e.outputs)
    SC_ASSERT(hasTensor(t), "expr output T" + std::to_string(t) + " unknown");
  exprs.push_back(std::move(e));
  return exprs.size() - 1;
}

const IterDomain &Fusion::id(IdNum n) const {
  auto it = ids.find(n);
  SC_ASSERT(it != ids.end(), "unknown IterDomain " + std::to_string(n));
  return it->second;
}

IterDomain &Fusion::id(IdNum n) {
  auto it = ids.find(n);
  SC_ASSERT(it != ids.end(), "unknown IterDomain " + std::to_string(n));
  return it->second;
}

const TensorView &Fusion::tensor(TensorNum n) const {
  auto it = tensors.find(n);
  SC_ASSERT(it != tensors.end(), "unknown tensor T" + std::to_string(n));
  return it->second;
}

TensorView &Fusion::tensor(TensorNum n) {
  auto it = tensors.find(n);
  SC_ASSERT(it != tensors.end(), "unknown tensor T" + std::to_string(n));
  return it->second;
}

const Transform *Fusion::definition(IdNum n) const {
  const auto &d = id(n);
  return d.definition ? &transforms[*d.definition] : nullptr;
}

const Expr *Fusion::producerExpr(TensorNum n) const {
  const Expr *found = nullptr;
  for (const auto &e : exprs)
    for (TensorNum o : e.outputs)
      if (o == n)
        found = &e;
  return found;
}

std::string Fusion::tensorStr(TensorNum n) const {
  const auto &tv = tensor(n);
  std::string s = tv.name() + "_" + memoryTypeName(tv.memory);
  if (tv.dtype != DataType::Unknown)
    s += std::string("_") + dataTypeName(tv.dtype);
  s += "[";
  for (size_t i = 0; i < tv.loop.size(); ++i) {
    if (i > 0)
      s += ", ";
    s += id(tv.loop[i]).str();
  }
  s += "]";
  if (tv.caPos)
    s += " ca_pos( " + std::to_string(*tv.caPos) + " )";
  if (tv.producePos)
    s += " produce_pos( " + std::to_string(*tv.producePos) + " )";
  if (tv.mesh && tv.mesh->size() > 0) // nvFuser prints no empty mesh either
    s += " (" + tv.mesh->str() + ")";
  return s;
}

} // namespace shardcheck
