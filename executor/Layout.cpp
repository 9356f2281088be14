// TensorLayout: ownership and local buffer layout at concrete sizes; see Layout.h.
//
// Written from docs/semantics.md alone ("Index functions", "Ownership",
// "Local buffer layout"), deliberately without looking at the checker's
// encodings, so that it is an independent reading of the rules.
//
// Structure: TensorLayoutBuilder compiles the tensor's transforms into small
// index programs over dense registers (one register per IterDomain involved):
// the forward program computes, from an element's logical indices, the index
// of every sharding ID and every layout ID; the backward program (tensors
// whose root differs from logical) recovers root indices from logical ones.
// Extents of derived IDs come from the semantics' formulas, not from what the
// dump printed, so a misprinted extent cannot change the layout.
//
// Devices that hold the same elements (same coordinates on every mesh axis a
// sharding ID uses) share one group and one buffer, so per-element state is
// a slot and a group whatever the replication: building is one pass over the
// elements, each running the forward program once.
#include "executor/Layout.h"

#include "ir/FusionGraph.h"
#include "util/Checked.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

namespace shardcheck {

namespace {

std::string indexStr(const std::vector<int64_t> &index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

int64_t product(const std::vector<int64_t> &extents) {
  int64_t n = 1;
  for (int64_t e : extents)
    n = mulOrThrow(n, e, "a layout's element count");
  return n;
}

/// Row-major strides of `extents`.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &extents) {
  std::vector<int64_t> strides(extents.size(), 1);
  for (size_t i = extents.size(); i-- > 1;)
    strides[i - 1] = mulOrThrow(strides[i], extents[i], "a layout's stride");
  return strides;
}

/// For a >= 0, b > 0; never forms a + b - 1, which can overflow.
int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}

/// Whether a layout ID contributes extent 1 and index 0 to the buffer.
bool isTrivialLayoutId(const IterDomain &id) {
  return id.isDeviceParallel() || id.isBroadcast() || id.isReduction();
}

/// A sharding ID: a non-broadcast, non-reduction loop ID with a DID.
bool isShardingId(const IterDomain &id) {
  return id.isDeviceParallel() && !id.isBroadcast() && !id.isReduction();
}

} // namespace

/// Builds one TensorLayout (a friend of it). Each method is one step of the
/// semantics; errors are InputErrors located at the tensor.
class TensorLayoutBuilder {
public:
  TensorLayoutBuilder(const Fusion &fusion, TensorNum t, const Bindings &symbols)
      : fusion_(fusion), tv_(fusion.tensor(t)), symbols_(symbols),
        loop_(tv_.loop.empty() ? tv_.logical : tv_.loop) {
    logical_.insert(tv_.logical.begin(), tv_.logical.end());
    root_.insert(tv_.root.begin(), tv_.root.end());
    out_.tensor_ = t;
  }

  TensorLayout build(const std::vector<int64_t> &meshlessDevices) {
    out_.shape_ = referenceShape(fusion_, tv_.number, symbols_);
    checkDerivedFromLogical();
    assignDevices(meshlessDevices);
    planLayout();
    placeElements();
    planRootIndex();
    return std::move(out_);
  }

private:
  /// A sharding ID as the key of an element's holders: its index register,
  /// the mesh extent along its axis (an index past it is held by nobody) and
  /// its weight in the group key.
  struct KeyDigit {
    int reg = 0;
    int64_t radix = 1;
    int64_t stride = 1;
  };

  [[noreturn]] void fail(const std::string &code, const std::string &message) const {
    throwInputError(code, tv_.name() + ": " + message, tv_.loc);
  }

  const IterDomain &id(IdNum n) const { return fusion_.id(n); }

  int64_t evaluate(const Extent &extent, const std::string &what) const {
    auto value = extent.evaluate(symbols_);
    if (!value) {
      for (const auto &s : extent.symbols())
        if (!symbols_.count(s))
          fail("unbound-symbol", what + " `" + extent.str() + "` needs a value for `" + s + "`");
      fail("invalid-extent", what + " `" + extent.str() + "` divides by zero");
    }
    if (*value < 0)
      fail("invalid-extent", what + " `" + extent.str() + "` is " + std::to_string(*value));
    return *value;
  }

  // --- Extents and registers ---------------------------------------------------

  /// An ID's extent: printed for root, logical and undefined IDs (1 for a
  /// broadcast, expanded or not), else from its definition's formula.
  int64_t extentOf(IdNum n) {
    auto it = extents_.find(n);
    if (it != extents_.end())
      return it->second;
    const Transform *def = fusion_.definition(n);
    if (logical_.count(n) || root_.count(n) || !def) {
      int64_t e = id(n).isBroadcast() ? 1 : evaluate(id(n).extent, "extent of " + id(n).str());
      return extents_[n] = e;
    }
    std::vector<int64_t> outs = outputExtents(*def);
    int64_t e = 0;
    for (size_t i = 0; i < def->outputs.size(); ++i) {
      if (def->outputs[i] == n)
        e = outs[i];
      if (!logical_.count(def->outputs[i]) && !root_.count(def->outputs[i]))
        extents_[def->outputs[i]] = outs[i];
    }
    return e;
  }

  /// The extents of a split's or merge's outputs from its inputs'
  /// (docs/semantics.md "Index functions").
  std::vector<int64_t> outputExtents(const Transform &t) {
    requireSplitOrMerge(t, t.outputs.front());
    if (t.kind == Transform::Kind::Merge)
      return {mulOrThrow(extentOf(t.inputs[0]), extentOf(t.inputs[1]), "a merge's extent")};
    int64_t in = extentOf(t.inputs[0]);
    int64_t factor = evaluate(t.factor, "split factor");
    if (factor < 1)
      fail("invalid-extent", "split factor `" + t.factor.str() + "` is " + std::to_string(factor));
    return t.innerSplit ? std::vector<int64_t>{ceilDiv(in, factor), factor}
                        : std::vector<int64_t>{factor, ceilDiv(in, factor)};
  }

  void requireSplitOrMerge(const Transform &t, IdNum output) const {
    if (t.kind != Transform::Kind::Split && t.kind != Transform::Kind::Merge)
      fail("unsupported-layout", std::string("the index of ") + id(output).str() +
                                     " is not a function of the logical indices (it comes from "
                                     "a " +
                                     transformKindName(t.kind) + ")");
  }

  /// The dense register of an ID's index.
  int reg(IdNum n) {
    auto [it, added] = regs_.emplace(n, static_cast<int>(regs_.size()));
    return it->second;
  }

  // --- Forward from logical ----------------------------------------------------

  /// Every loop and allocation ID must be a function of the logical indices
  /// through splits and merges (checked for all of them, used or not).
  void checkDerivedFromLogical() {
    std::set<IdNum> seen;
    for (const auto *domain : {&loop_, &tv_.allocation})
      for (IdNum n : *domain)
        checkDerived(n, seen);
  }

  void checkDerived(IdNum n, std::set<IdNum> &seen) {
    if (logical_.count(n) || !seen.insert(n).second)
      return;
    const Transform *def = fusion_.definition(n);
    if (!def)
      fail("unsupported-layout", id(n).str() + " is not derived from the logical domain");
    requireSplitOrMerge(*def, n);
    for (IdNum in : def->inputs)
      checkDerived(in, seen);
  }

  /// Appends the steps computing ID `n` forward from logical, inputs first.
  void emitForward(IdNum n) {
    if (logical_.count(n) || computed_.count(n))
      return;
    const Transform *def = fusion_.definition(n);
    SC_ASSERT(def, "checkDerivedFromLogical let an underived ID through");
    for (IdNum in : def->inputs)
      emitForward(in);
    forward_.push_back(stepOf(*def));
    stepComputing_[def->outputs.back()] = forward_.size() - 1;
    computed_.insert(def->outputs.begin(), def->outputs.end());
    if (def->chunked)
      linkChunkedStep(*def);
  }

  // --- Chunked splits (valid lengths) ------------------------------------------

  /// Gives the chunked split's step its input's valid length.
  void linkChunkedStep(const Transform &t) {
    auto factor = t.factor.asConstant();
    if (!factor || *factor < 1)
      fail("unsupported-layout", "the chunked split of " + id(t.inputs[0]).str() +
                                     " needs a constant positive factor, not `" + t.factor.str() +
                                     "`");
    size_t step = stepComputing_.at(t.outputs.back());
    forward_[step].chunked = true;
    forward_[step].factor = *factor;
    setLengthSource(step, t.inputs[0]);
  }

  /// Step `step` reads the valid length of `n`: a constant for a logical ID,
  /// else a register that the step computing `n` (an outer split's inner
  /// output) is made to write, recursively up to the logical ID.
  void setLengthSource(size_t step, IdNum n) {
    if (logical_.count(n)) {
      if (!id(n).extent.isConstant())
        fail("unsupported-layout", "a chunked split below the symbolic " + id(n).str() +
                                       " (chunked splits need constant extents)");
      forward_[step].lengthConst = extentOf(n);
      return;
    }
    const Transform *def = fusion_.definition(n);
    if (!def || def->kind != Transform::Kind::Split || def->innerSplit || def->outputs[1] != n ||
        !def->factor.isConstant())
      fail("unsupported-layout", "a chunked split below " + id(n).str() +
                                     ", which is not reached from a logical ID through outer "
                                     "splits' inner outputs by constant factors");
    size_t parent = stepComputing_.at(n);
    if (forward_[parent].lengthOut < 0) {
      forward_[parent].lengthOut = reg(-1 - n); // IDs are >= 0: a key of its own.
      setLengthSource(parent, def->inputs[0]);
    }
    forward_[step].lengthIn = forward_[parent].lengthOut;
  }

  TensorLayout::IndexStep stepOf(const Transform &t) {
    TensorLayout::IndexStep s;
    s.isSplit = t.kind == Transform::Kind::Split;
    s.in0 = reg(t.inputs[0]);
    s.out0 = reg(t.outputs[0]);
    if (s.isSplit) {
      s.out1 = reg(t.outputs[1]);
      s.extent = extentOf(t.outputs[1]);
    } else {
      s.in1 = reg(t.inputs[1]);
      s.extent = extentOf(t.inputs[1]);
    }
    return s;
  }

  // --- Ownership ---------------------------------------------------------------

  /// devices_, the groups and the key that maps an element to its group.
  void assignDevices(const std::vector<int64_t> &meshlessDevices) {
    std::vector<IdNum> sharding;
    for (IdNum n : loop_)
      if (isShardingId(id(n)))
        sharding.push_back(n);
    if (!tv_.mesh) {
      if (!sharding.empty())
        fail("did-without-mesh",
             id(sharding.front()).str() + " is device-parallel but " + tv_.name() + " has no mesh");
      std::set<int64_t> devices(meshlessDevices.begin(), meshlessDevices.end());
      out_.devices_.assign(devices.begin(), devices.end());
      groupKeys_.assign(1, -1);
      for (size_t i = 0; i < out_.devices_.size(); ++i)
        out_.deviceGroup_.push_back(groupFor(0));
      return;
    }
    assignMeshDevices(*tv_.mesh, sharding);
  }

  void assignMeshDevices(const DeviceMesh &mesh, const std::vector<IdNum> &sharding) {
    std::vector<int> axes;
    int64_t keys = 1;
    for (IdNum n : sharding) {
      auto axis = mesh.axisOf(id(n).parallel);
      if (!axis)
        fail("did-not-in-mesh",
             id(n).str() + " is parallelized on a device type " + mesh.str() + " has no axis for");
      emitForward(n);
      axes.push_back(*axis);
      digits_.push_back({reg(n), mesh.shape()[*axis], 1});
      keys = mulOrThrow(keys, mesh.shape()[*axis], "the device count of " + mesh.str());
    }
    for (size_t k = digits_.size(); k-- > 1;)
      digits_[k - 1].stride = digits_[k].stride * digits_[k].radix;
    std::set<int64_t> devices(mesh.devices().begin(), mesh.devices().end());
    if (static_cast<int64_t>(devices.size()) != mesh.size())
      fail("mesh-duplicate-device", mesh.str() + " lists a device twice");
    out_.devices_.assign(devices.begin(), devices.end());
    groupKeys_.assign(static_cast<size_t>(keys), -1);
    for (int64_t d : out_.devices_) {
      std::vector<int64_t> coords = mesh.coordinates(d);
      int64_t key = 0;
      for (size_t k = 0; k < digits_.size(); ++k)
        key += coords[axes[k]] * digits_[k].stride;
      out_.deviceGroup_.push_back(groupFor(key));
    }
  }

  /// The group of the devices with group key `key`, made on first use.
  int groupFor(int64_t key) {
    int &g = groupKeys_[static_cast<size_t>(key)];
    if (g < 0) {
      g = static_cast<int>(out_.groups_.size());
      out_.groups_.emplace_back();
    }
    return g;
  }

  /// The group holding the element whose indices are in `v`, or -1.
  int groupOfElement(const std::vector<int64_t> &v) const {
    int64_t key = 0;
    for (const KeyDigit &k : digits_) {
      int64_t index = v[k.reg];
      if (index >= k.radix) // No device has that coordinate.
        return -1;
      key += index * k.stride;
    }
    return groupKeys_[static_cast<size_t>(key)];
  }

  // --- Local buffer layout -----------------------------------------------------

  /// The layout IDs: allocation IDs, else logical data IDs with each
  /// device-split input replaced by the split's inner output, repeatedly:
  /// a nested sharding splits that inner output again, and the layout ID is
  /// the innermost part. Walked down from each logical ID, so the order of
  /// the loop domain does not matter.
  std::vector<IdNum> layoutIds() const {
    if (tv_.hasAllocation())
      return tv_.allocation;
    std::map<IdNum, IdNum> localPartOf; // Device-split input -> inner output.
    for (IdNum n : loop_) {
      const Transform *def = fusion_.definition(n);
      if (isShardingId(id(n)) && def && def->kind == Transform::Kind::Split && def->outputs[0] == n)
        localPartOf.emplace(def->inputs[0], def->outputs[1]);
    }
    std::vector<IdNum> ids = dataLogicalIds(fusion_, tv_);
    for (IdNum &n : ids) // At most one step per split: no cycle can hold us.
      for (size_t step = 0; step < localPartOf.size() && localPartOf.count(n); ++step)
        n = localPartOf.at(n);
    return ids;
  }

  void planLayout() {
    for (IdNum n : layoutIds()) {
      bool trivial = isTrivialLayoutId(id(n));
      if (!trivial)
        emitForward(n);
      out_.localShape_.push_back(trivial ? 1 : extentOf(n));
      layoutRegs_.push_back(trivial ? -1 : reg(n));
    }
    layoutStrides_ = rowMajorStrides(out_.localShape_);
  }

  // --- Elements ----------------------------------------------------------------

  /// The register of each reference axis (-1 for a broadcast: index 0).
  std::vector<int> logicalRegs() {
    std::vector<int> regs;
    for (IdNum n : dataLogicalIds(fusion_, tv_))
      regs.push_back(id(n).isBroadcast() ? -1 : reg(n));
    return regs;
  }

  /// One pass over the named elements (broadcast indices 0): runs the
  /// forward program and records each element's slot and group.
  void placeElements() {
    out_.logicalRegs_ = logicalRegs();
    const std::vector<int64_t> &shape = out_.shape_;
    std::vector<int64_t> named = shape, strides = rowMajorStrides(shape);
    for (size_t k = 0; k < named.size(); ++k)
      if (out_.logicalRegs_[k] < 0)
        named[k] = 1;
    int64_t slotCount = product(out_.localShape_);
    for (auto &g : out_.groups_)
      g.slots.assign(static_cast<size_t>(slotCount), kNoElement);
    out_.elementSlot_.assign(static_cast<size_t>(product(shape)), -1);
    out_.elementGroup_.assign(out_.elementSlot_.size(), -1);
    std::vector<int64_t> v(regs_.size(), 0), index(shape.size(), 0);
    for (int64_t n = product(named); n > 0; --n) {
      int64_t element = 0;
      for (size_t k = 0; k < index.size(); ++k) {
        element += index[k] * strides[k];
        if (out_.logicalRegs_[k] >= 0)
          v[out_.logicalRegs_[k]] = index[k];
      }
      runForward(v);
      place(element, v);
      for (size_t k = index.size(); k-- > 0 && ++index[k] == named[k];)
        index[k] = 0;
    }
  }

  void runForward(std::vector<int64_t> &v) const {
    for (const TensorLayout::IndexStep &s : forward_) {
      if (!s.isSplit) {
        v[s.out0] = v[s.in0] * s.extent + v[s.in1];
        continue;
      }
      int64_t in = v[s.in0], chunk = s.extent;
      int64_t length = s.lengthIn >= 0 ? v[s.lengthIn] : s.lengthConst;
      if (s.chunked) // An empty chunk is reached by no element.
        chunk = std::max<int64_t>(1, ceilDiv(length, s.factor));
      v[s.out0] = chunk ? in / chunk : 0;
      v[s.out1] = chunk ? in % chunk : 0;
      if (s.lengthOut >= 0)
        v[s.lengthOut] = std::clamp<int64_t>(length - v[s.out0] * chunk, 0, chunk);
    }
  }

  void place(int64_t element, const std::vector<int64_t> &v) {
    int64_t slot = 0;
    for (size_t j = 0; j < layoutRegs_.size(); ++j)
      if (layoutRegs_[j] >= 0)
        slot += v[layoutRegs_[j]] * layoutStrides_[j];
    int g = groupOfElement(v);
    out_.elementSlot_[element] = slot;
    out_.elementGroup_[element] = g;
    if (g < 0)
      return;
    int64_t &held = out_.groups_[g].slots[slot];
    if (held != kNoElement)
      fail("layout-not-one-to-one",
           "the local layout is not one-to-one: elements " + indexStr(out_.indexOf(held)) +
               " and " + indexStr(out_.indexOf(element)) + " both land in slot " +
               std::to_string(slot) + " of the buffer of device " + std::to_string(deviceOf(g)));
    held = element;
    ++out_.groups_[g].held;
  }

  /// Some device of group `g` (for messages).
  int64_t deviceOf(int g) const {
    auto it = std::find(out_.deviceGroup_.begin(), out_.deviceGroup_.end(), g);
    return out_.devices_[it - out_.deviceGroup_.begin()];
  }

  // --- Root indices ------------------------------------------------------------

  /// For a root that differs from logical: the root -> logical transforms as
  /// steps, checked to be invertible (every output known when run backwards).
  void planRootIndex() {
    if (!tv_.hasRoot() || tv_.root == tv_.logical)
      return;
    out_.rootDiffers_ = true;
    std::set<IdNum> emitted;
    for (IdNum n : tv_.logical)
      emitRootToLogical(n, emitted);
    checkInvertible();
    for (IdNum n : tv_.root)
      if (!id(n).isReduction())
        out_.rootDataRegs_.push_back(id(n).isBroadcast() ? -1 : reg(n));
    out_.registers_ = static_cast<int>(regs_.size());
  }

  void emitRootToLogical(IdNum n, std::set<IdNum> &emitted) {
    if (root_.count(n) || emitted.count(n))
      return;
    const Transform *def = fusion_.definition(n);
    if (!def) {
      if (id(n).isBroadcast() || id(n).isReduction()) // Index 0 / no index: nothing to invert.
        return;
      fail("unsupported-layout", id(n).str() + " is not derived from the root domain");
    }
    requireSplitOrMerge(*def, n);
    if (def->chunked)
      fail("unsupported-layout", "a chunked split between the root and logical domains");
    for (IdNum in : def->inputs)
      emitRootToLogical(in, emitted);
    checkReshapeExtents(*def);
    out_.rootSteps_.push_back(stepOf(*def));
    rootTransforms_.push_back(def);
    emitted.insert(def->outputs.begin(), def->outputs.end());
  }

  /// A reshape's data splits must be even and its logical extents what the
  /// formulas give; otherwise logical indices would map outside the root.
  void checkReshapeExtents(const Transform &t) {
    std::vector<int64_t> outs = outputExtents(t);
    const IterDomain &in = id(t.inputs[0]);
    if (t.kind == Transform::Kind::Split && !in.isBroadcast() && !in.isReduction() &&
        outs[0] * outs[1] != extentOf(t.inputs[0]))
      fail("unsupported-layout", "the reshape splits " + in.str() + " unevenly");
    for (size_t i = 0; i < t.outputs.size(); ++i) {
      const IterDomain &o = id(t.outputs[i]);
      if (logical_.count(o.number) && !o.isBroadcast() && !o.isReduction() &&
          extentOf(o.number) != outs[i])
        fail("unsupported-layout", "logical " + o.str() + " has extent " +
                                       std::to_string(extentOf(o.number)) +
                                       ", but its root IDs give " + std::to_string(outs[i]));
    }
  }

  void checkInvertible() const {
    std::set<IdNum> known(tv_.logical.begin(), tv_.logical.end());
    // Broadcasts are known without inverting anything: their index is 0.
    auto isKnown = [&](IdNum n) { return known.count(n) > 0 || id(n).isBroadcast(); };
    for (auto t = rootTransforms_.rbegin(); t != rootTransforms_.rend(); ++t) {
      for (IdNum o : (*t)->outputs)
        if (!isKnown(o))
          fail("unsupported-layout", "its root -> logical transforms cannot be inverted: " +
                                         id(o).str() + " is not in the logical domain");
      for (IdNum in : (*t)->inputs)
        known.insert(in);
    }
    for (IdNum n : tv_.root)
      if (!id(n).isReduction() && !isKnown(n))
        fail("unsupported-layout", "root " + id(n).str() + " does not reach the logical domain");
  }

  const Fusion &fusion_;
  const TensorView &tv_;
  const Bindings &symbols_;
  const std::vector<IdNum> &loop_;
  std::set<IdNum> logical_, root_;
  std::map<IdNum, int64_t> extents_;
  std::map<IdNum, int> regs_;
  std::set<IdNum> computed_;                      ///< IDs the forward program computes.
  std::map<IdNum, size_t> stepComputing_;         ///< A split's inner output -> its step.
  std::vector<TensorLayout::IndexStep> forward_;  ///< Logical -> sharding and layout IDs.
  std::vector<const Transform *> rootTransforms_; ///< Root -> logical, forward order.
  std::vector<KeyDigit> digits_;
  std::vector<int> groupKeys_; ///< Group key -> group, or -1.
  std::vector<int> layoutRegs_;
  std::vector<int64_t> layoutStrides_;
  TensorLayout out_;
};

TensorLayout TensorLayout::build(const Fusion &fusion, TensorNum t, const Bindings &symbols,
                                 const std::vector<int64_t> &meshlessDevices) {
  return TensorLayoutBuilder(fusion, t, symbols).build(meshlessDevices);
}

int64_t TensorLayout::elementCount() const {
  return product(shape_);
}

bool TensorLayout::onDevice(int64_t device) const {
  return std::binary_search(devices_.begin(), devices_.end(), device);
}

int TensorLayout::groupOf(int64_t device) const {
  auto it = std::lower_bound(devices_.begin(), devices_.end(), device);
  if (it == devices_.end() || *it != device)
    return -1;
  return deviceGroup_[it - devices_.begin()];
}

std::vector<int64_t> TensorLayout::localShape(int64_t device) const {
  return onDevice(device) ? localShape_ : std::vector<int64_t>{};
}

int64_t TensorLayout::slotCount(int64_t device) const {
  return onDevice(device) ? product(localShape_) : 0;
}

int64_t TensorLayout::heldCount(int64_t device) const {
  int g = groupOf(device);
  return g < 0 ? 0 : groups_[g].held;
}

const std::vector<int64_t> &TensorLayout::slots(int64_t device) const {
  static const std::vector<int64_t> kNone;
  int g = groupOf(device);
  return g < 0 ? kNone : groups_[g].slots;
}

int64_t TensorLayout::slotOf(int64_t device, int64_t element) const {
  SC_ASSERT(element >= 0 && element < static_cast<int64_t>(elementSlot_.size()),
            "element " + std::to_string(element) + " is out of range");
  int g = groupOf(device);
  return g >= 0 && elementGroup_[element] == g ? elementSlot_[element] : -1;
}

std::vector<int64_t> TensorLayout::indexOf(int64_t element) const {
  SC_ASSERT(element >= 0 && element < elementCount(),
            "element " + std::to_string(element) + " is out of range");
  std::vector<int64_t> index(shape_.size(), 0);
  for (size_t k = shape_.size(); k-- > 0;) {
    index[k] = element % shape_[k];
    element /= shape_[k];
  }
  return index;
}

int64_t TensorLayout::elementAt(const std::vector<int64_t> &index) const {
  SC_ASSERT(index.size() == shape_.size(), "index rank differs from the tensor's");
  int64_t element = 0;
  for (size_t k = 0; k < shape_.size(); ++k) {
    SC_ASSERT(index[k] >= 0 && index[k] < shape_[k], "index " + indexStr(index) + " out of range");
    element = element * shape_[k] + index[k];
  }
  return element;
}

std::vector<int64_t> TensorLayout::rootIndexOf(int64_t element) const {
  std::vector<int64_t> logical = indexOf(element);
  if (!rootDiffers_)
    return logical;
  std::vector<int64_t> v(static_cast<size_t>(registers_), 0);
  for (size_t k = 0; k < logical.size(); ++k)
    if (logicalRegs_[k] >= 0)
      v[logicalRegs_[k]] = logical[k];
  // Backwards: a split's input from its outputs, a merge's inputs from its output.
  for (auto s = rootSteps_.rbegin(); s != rootSteps_.rend(); ++s) {
    if (s->isSplit) {
      v[s->in0] = v[s->out0] * s->extent + v[s->out1];
    } else {
      v[s->in0] = s->extent ? v[s->out0] / s->extent : 0;
      v[s->in1] = s->extent ? v[s->out0] % s->extent : 0;
    }
  }
  std::vector<int64_t> root;
  for (int r : rootDataRegs_)
    root.push_back(r >= 0 ? v[r] : 0);
  return root;
}

} // namespace shardcheck
