// Concrete model of one tensor by enumeration; see ConcreteTensor.h and
// docs/semantics.md ("Elements, indices, extents", "Ownership", "Local buffer
// layout"), which this file follows line by line.
#include "checker/bruteforce/ConcreteTensor.h"

#include "ir/FusionGraph.h"

#include <algorithm>

namespace shardcheck::bruteforce {

namespace {

// A definition chain longer than this can only be a cycle in malformed input.
constexpr int kMaxDerivationDepth = 1000;

std::set<IdNum> toSet(const std::vector<IdNum> &ids) {
  return {ids.begin(), ids.end()};
}

std::string joinInts(const std::vector<int64_t> &values, const char *sep) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? sep : "") + std::to_string(values[i]);
  return s;
}

bool isSupportedIterType(IterType t) {
  return t == IterType::Iteration || t == IterType::Broadcast || t == IterType::Reduction;
}

// Written without `a + b - 1`, which could overflow for huge bound extents.
int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}

} // namespace

std::vector<int64_t> fusionDevices(const Fusion &fusion) {
  std::set<int64_t> all;
  for (const auto &[n, tv] : fusion.tensors)
    if (tv.mesh)
      all.insert(tv.mesh->devices().begin(), tv.mesh->devices().end());
  return {all.begin(), all.end()};
}

std::variant<ConcreteTensor, BruteResult> ConcreteTensor::build(const Fusion &fusion,
                                                                TensorNum tensor,
                                                                const Bindings &bindings,
                                                                ElementBasis basis) {
  try {
    return ConcreteTensor(fusion, tensor, bindings, basis);
  } catch (const Stop &stop) {
    if (stop.outcome == BruteOutcome::InvalidBindings)
      return BruteResult::invalidBindings(stop.reason);
    return BruteResult::unsupported(stop.reason);
  }
}

ConcreteTensor::ConcreteTensor(const Fusion &fusion, TensorNum tensor, const Bindings &bindings,
                               ElementBasis basis)
    : fusion_(&fusion), number_(tensor), name_(fusion.tensor(tensor).name()), bindings_(bindings),
      basis_(basis) {
  checkIterTypes();
  computeExtents();
  chooseElementIds();
  findShardingIds();
  findDevices();
  chooseLayout();
  enumerateElements();
  buildBuffers();
}

std::string ConcreteTensor::idStr(IdNum id) const {
  return fusion_->id(id).str();
}

void ConcreteTensor::checkIterTypes() const {
  const auto &tv = fusion_->tensor(number_);
  for (const auto *domain : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
    for (IdNum id : *domain)
      if (!isSupportedIterType(fusion_->id(id).iterType))
        stopUnsupported(idStr(id) + " of " + name_ + " has an iter type (`" +
                        iterTypeLetter(fusion_->id(id).iterType) +
                        "`) the semantics do not define");
}

// --- Extents. ---

ConcreteTensor::ExtentValue ConcreteTensor::evaluateExtent(const Extent &e,
                                                           const std::string &what) const {
  auto symbols = e.symbols();
  for (const auto &s : symbols) {
    auto it = bindings_.find(s);
    if (it == bindings_.end())
      stopInvalidBindings("symbol " + s + " (in the " + what + ") is unbound");
    if (it->second < 1)
      stopInvalidBindings("symbol " + s + " is bound to " + std::to_string(it->second) +
                          ", but every symbol must be >= 1");
  }
  auto value = e.evaluate(bindings_);
  if (!value)
    stopInvalidBindings("the " + what + " `" + e.str() + "` divides by zero under the bindings");
  if (*value < 0)
    stopInvalidBindings("the " + what + " `" + e.str() + "` is negative under the bindings");
  return {*value, !symbols.empty()};
}

ConcreteTensor::ExtentValue ConcreteTensor::baseExtent(IdNum id) const {
  const auto &d = fusion_->id(id);
  if (d.isBroadcast()) // Expanded or not, a broadcast has extent 1.
    return {1, false};
  return evaluateExtent(d.extent, "extent of " + idStr(id) + " of " + name_);
}

void ConcreteTensor::checkImpliedConstraint(const Transform &split, ExtentValue in,
                                            ExtentValue factor) const {
  const auto &outer = fusion_->id(split.outputs[0]);
  if (!outer.isDeviceParallel() || fusion_->id(split.inputs[0]).isBroadcast())
    return;
  // A constant uneven device split is a fact of the fusion (padding, uneven
  // counts), not a constraint on bindings.
  if (!in.symbolic && !factor.symbolic)
    return;
  if (in.value % factor.value != 0)
    stopInvalidBindings("the bindings violate the implied constraint that the device split of " +
                        idStr(split.inputs[0]) + " of " + name_ + " by " + split.factor.str() +
                        " divides evenly (" + std::to_string(in.value) + " mod " +
                        std::to_string(factor.value) + " != 0)");
}

ConcreteTensor::ExtentValue ConcreteTensor::deriveExtent(IdNum id,
                                                         std::map<IdNum, ExtentValue> &known,
                                                         const std::string &fromName, int depth) {
  if (auto it = known.find(id); it != known.end())
    return it->second;
  const Transform *def = fusion_->definition(id);
  if (!def)
    stopUnsupported(idStr(id) + " of " + name_ + " is not derived from its " + fromName +
                    " domain");
  if (depth > kMaxDerivationDepth)
    stopUnsupported("the transforms of " + name_ + " are too deep (a cycle?)");
  switch (def->kind) {
  case Transform::Kind::Split: {
    ExtentValue in = deriveExtent(def->inputs[0], known, fromName, depth + 1);
    ExtentValue factor =
        evaluateExtent(def->factor, "split factor of " + idStr(def->inputs[0]) + " of " + name_);
    if (factor.value < 1)
      stopInvalidBindings("the split factor " + def->factor.str() + " of " + name_ +
                          " is not positive under the bindings");
    checkImpliedConstraint(*def, in, factor);
    if (def->chunked)
      checkChunkedSplit(*def, in, factor, fromName);
    // The factor output's extent is the factor itself: it depends on a
    // symbol only when the factor does.
    ExtentValue rest{ceilDiv(in.value, factor.value), in.symbolic || factor.symbolic};
    known[def->outputs[0]] = def->innerSplit ? rest : factor;
    known[def->outputs[1]] = def->innerSplit ? factor : rest;
    break;
  }
  case Transform::Kind::Merge: {
    ExtentValue a = deriveExtent(def->inputs[0], known, fromName, depth + 1);
    ExtentValue b = deriveExtent(def->inputs[1], known, fromName, depth + 1);
    auto product = checkedMul(a.value, b.value);
    if (!product)
      stopUnsupported("the extent of " + idStr(id) + " of " + name_ + " overflows");
    known[def->outputs[0]] = {*product, a.symbolic || b.symbolic};
    break;
  }
  default:
    stopUnsupported(name_ + " uses a " + transformKindName(def->kind) + " (defining " + idStr(id) +
                    "), which the semantics do not define");
  }
  return known.at(id);
}

void ConcreteTensor::checkChunkedSplit(const Transform &split, const ExtentValue &in,
                                       const ExtentValue &factor,
                                       const std::string &fromName) const {
  if (fromName != "logical")
    stopUnsupported(name_ + " has a chunked split between its root and logical domains");
  if (in.symbolic || factor.symbolic)
    stopUnsupported(name_ + " has a chunked split of symbolic extent (constant extents only)");
  const auto &logical = fusion_->tensor(number_).logical;
  IdNum cur = split.inputs[0];
  for (int depth = 0; !std::count(logical.begin(), logical.end(), cur); ++depth) {
    const Transform *def = fusion_->definition(cur);
    if (depth > kMaxDerivationDepth || !def || def->kind != Transform::Kind::Split ||
        def->innerSplit || def->outputs[1] != cur)
      stopUnsupported(name_ + " has a chunked split of " + idStr(split.inputs[0]) +
                      ", which is not reached from a logical ID through outer splits' inner "
                      "outputs");
    cur = def->inputs[0];
  }
}

int64_t ConcreteTensor::validLength(IdNum id, std::map<IdNum, int64_t> &known) const {
  const auto &logical = fusion_->tensor(number_).logical;
  if (std::count(logical.begin(), logical.end(), id))
    return extents_.at(id).value;
  const Transform *def = fusion_->definition(id);
  int64_t length = validLength(def->inputs[0], known);
  int64_t chunk = def->chunked ? ceilDiv(length, extents_.at(def->outputs[0]).value)
                               : extents_.at(def->outputs[1]).value;
  int64_t outer = evaluateIndex(def->outputs[0], known);
  return std::clamp(length - outer * chunk, int64_t{0}, chunk);
}

void ConcreteTensor::computeExtents() {
  const auto &tv = fusion_->tensor(number_);
  const auto &base = tv.hasRoot() ? tv.root : tv.logical;
  std::map<IdNum, ExtentValue> known;
  for (IdNum id : base)
    known[id] = baseExtent(id);
  if (tv.hasRoot()) {
    for (IdNum id : tv.logical)
      deriveExtent(id, known, "root", 0);
  }
  extents_ = known;
  // Loop and allocation IDs derive from logical (not from root directly).
  std::map<IdNum, ExtentValue> fromLogical;
  for (IdNum id : tv.logical)
    fromLogical[id] = known.at(id);
  for (const auto *domain : {&tv.loop, &tv.allocation})
    for (IdNum id : *domain)
      deriveExtent(id, fromLogical, "logical", 0);
  extents_.insert(fromLogical.begin(), fromLogical.end());
}

std::optional<int64_t> ConcreteTensor::extentOf(IdNum id) const {
  auto it = extents_.find(id);
  if (it == extents_.end())
    return std::nullopt;
  return it->second.value;
}

// --- Elements. ---

void ConcreteTensor::requireDerived(IdNum id, const std::set<IdNum> &base,
                                    const std::set<IdNum> &stops,
                                    const std::string &fromName) const {
  // Iterative walk over the definition DAG, bounded against cycles.
  std::vector<IdNum> pending{id};
  int steps = 0;
  while (!pending.empty()) {
    IdNum n = pending.back();
    pending.pop_back();
    if (base.count(n))
      continue;
    if (++steps > kMaxDerivationDepth)
      stopUnsupported("the transforms of " + name_ + " are too deep (a cycle?)");
    if (stops.count(n))
      stopUnsupported(idStr(id) + " of " + name_ + " depends on " + idStr(n) +
                      ", which is not a data axis");
    const Transform *def = fusion_->definition(n);
    if (!def)
      stopUnsupported(idStr(id) + " of " + name_ + " is not derived from its " + fromName +
                      " domain");
    if (def->kind != Transform::Kind::Split && def->kind != Transform::Kind::Merge)
      stopUnsupported(name_ + " uses a " + std::string(transformKindName(def->kind)) +
                      " (defining " + idStr(n) + "), which the semantics do not define");
    pending.insert(pending.end(), def->inputs.begin(), def->inputs.end());
  }
}

void ConcreteTensor::chooseElementIds() {
  const auto &tv = fusion_->tensor(number_);
  logicalDataIds_ = dataLogicalIds(*fusion_, tv);
  bool byRoot = basis_ == ElementBasis::Root && tv.hasRoot();
  elementIds_.clear();
  for (IdNum id : byRoot ? tv.root : tv.logical)
    if (!fusion_->id(id).isReduction())
      elementIds_.push_back(id);
  elementCount_ = 1;
  for (IdNum id : elementIds_) {
    elementExtents_.push_back(extents_.at(id).value);
    auto product = checkedMul(elementCount_, elementExtents_.back());
    if (!product || *product > kWorkLimit)
      stopUnsupported(name_ + " is too large for brute force");
    elementCount_ = *product;
  }
  if (byRoot) // Each root data index gives one logical element.
    for (IdNum id : logicalDataIds_)
      requireDerived(id, toSet(elementIds_), toSet(tv.root), "root data");
}

Coords ConcreteTensor::coordsOf(int64_t element) const {
  Coords c(elementIds_.size());
  for (size_t i = elementIds_.size(); i-- > 0;) {
    c[i] = element % elementExtents_[i];
    element /= elementExtents_[i];
  }
  return c;
}

std::optional<int64_t> ConcreteTensor::elementAt(const Coords &coords) const {
  if (coords.size() != elementIds_.size())
    return std::nullopt;
  int64_t element = 0;
  for (size_t i = 0; i < coords.size(); ++i) {
    if (coords[i] < 0 || coords[i] >= elementExtents_[i])
      return std::nullopt;
    element = element * elementExtents_[i] + coords[i];
  }
  return element;
}

std::string ConcreteTensor::elementStr(int64_t element) const {
  return name_ + "[" + joinInts(coordsOf(element), ", ") + "]";
}

int64_t ConcreteTensor::evaluateIndex(IdNum id, std::map<IdNum, int64_t> &known) const {
  if (auto it = known.find(id); it != known.end())
    return it->second;
  const Transform *def = fusion_->definition(id);
  SC_ASSERT(def, "evaluateIndex of an underived ID (requireDerived should have refused it)");
  int64_t value = 0;
  if (def->kind == Transform::Kind::Split) {
    int64_t in = evaluateIndex(def->inputs[0], known);
    int64_t innerExtent = extents_.at(def->outputs[1]).value;
    if (def->chunked) // torch.chunk of the valid rows; an empty chunk is reached by no element.
      innerExtent = std::max<int64_t>(
          1, ceilDiv(validLength(def->inputs[0], known), extents_.at(def->outputs[0]).value));
    value = id == def->outputs[0] ? in / innerExtent : in % innerExtent;
  } else {
    SC_ASSERT(def->kind == Transform::Kind::Merge, "evaluateIndex through a non-Split/Merge");
    int64_t a = evaluateIndex(def->inputs[0], known);
    int64_t b = evaluateIndex(def->inputs[1], known);
    value = a * extents_.at(def->inputs[1]).value + b;
  }
  known[id] = value;
  return value;
}

std::map<IdNum, int64_t> ConcreteTensor::logicalValues(int64_t element) const {
  Coords coords = coordsOf(element);
  std::map<IdNum, int64_t> known;
  for (size_t i = 0; i < coords.size(); ++i)
    known[elementIds_[i]] = coords[i];
  if (elementIds_ == logicalDataIds_)
    return known;
  // Root basis: logical follows forward from root; later IDs then see only
  // logical values, so nothing can be derived from root behind logical's back.
  std::map<IdNum, int64_t> logical;
  for (IdNum id : logicalDataIds_)
    logical[id] = evaluateIndex(id, known);
  return logical;
}

std::optional<int64_t> ConcreteTensor::indexOf(int64_t element, IdNum id) const {
  const auto &tv = fusion_->tensor(number_);
  std::map<IdNum, int64_t> known = logicalValues(element);
  Coords coords = coordsOf(element);
  for (size_t i = 0; i < coords.size(); ++i)
    known[elementIds_[i]] = coords[i];
  std::set<IdNum> base;
  for (const auto &[n, v] : known)
    base.insert(n);
  std::set<IdNum> stops = toSet(tv.logical);
  stops.insert(tv.root.begin(), tv.root.end());
  try {
    requireDerived(id, base, stops, "logical");
  } catch (const Stop &) {
    return std::nullopt;
  }
  return evaluateIndex(id, known);
}

// --- Ownership. ---

void ConcreteTensor::findShardingIds() {
  const auto &tv = fusion_->tensor(number_);
  for (IdNum id : tv.loop) {
    const auto &d = fusion_->id(id);
    if (!d.isDeviceParallel() || d.isBroadcast() || d.isReduction())
      continue; // DIDs on broadcast and reduction IDs are vacuous.
    requireDerived(id, toSet(logicalDataIds_), toSet(tv.logical), "logical");
    shardingIds_.push_back(id);
    shardingTypes_.push_back(d.parallel);
  }
}

void ConcreteTensor::findDevices() {
  const auto &tv = fusion_->tensor(number_);
  if (!tv.mesh) {
    if (!shardingIds_.empty())
      stopUnsupported(name_ + " is sharded (" + idStr(shardingIds_[0]) + ") but has no mesh");
    devices_ = fusionDevices(*fusion_);
  } else {
    const DeviceMesh &mesh = *tv.mesh;
    std::set<int64_t> distinct(mesh.devices().begin(), mesh.devices().end());
    if (distinct.size() != mesh.devices().size())
      stopUnsupported("the mesh of " + name_ + " (" + mesh.str() + ") repeats a device id");
    devices_.assign(distinct.begin(), distinct.end());
    for (size_t j = 0; j < shardingIds_.size(); ++j)
      if (!mesh.axisOf(shardingTypes_[j]))
        stopUnsupported(name_ + " is sharded on " + parallelTypeShortName(shardingTypes_[j]) +
                        " (" + idStr(shardingIds_[j]) + ") but its mesh " + mesh.str() +
                        " has no axis for it");
    // Implied constraint: a DID extent that depends on a symbol (as derived,
    // whatever the dump printed) equals the mesh size along its axis
    // (docs/semantics.md).
    for (size_t j = 0; j < shardingIds_.size(); ++j) {
      const auto &d = fusion_->id(shardingIds_[j]);
      auto e = extentOf(shardingIds_[j]);
      auto derived = extents_.find(shardingIds_[j]);
      bool symbolic = derived != extents_.end() && derived->second.symbolic;
      if (symbolic && e && *e != mesh.extentOf(shardingTypes_[j]))
        stopInvalidBindings("the bindings violate the implied constraint that " + idStr(d.number) +
                            " of " + name_ + " spans the " +
                            std::to_string(mesh.extentOf(shardingTypes_[j])) + " devices of " +
                            mesh.str() + " along its axis");
    }
    for (int64_t d : devices_)
      for (ParallelType p : shardingTypes_)
        deviceCoords_[d].push_back(mesh.coordinate(d, p));
  }
  auto work = checkedMul(elementCount_, std::max<int64_t>(1, devices_.size()));
  if (!work || *work > kWorkLimit)
    stopUnsupported(name_ + " is too large for brute force");
  for (int64_t d : devices_)
    deviceCoords_.try_emplace(d); // Replicated tensors: no coordinates to match.
}

bool ConcreteTensor::holds(int64_t device, int64_t element) const {
  auto it = deviceCoords_.find(device);
  return it != deviceCoords_.end() && shardingIndex_[element] == it->second;
}

std::vector<int64_t> ConcreteTensor::holders(int64_t element) const {
  std::vector<int64_t> r;
  for (int64_t d : devices_)
    if (holds(d, element))
      r.push_back(d);
  return r;
}

const std::vector<int64_t> &ConcreteTensor::heldBy(int64_t device) const {
  static const std::vector<int64_t> kNone;
  auto it = held_.find(device);
  return it == held_.end() ? kNone : it->second;
}

// --- Layout. ---

void ConcreteTensor::chooseLayout() {
  const auto &tv = fusion_->tensor(number_);
  if (tv.hasAllocation()) {
    layoutIds_ = tv.allocation;
  } else {
    // Logical data IDs, each DID-split one replaced by its local (inner)
    // part, and that part by its own local part while a nested sharding
    // cuts it again. Every pass descends one split, so at most one pass per
    // sharding ID finds something.
    for (IdNum logicalId : logicalDataIds_) {
      IdNum chosen = logicalId;
      for (size_t pass = 0; pass < shardingIds_.size(); ++pass) {
        IdNum before = chosen;
        for (IdNum s : shardingIds_) {
          const Transform *def = fusion_->definition(s);
          if (def && def->kind == Transform::Kind::Split && def->outputs[0] == s &&
              def->inputs[0] == chosen) {
            chosen = def->outputs[1];
            break;
          }
        }
        if (chosen == before)
          break;
      }
      layoutIds_.push_back(chosen);
    }
  }
  for (IdNum id : layoutIds_) {
    const auto &d = fusion_->id(id);
    bool trivial = d.isDeviceParallel() || d.isBroadcast() || d.isReduction();
    layoutTrivial_.push_back(trivial);
    layoutExtents_.push_back(trivial ? 1 : extents_.at(id).value);
    if (trivial || layoutError_)
      continue;
    try {
      requireDerived(id, toSet(logicalDataIds_), toSet(tv.logical), "logical");
    } catch (const Stop &stop) {
      layoutError_ =
          "the layout of " + name_ + " is not a function of its elements: " + stop.reason;
    }
  }
}

void ConcreteTensor::enumerateElements() {
  logical_.resize(elementCount_);
  shardingIndex_.resize(elementCount_);
  offset_.assign(elementCount_, 0);
  for (int64_t e = 0; e < elementCount_; ++e) {
    std::map<IdNum, int64_t> known = logicalValues(e);
    for (IdNum id : logicalDataIds_)
      logical_[e].push_back(known.at(id));
    for (IdNum id : shardingIds_)
      shardingIndex_[e].push_back(evaluateIndex(id, known));
    if (layoutError_)
      continue;
    // Row-major offset over the layout IDs (Horner), overflow-checked.
    int64_t offset = 0;
    for (size_t i = 0; i < layoutIds_.size() && !layoutError_; ++i) {
      int64_t index = layoutTrivial_[i] ? 0 : evaluateIndex(layoutIds_[i], known);
      auto scaled = checkedMul(offset, layoutExtents_[i]);
      auto next = scaled ? checkedAdd(*scaled, index) : std::nullopt;
      if (!next)
        layoutError_ = "the layout of " + name_ + " overflows 64-bit offsets";
      else
        offset = *next;
    }
    offset_[e] = offset;
  }
}

void ConcreteTensor::buildBuffers() {
  for (int64_t d : devices_) {
    auto &held = held_[d];
    for (int64_t e = 0; e < elementCount_; ++e)
      if (holds(d, e))
        held.push_back(e);
    if (layoutError_)
      continue;
    auto &buffer = buffers_[d];
    for (int64_t e : held)
      buffer.push_back({offset_[e], e});
    std::stable_sort(buffer.begin(), buffer.end(),
                     [](const BufferSlot &a, const BufferSlot &b) { return a.offset < b.offset; });
    for (size_t i = 1; i < buffer.size() && !layoutError_; ++i)
      if (buffer[i].offset == buffer[i - 1].offset)
        layoutError_ = "the layout of " + name_ + " puts " + elementStr(buffer[i - 1].element) +
                       " and " + elementStr(buffer[i].element) + " at offset " +
                       std::to_string(buffer[i].offset) + " on device " + std::to_string(d);
  }
  if (layoutError_)
    buffers_.clear();
}

int64_t ConcreteTensor::offsetOf(int64_t element) const {
  SC_ASSERT(!layoutError_, "offsetOf with an unsupported layout");
  return offset_[element];
}

const std::vector<BufferSlot> &ConcreteTensor::buffer(int64_t device) const {
  SC_ASSERT(!layoutError_, "buffer with an unsupported layout");
  static const std::vector<BufferSlot> kEmpty;
  auto it = buffers_.find(device);
  return it == buffers_.end() ? kEmpty : it->second;
}

std::optional<int64_t> ConcreteTensor::elementAtOffset(int64_t device, int64_t offset) const {
  const auto &b = buffer(device);
  auto it = std::lower_bound(b.begin(), b.end(), offset,
                             [](const BufferSlot &s, int64_t o) { return s.offset < o; });
  if (it == b.end() || it->offset != offset)
    return std::nullopt;
  return it->element;
}

} // namespace shardcheck::bruteforce
