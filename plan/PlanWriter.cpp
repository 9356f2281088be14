// Plan -> JSON text (docs/plan-format.md). Writing is direct: every field
// as the format names it, the fusion embedded as JSON IR.
//
// Does not: check the plan (PlanVerifier.h) or read one (PlanReader.cpp).
#include "ir/Json.h"
#include "plan/Plan.h"

#include <nlohmann/json.hpp>

namespace shardcheck {

using nlohmann::json;

namespace {

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

json extentsToJson(const std::vector<Extent> &extents) {
  json a = json::array();
  for (const Extent &e : extents)
    a.push_back(extentToJson(e));
  return a;
}

json teamToJson(const PlanTeam &t) {
  json j = json::object();
  if (!t.pairs.empty()) {
    json pairs = json::array();
    for (const auto &[src, dst] : t.pairs)
      pairs.push_back(json::array({src, dst}));
    j["pairs"] = pairs;
  } else {
    j["devices"] = t.devices;
  }
  if (t.root)
    j["root"] = *t.root;
  return j;
}

json teamsToJson(const std::vector<PlanTeam> &teams) {
  json a = json::array();
  for (const PlanTeam &t : teams)
    a.push_back(teamToJson(t));
  return a;
}

json verdictToJson(const PlanVerdict &v) {
  json j = {{"edge", v.edge},
            {"expr", v.expr},
            {"claim", v.claim},
            {"status", planStatusName(v.status)},
            {"source", v.source},
            {"checker_version", v.checkerVersion},
            {"input_sha256", v.inputSha256}};
  if (!v.detail.empty())
    j["detail"] = v.detail;
  return j;
}

json bufferToJson(const PlanBuffer &b) {
  json j = {{"name", b.name},
            {"kind", bufferKindName(b.kind)},
            {"tensor", tensorName(b.tensor)},
            {"dtype", b.dtype == DataType::Unknown ? "unknown" : dataTypeName(b.dtype)}};
  if (b.consumer)
    j["consumer"] = tensorName(*b.consumer);
  if (b.expr)
    j["expr"] = *b.expr;
  if (b.operand)
    j["operand"] = *b.operand;
  if (!b.teams.empty())
    j["teams"] = teamsToJson(b.teams);
  if (b.collective)
    j["collective"] = collectiveTypeName(*b.collective);
  if (b.kind == BufferKind::Slice) {
    j["base"] = b.base;
    j["axis"] = b.axis.value_or(0);
    j["loop"] = b.loopVar;
    if (!b.swizzleTeam.empty())
      j["swizzle_team"] = b.swizzleTeam;
  }
  json local = json::array();
  for (const PlanLocal &l : b.local) {
    local.push_back({{"device", l.device}, {"shape", extentsToJson(l.shape)}});
    if (l.held)
      local.back()["held"] = *l.held;
  }
  j["local"] = local;
  return j;
}

json stepToJson(const PlanStep &s, size_t index) {
  json j = {{"index", index}, {"kind", stepKindName(s.kind)}, {"devices", s.devices}};
  if (s.expr)
    j["expr"] = *s.expr;
  if (s.kind == StepKind::Compute)
    j["mode"] = computeModeName(s.mode);
  j["inputs"] = s.inputs;
  j["output"] = s.output;
  if (s.kind == StepKind::Collective) {
    if (s.collective)
      j["collective"] = collectiveTypeName(*s.collective);
    j["teams"] = teamsToJson(s.teams);
    if (s.reduceOp)
      j["reduce_op"] = reduceOpName(*s.reduceOp);
    if (s.ring)
      j["ring"] = {{"loop", s.ring->loopVar},
                   {"recv_shift", s.ring->recvShift},
                   {"send_shift", s.ring->sendShift}};
    json counts = json::array();
    for (const PlanCount &c : s.counts) {
      json cj = {{"device", c.device}};
      if (c.in)
        cj["in"] = extentToJson(*c.in);
      if (c.out)
        cj["out"] = extentToJson(*c.out);
      counts.push_back(cj);
    }
    j["counts"] = counts;
  }
  if (s.operand)
    j["operand"] = *s.operand;
  if (s.kind == StepKind::Loop) {
    j["var"] = s.loopVar;
    j["lo"] = extentToJson(s.lo);
    j["hi"] = extentToJson(s.hi);
    j["body"] = s.body;
  }
  json rests = json::array();
  for (const PlanVerdict &v : s.restsOn)
    rests.push_back(verdictToJson(v));
  j["rests_on"] = rests;
  return j;
}

} // namespace

std::string planToJsonText(const Plan &plan) {
  json j;
  j["format"] = kPlanFormat;
  j["version"] = planFormatVersion(plan);
  j["checker_version"] = plan.checkerVersion;
  j["input"] = {
      {"file", plan.inputFile}, {"sha256", plan.inputSha256}, {"fusion", plan.fusionIndex}};
  j["lowerings"] = plan.lowerings;
  j["devices"] = plan.devices;
  json constraints = json::array();
  for (const PlanConstraint &c : plan.constraints)
    constraints.push_back({{"kind", nameIn(kPlanConstraintKinds, c.kind)},
                           {"lhs", extentToJson(c.lhs)},
                           {"rhs", extentToJson(c.rhs)},
                           {"text", c.text}});
  j["constraints"] = constraints;
  json tensors = json::array();
  for (const PlanTensor &t : plan.tensors)
    tensors.push_back({{"tensor", tensorName(t.tensor)},
                       {"role", t.role},
                       {"shape", extentsToJson(t.shape)},
                       {"sharding", t.sharding}});
  j["tensors"] = tensors;
  json buffers = json::array();
  for (const PlanBuffer &b : plan.buffers)
    buffers.push_back(bufferToJson(b));
  j["buffers"] = buffers;
  json steps = json::array();
  for (size_t i = 0; i < plan.steps.size(); ++i)
    steps.push_back(stepToJson(plan.steps[i], i));
  j["steps"] = steps;
  Document doc;
  doc.file = plan.inputFile;
  doc.fusions.push_back(plan.fusion);
  j["fusion"] = documentToJson(doc);
  return jsonToText(j);
}

} // namespace shardcheck
