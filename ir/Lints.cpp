// Well-formedness lints of sharding annotations; see Lints.h.
#include "ir/Lints.h"

#include <map>
#include <set>

namespace shardcheck {

namespace {

SourceLoc tensorLoc(const TensorView &tv) {
  return tv.domainsLoc.known() ? tv.domainsLoc : tv.loc;
}

std::string joinIds(const Fusion &f, const std::vector<IdNum> &ids) {
  std::string s;
  for (IdNum n : ids)
    s += (s.empty() ? "" : ", ") + f.id(n).str();
  return s;
}

/// One finding per bad mesh, naming every tensor that uses it.
void lintMeshes(const Fusion &f, DiagnosticEngine &diags) {
  std::map<std::string, std::vector<const TensorView *>> users;
  for (const auto &[n, tv] : f.tensors)
    if (tv.mesh)
      users[tv.mesh->str()].push_back(&tv);
  for (const auto &[text, tvs] : users) {
    const DeviceMesh &mesh = *tvs.front()->mesh;
    std::set<int64_t> seen;
    for (int64_t d : mesh.devices()) {
      if (seen.insert(d).second)
        continue;
      std::string names;
      for (const auto *tv : tvs)
        names += (names.empty() ? "" : ", ") + tv->name();
      diags.error("mesh-duplicate-device",
                  text + " lists device " + std::to_string(d) + " twice (used by " + names + ")",
                  tvs.front()->loc);
      break;
    }
  }
}

void lintDuplicateDids(const Fusion &f, const TensorView &tv, DiagnosticEngine &diags) {
  std::map<ParallelType, std::vector<IdNum>> byType;
  for (IdNum n : tv.loop)
    if (f.id(n).isDeviceParallel() && !f.id(n).isReduction())
      byType[f.id(n).parallel].push_back(n);
  for (const auto &[type, ids] : byType) {
    if (ids.size() < 2)
      continue;
    size_t broadcasts = 0;
    for (IdNum n : ids)
      broadcasts += f.id(n).isBroadcast();
    auto &d = diags.error("duplicate-did",
                          tv.name() + " has " + std::to_string(ids.size()) +
                              " loop IterDomains parallelized on " + parallelTypeName(type) + ": " +
                              joinIds(f, ids),
                          tensorLoc(tv));
    d.addNote("nvFuser rejects such a loop domain at run time (\"Found multiple loop "
              "IterDomains with the same parallel type\")",
              tensorLoc(tv));
    if (ids.size() - broadcasts <= 1)
      d.addNote(std::to_string(broadcasts) + " of them are broadcast IDs, whose DIDs shard " +
                    "nothing: the data itself is unaffected",
                tensorLoc(tv));
  }
}

/// The split that defines `n`, when `n` is its inner output.
const Transform *splitWithInnerOutput(const Fusion &f, IdNum n) {
  const Transform *t = f.definition(n);
  if (t && t->kind == Transform::Kind::Split && t->outputs.size() == 2 && t->outputs[1] == n)
    return t;
  return nullptr;
}

/// Per-device element counts of an uneven device split, or empty when even or
/// not decidable from constants.
std::vector<int64_t> unevenCounts(const Fusion &f, const Transform &split) {
  auto extent = f.id(split.inputs[0]).extent.asConstant();
  auto factor = split.factor.asConstant();
  // A chunked split's counts depend on the enclosing chunks, not on its extent.
  if (!extent || !factor || *factor <= 0 || *extent % *factor == 0 || split.chunked)
    return {};
  int64_t outer = split.innerSplit ? (*extent + *factor - 1) / *factor : *factor;
  int64_t inner = split.innerSplit ? *factor : (*extent + *factor - 1) / *factor;
  std::vector<int64_t> counts;
  for (int64_t c = 0; c < outer; ++c)
    counts.push_back(std::max<int64_t>(0, std::min(inner, *extent - c * inner)));
  return counts;
}

void lintShardingId(const Fusion &f, const TensorView &tv, IdNum n, DiagnosticEngine &diags) {
  const IterDomain &id = f.id(n);
  SourceLoc loc = tensorLoc(tv);
  if (!tv.mesh) {
    diags.error("did-without-mesh",
                tv.name() + " parallelizes " + id.str() + " on " + parallelTypeName(id.parallel) +
                    " but has no device mesh",
                loc);
    return;
  }
  if (!tv.mesh->axisOf(id.parallel)) {
    diags.error("did-not-in-mesh",
                tv.name() + " uses " + parallelTypeName(id.parallel) + " (on " + id.str() +
                    ") but " + tv.mesh->str() + " has only " + std::to_string(tv.mesh->rank()) +
                    " axis(es)",
                loc);
    return;
  }
  if (const Transform *split = splitWithInnerOutput(f, n)) {
    diags.error("did-on-inner-split",
                tv.name() + " parallelizes " + id.str() +
                    ", the inner output of a split, on a device dimension; only the outer "
                    "output of a split may carry a DID",
                split->loc.known() ? split->loc : loc);
    return;
  }
  int64_t meshExtent = tv.mesh->extentOf(id.parallel);
  auto extent = id.extent.asConstant();
  if (extent && *extent != meshExtent)
    diags.error("did-extent-mismatch",
                tv.name() + ": " + id.str() + " has extent " + std::to_string(*extent) + " but " +
                    tv.mesh->str() + " has " + std::to_string(meshExtent) + " devices along " +
                    parallelTypeName(id.parallel),
                loc);
  const Transform *def = f.definition(n);
  if (def && def->kind == Transform::Kind::Split) {
    auto counts = unevenCounts(f, *def);
    if (!counts.empty()) {
      std::string list;
      for (int64_t c : counts)
        list += (list.empty() ? "" : ", ") + std::to_string(c);
      diags.warning("uneven-sharding",
                    tv.name() + ": " + f.id(def->inputs[0]).str() + " split by " +
                        def->factor.str() + " does not divide evenly across " +
                        parallelTypeName(id.parallel) + "; devices hold " + list + " elements",
                    def->loc.known() ? def->loc : loc);
    }
  }
}

} // namespace

void lintFusion(const Fusion &fusion, DiagnosticEngine &diags) {
  lintMeshes(fusion, diags);
  for (const auto &[num, tv] : fusion.tensors) {
    lintDuplicateDids(fusion, tv, diags);
    for (IdNum n : tv.loop) {
      const IterDomain &id = fusion.id(n);
      if (id.isDeviceParallel() && !id.isBroadcast() && !id.isReduction())
        lintShardingId(fusion, tv, n, diags);
    }
  }
}

} // namespace shardcheck
