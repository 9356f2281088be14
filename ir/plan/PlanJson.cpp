// Plan <-> JSON (docs/plan-format.md), and the plan's consistency checks.
//
// Writing is direct. Reading goes in three passes: the JSON text
// (parseJsonText: UTF-8, limits, syntax, duplicate keys, located by byte
// offset), the schema (every field's type, located by JSON pointer through
// JsonPositions), and consistency across fields (names defined before use,
// one count per device of a collective step, equal to its buffer's size,
// teams inside the plan's devices, step inputs written by an earlier step).
// Every failure is an InputError at the offending value: an inconsistent
// plan is the user's problem to see, never a crash of the executor later.
// Lookups are indexed, so a plan is checked in time linear in its size.
//
// Whether the plan is *right* (the collectives deliver the right elements) is
// not checked here; the checker proved it and the executor's validation
// confirms it.
#include "ir/Json.h"
#include "ir/Limits.h"
#include "ir/Scalars.h"
#include "ir/json/JsonIrReader.h"
#include "ir/json/JsonPositions.h"
#include "ir/json/JsonText.h"
#include "ir/plan/Plan.h"
#include "util/Checked.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace shardcheck {

using nlohmann::json;
using jsonir::appendPointer;
using jsonir::atPointer;
using jsonir::JsonPositions;
using jsonir::quotedToken;

const char *planStatusName(PlanStatus s) {
  switch (s) {
  case PlanStatus::Proved:
    return "proved";
  case PlanStatus::Refuted:
    return "refuted";
  case PlanStatus::Unknown:
    return "unknown";
  }
  return "?";
}

const char *bufferKindName(BufferKind k) {
  switch (k) {
  case BufferKind::Tensor:
    return "tensor";
  case BufferKind::View:
    return "view";
  case BufferKind::Gathered:
    return "gathered";
  case BufferKind::Packed:
    return "packed";
  case BufferKind::Unpacked:
    return "unpacked";
  case BufferKind::Partial:
    return "partial";
  }
  return "?";
}

const char *stepKindName(StepKind k) {
  switch (k) {
  case StepKind::Compute:
    return "compute";
  case StepKind::Collective:
    return "collective";
  case StepKind::Alias:
    return "alias";
  case StepKind::Copy:
    return "copy";
  }
  return "?";
}

const char *computeModeName(ComputeMode m) {
  switch (m) {
  case ComputeMode::Whole:
    return "whole";
  case ComputeMode::Partial:
    return "partial";
  case ComputeMode::Epilogue:
    return "epilogue";
  }
  return "?";
}

bool PlanStep::verified() const {
  // A step that rests on no verdict (an expression without tensor operands)
  // was never checked: not verified, however vacuously all-proved.
  return !restsOn.empty() && std::all_of(restsOn.begin(), restsOn.end(),
                     [](const PlanVerdict &v) { return v.status == PlanStatus::Proved; });
}

const PlanBuffer *Plan::buffer(const std::string &name) const {
  for (const PlanBuffer &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

bool Plan::verified() const {
  return std::all_of(steps.begin(), steps.end(), [](const PlanStep &s) { return s.verified(); });
}

Extent localCount(const std::vector<Extent> &shape) {
  int64_t constant = 1;
  std::optional<Extent> symbolic;
  for (const Extent &e : shape) {
    if (auto c = e.asConstant())
      constant = mulOrThrow(constant, *c, "a local element count");
    else
      symbolic = symbolic ? Extent::mul(*symbolic, e) : e;
  }
  if (!symbolic)
    return Extent::constant(constant);
  return constant == 1 ? *symbolic : Extent::mul(*symbolic, Extent::constant(constant));
}

std::vector<std::string> planSymbols(const Plan &plan) {
  std::set<std::string> symbols;
  for (const auto &[n, id] : plan.fusion.ids) {
    id.extent.collectSymbols(symbols);
    if (id.expandedExtent)
      id.expandedExtent->collectSymbols(symbols);
  }
  for (const Transform &t : plan.fusion.transforms)
    t.factor.collectSymbols(symbols);
  for (const PlanConstraint &c : plan.constraints) {
    c.lhs.collectSymbols(symbols);
    c.rhs.collectSymbols(symbols);
  }
  // Scalar operands and initial values may be symbols too (`T1 * i5`).
  for (const Expr &e : plan.fusion.exprs) {
    for (const Operand &o : e.inputs)
      if (auto symbol = o.tensor ? std::nullopt : scalarSymbolOf(o.scalar))
        symbols.insert(*symbol);
    if (auto symbol = scalarSymbolOf(e.attr("initial value")))
      symbols.insert(*symbol);
  }
  return {symbols.begin(), symbols.end()};
}

// ---------------------------------------------------------------- writing

namespace {

std::string tensorName(TensorNum t) { return "T" + std::to_string(t); }

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

const char *constraintKindName(PlanConstraint::Kind k) {
  switch (k) {
  case PlanConstraint::Kind::Divisible:
    return "divisible";
  case PlanConstraint::Kind::Equal:
    return "equal";
  case PlanConstraint::Kind::Positive:
    return "positive";
  }
  return "?";
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
  json local = json::array();
  for (const PlanLocal &l : b.local)
    local.push_back({{"device", l.device}, {"shape", extentsToJson(l.shape)}});
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
  j["version"] = plan.version;
  j["checker_version"] = plan.checkerVersion;
  j["input"] = {
      {"file", plan.inputFile}, {"sha256", plan.inputSha256}, {"fusion", plan.fusionIndex}};
  j["lowerings"] = plan.lowerings;
  j["devices"] = plan.devices;
  json constraints = json::array();
  for (const PlanConstraint &c : plan.constraints)
    constraints.push_back({{"kind", constraintKindName(c.kind)},
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

// ---------------------------------------------------------------- reading

namespace {

/// A JSON value and its JSON pointer, for located errors.
struct At {
  const json &value;
  std::string path;
};

class PlanReader {
public:
  PlanReader(const JsonPositions &positions, std::string file)
      : positions_(positions), file_(std::move(file)) {}

  Plan read(const json &root);

private:
  [[noreturn]] void fail(const std::string &path, const std::string &message) const {
    throwInputError("plan-invalid", message + atPointer(path), positions_.locate(path));
  }

  // --- Typed access. ---
  void expectObject(const At &at, const std::set<std::string> &allowed) const {
    if (!at.value.is_object())
      fail(at.path, "expected an object");
    for (const auto &[key, v] : at.value.items())
      if (!allowed.count(key))
        fail(appendPointer(at.path, key), "unknown field " + quotedToken(key));
  }
  At field(const At &object, const std::string &key) const {
    auto it = object.value.find(key);
    if (it == object.value.end())
      fail(object.path, "missing field \"" + key + "\"");
    return At{*it, appendPointer(object.path, key)};
  }
  std::optional<At> optionalField(const At &object, const std::string &key) const {
    auto it = object.value.find(key);
    if (it == object.value.end())
      return std::nullopt;
    return At{*it, appendPointer(object.path, key)};
  }
  std::vector<At> elements(const At &array) const {
    if (!array.value.is_array())
      fail(array.path, "expected an array");
    std::vector<At> out;
    for (size_t i = 0; i < array.value.size(); ++i)
      out.push_back(At{array.value[i], appendPointer(array.path, i)});
    return out;
  }
  std::string string(const At &at) const {
    if (!at.value.is_string())
      fail(at.path, "expected a string");
    return at.value.get<std::string>();
  }
  /// An integer >= 0 (every integer of a plan is a count, index or device).
  int64_t nonNegative(const At &at) const {
    auto v = jsonir::jsonInt64(at.value); // 2.5, 1e20 and 2^64 are no int64
    if (!v)
      fail(at.path, "expected an integer");
    if (*v < 0)
      fail(at.path, "expected an integer >= 0");
    return *v;
  }
  Extent extent(const At &at) const {
    auto e = extentFromJson(at.value);
    if (!e)
      fail(at.path, "expected an extent (an integer, a symbol, or {\"op\", \"lhs\", \"rhs\"})");
    return *e;
  }
  /// localCount(shape), an overflow of its product located at `path`. The
  /// product is a tree one level deeper per symbolic axis, which every
  /// recursive walk of it (printing, evaluating, freeing) descends, so the
  /// axes are bounded as JSON nesting is.
  Extent slots(const std::vector<Extent> &shape, const std::string &path) const {
    if (shape.size() > static_cast<size_t>(jsonir::kMaxJsonDepth))
      fail(path, "a shape has at most " + std::to_string(jsonir::kMaxJsonDepth) +
                     " axes, this one " + std::to_string(shape.size()));
    try {
      return localCount(shape);
    } catch (const InputError &e) {
      fail(path, e.diagnostic().message);
    }
  }
  std::vector<Extent> extents(const At &at) const {
    std::vector<Extent> out;
    for (const At &e : elements(at))
      out.push_back(extent(e));
    return out;
  }
  std::vector<int64_t> devices(const At &at) const {
    std::vector<int64_t> out;
    std::set<int64_t> seen;
    for (const At &e : elements(at)) {
      int64_t d = nonNegative(e);
      if (!seen.insert(d).second)
        fail(e.path, "device " + std::to_string(d) + " is listed twice");
      out.push_back(d);
    }
    return out;
  }
  TensorNum tensorRef(const At &at, const Fusion &fusion) const {
    std::string s = string(at);
    if (s.size() < 2 || s[0] != 'T' || s.find_first_not_of("0123456789", 1) != std::string::npos ||
        s.size() > 10)
      fail(at.path, "expected a tensor name like \"T3\", got " + quotedToken(s));
    TensorNum t = std::stoi(s.substr(1));
    if (!fusion.hasTensor(t))
      fail(at.path, "the plan's fusion has no tensor " + s);
    return t;
  }
  template <class E> E enumValue(const At &at, const std::vector<std::pair<const char *, E>> &all) const {
    std::string s = string(at);
    std::string choices;
    for (const auto &[name, value] : all) {
      if (s == name)
        return value;
      choices += (choices.empty() ? "" : ", ") + std::string("\"") + name + "\"";
    }
    fail(at.path, quotedToken(s) + " is not one of " + choices);
  }
  /// The value `parse` reads from `at`'s string; `choices` lists the spellings.
  template <class E>
  E named(const At &at, std::optional<E> (*parse)(std::string_view),
          const std::string &choices) const {
    std::string s = string(at);
    if (std::optional<E> value = parse(s))
      return *value;
    fail(at.path, quotedToken(s) + " is not one of " + choices);
  }

  // --- Sections. ---
  void header(const At &root, Plan &plan) const;
  PlanConstraint constraint(const At &at) const;
  PlanTensor tensor(const At &at, const Fusion &fusion) const;
  PlanTeam team(const At &at) const;
  std::vector<PlanTeam> teams(const At &at) const;
  PlanBuffer buffer(const At &at, const Plan &plan) const;
  PlanStep step(const At &at, const Plan &plan) const;
  PlanVerdict verdict(const At &at) const;

  // --- Consistency. ---
  void checkBuffer(const At &at, const PlanBuffer &b, const Plan &plan) const;
  void checkStep(const At &at, const PlanStep &s, const Plan &plan,
                 std::set<std::string> &written) const;
  void checkTeamsWithin(const At &at, const std::vector<PlanTeam> &teams,
                        const std::set<int64_t> &known) const;
  void checkCompute(const At &at, const PlanStep &s, const Plan &plan,
                    const PlanBuffer &out) const;
  void checkCopy(const At &at, const PlanStep &s, const Plan &plan, const PlanBuffer &in,
                 const PlanBuffer &out) const;
  void checkCounts(const At &at, const PlanStep &s, const PlanBuffer &in,
                   const PlanBuffer &out) const;
  void checkCount(const std::string &path, const PlanBuffer &b, int64_t device,
                  const std::optional<Extent> &count, const char *which) const;

  // --- Indexes, built once so that checking is linear in the plan's size. ---
  void index(const Plan &plan);
  const PlanBuffer *bufferNamed(const std::string &name) const;
  const PlanLocal *localOn(const PlanBuffer &b, int64_t device) const;

  const JsonPositions &positions_;
  std::string file_;
  std::set<int64_t> planDevices_;
  std::map<std::string, const PlanBuffer *> buffers_;
  std::map<std::pair<const PlanBuffer *, int64_t>, const PlanLocal *> locals_;
};

void PlanReader::header(const At &root, Plan &plan) const {
  auto format = root.value.find("format");
  if (format == root.value.end() || !format->is_string() || *format != kPlanFormat)
    fail(format == root.value.end() ? "" : "/format",
         std::string("not a shardcheck plan: expected \"format\": \"") + kPlanFormat + "\"");
  At version = field(root, "version");
  if (jsonir::jsonInt64(version.value) != kPlanVersion)
    fail(version.path, "unsupported plan version " + shownToken(version.value.dump()) +
                           "; this shardcheck reads version " + std::to_string(kPlanVersion));
  plan.version = kPlanVersion;
  plan.checkerVersion = string(field(root, "checker_version"));
  At input = field(root, "input");
  expectObject(input, {"file", "sha256", "fusion"});
  plan.inputFile = string(field(input, "file"));
  plan.inputSha256 = string(field(input, "sha256"));
  plan.fusionIndex = static_cast<size_t>(nonNegative(field(input, "fusion")));
  plan.lowerings = string(field(root, "lowerings"));
  plan.devices = devices(field(root, "devices"));
}

PlanConstraint PlanReader::constraint(const At &at) const {
  expectObject(at, {"kind", "lhs", "rhs", "text"});
  PlanConstraint c;
  c.kind = enumValue<PlanConstraint::Kind>(field(at, "kind"),
                                           {{"divisible", PlanConstraint::Kind::Divisible},
                                            {"equal", PlanConstraint::Kind::Equal},
                                            {"positive", PlanConstraint::Kind::Positive}});
  c.lhs = extent(field(at, "lhs"));
  c.rhs = extent(field(at, "rhs"));
  c.text = string(field(at, "text"));
  return c;
}

PlanTensor PlanReader::tensor(const At &at, const Fusion &fusion) const {
  expectObject(at, {"tensor", "role", "shape", "sharding"});
  PlanTensor t;
  t.tensor = tensorRef(field(at, "tensor"), fusion);
  t.role = enumValue<std::string>(
      field(at, "role"),
      {{"input", "input"}, {"output", "output"}, {"intermediate", "intermediate"}});
  t.shape = extents(field(at, "shape"));
  t.sharding = string(field(at, "sharding"));
  return t;
}

PlanTeam PlanReader::team(const At &at) const {
  expectObject(at, {"devices", "root", "pairs"});
  PlanTeam t;
  if (auto d = optionalField(at, "devices"))
    t.devices = devices(*d);
  if (auto r = optionalField(at, "root"))
    t.root = nonNegative(*r);
  if (auto p = optionalField(at, "pairs")) {
    for (const At &pair : elements(*p)) {
      auto ends = elements(pair);
      if (ends.size() != 2)
        fail(pair.path, "a pair is [source, destination]");
      t.pairs.emplace_back(nonNegative(ends[0]), nonNegative(ends[1]));
    }
  }
  if (t.devices.empty() == t.pairs.empty())
    fail(at.path, "a team has either \"devices\" or \"pairs\" (SendRecv)");
  return t;
}

std::vector<PlanTeam> PlanReader::teams(const At &at) const {
  std::vector<PlanTeam> out;
  std::set<int64_t> seen;
  for (const At &t : elements(at)) {
    out.push_back(team(t));
    for (int64_t d : out.back().devices)
      if (!seen.insert(d).second)
        fail(t.path, "device " + std::to_string(d) + " is in two teams");
  }
  if (out.empty())
    fail(at.path, "a collective needs at least one team");
  return out;
}

PlanBuffer PlanReader::buffer(const At &at, const Plan &plan) const {
  expectObject(at, {"name", "kind", "tensor", "dtype", "consumer", "expr", "operand", "teams",
                    "collective", "local"});
  PlanBuffer b;
  b.name = string(field(at, "name"));
  if (b.name.empty())
    fail(at.path + "/name", "a buffer needs a name");
  b.kind = enumValue<BufferKind>(field(at, "kind"), {{"tensor", BufferKind::Tensor},
                                                     {"view", BufferKind::View},
                                                     {"gathered", BufferKind::Gathered},
                                                     {"packed", BufferKind::Packed},
                                                     {"unpacked", BufferKind::Unpacked},
                                                     {"partial", BufferKind::Partial}});
  b.tensor = tensorRef(field(at, "tensor"), plan.fusion);
  At dtype = field(at, "dtype");
  std::string dt = string(dtype);
  if (dt != "unknown") {
    auto parsed = parseDataType(dt);
    if (!parsed)
      fail(dtype.path, "unknown dtype " + quotedToken(dt));
    b.dtype = *parsed;
  }
  if (auto c = optionalField(at, "consumer"))
    b.consumer = tensorRef(*c, plan.fusion);
  if (auto e = optionalField(at, "expr"))
    b.expr = static_cast<size_t>(nonNegative(*e));
  if (auto o = optionalField(at, "operand"))
    b.operand = static_cast<size_t>(nonNegative(*o));
  if (auto t = optionalField(at, "teams"))
    b.teams = teams(*t);
  if (auto c = optionalField(at, "collective"))
    b.collective = parsePlanCollective(string(*c));
  for (const At &l : elements(field(at, "local"))) {
    expectObject(l, {"device", "shape"});
    b.local.push_back(PlanLocal{nonNegative(field(l, "device")), extents(field(l, "shape"))});
    slots(b.local.back().shape, l.path + "/shape"); // its element count must fit in int64
  }
  checkBuffer(at, b, plan);
  return b;
}

void PlanReader::checkBuffer(const At &at, const PlanBuffer &b, const Plan &plan) const {
  bool needsEdge = b.kind == BufferKind::View || b.kind == BufferKind::Packed ||
                   b.kind == BufferKind::Unpacked || b.kind == BufferKind::Partial;
  if (needsEdge && (!b.consumer || !b.expr))
    fail(at.path, std::string("a ") + bufferKindName(b.kind) +
                      " buffer names its \"consumer\" and \"expr\"");
  if (b.expr && *b.expr >= plan.fusion.exprs.size())
    fail(at.path + "/expr", "the plan's fusion has no expression " + std::to_string(*b.expr));
  if (b.expr && b.operand && *b.operand >= plan.fusion.exprs[*b.expr].inputs.size())
    fail(at.path + "/operand", "expression " + std::to_string(*b.expr) + " has no operand " +
                                   std::to_string(*b.operand));
  if (b.kind != BufferKind::Tensor && b.kind != BufferKind::Partial &&
      b.kind != BufferKind::View && b.teams.empty())
    fail(at.path, std::string("a ") + bufferKindName(b.kind) + " buffer names its \"teams\"");
  if (b.kind == BufferKind::Partial && !(b.collective && isReductionCollective(*b.collective)))
    fail(at.path, "a partial buffer names its \"collective\": Allreduce, Reduce or ReduceScatter");
  std::set<int64_t> seen;
  for (size_t i = 0; i < b.local.size(); ++i)
    if (!seen.insert(b.local[i].device).second)
      fail(appendPointer(at.path + "/local", i),
           "device " + std::to_string(b.local[i].device) + " has two local shapes");
}

PlanVerdict PlanReader::verdict(const At &at) const {
  expectObject(at, {"edge", "expr", "claim", "status", "source", "detail", "checker_version",
                    "input_sha256"});
  PlanVerdict v;
  v.edge = string(field(at, "edge"));
  v.expr = static_cast<size_t>(nonNegative(field(at, "expr")));
  v.claim = string(field(at, "claim"));
  v.status = enumValue<PlanStatus>(field(at, "status"), {{"proved", PlanStatus::Proved},
                                                         {"refuted", PlanStatus::Refuted},
                                                         {"unknown", PlanStatus::Unknown}});
  v.source = string(field(at, "source"));
  if (auto d = optionalField(at, "detail"))
    v.detail = string(*d);
  v.checkerVersion = string(field(at, "checker_version"));
  v.inputSha256 = string(field(at, "input_sha256"));
  return v;
}

PlanStep PlanReader::step(const At &at, const Plan &plan) const {
  expectObject(at, {"index", "kind", "devices", "expr", "mode", "inputs", "output", "collective",
                    "teams", "reduce_op", "counts", "operand", "rests_on"});
  PlanStep s;
  s.kind = enumValue<StepKind>(field(at, "kind"), {{"compute", StepKind::Compute},
                                                   {"collective", StepKind::Collective},
                                                   {"alias", StepKind::Alias},
                                                   {"copy", StepKind::Copy}});
  s.devices = devices(field(at, "devices"));
  if (auto e = optionalField(at, "expr"))
    s.expr = static_cast<size_t>(nonNegative(*e));
  if (auto m = optionalField(at, "mode"))
    s.mode = enumValue<ComputeMode>(*m, {{"whole", ComputeMode::Whole},
                                         {"partial", ComputeMode::Partial},
                                         {"epilogue", ComputeMode::Epilogue}});
  for (const At &in : elements(field(at, "inputs")))
    s.inputs.push_back(string(in));
  s.output = string(field(at, "output"));
  if (auto c = optionalField(at, "collective"))
    s.collective = named(*c, parsePlanCollective, collectiveChoices(&CollectiveInfo::plan));
  if (auto t = optionalField(at, "teams"))
    s.teams = teams(*t);
  if (auto r = optionalField(at, "reduce_op"))
    s.reduceOp = named(*r, parseReduceOp, reduceOpChoices());
  if (auto counts = optionalField(at, "counts")) {
    for (const At &c : elements(*counts)) {
      expectObject(c, {"device", "in", "out"});
      PlanCount pc;
      pc.device = nonNegative(field(c, "device"));
      if (auto in = optionalField(c, "in"))
        pc.in = extent(*in);
      if (auto out = optionalField(c, "out"))
        pc.out = extent(*out);
      s.counts.push_back(pc);
    }
  }
  if (auto o = optionalField(at, "operand"))
    s.operand = static_cast<size_t>(nonNegative(*o));
  for (const At &v : elements(field(at, "rests_on")))
    s.restsOn.push_back(verdict(v));
  return s;
}

void PlanReader::checkTeamsWithin(const At &at, const std::vector<PlanTeam> &teams,
                                  const std::set<int64_t> &known) const {
  for (const PlanTeam &t : teams) {
    std::vector<int64_t> all = t.devices;
    if (t.root)
      all.push_back(*t.root);
    for (const auto &[src, dst] : t.pairs) {
      all.push_back(src);
      all.push_back(dst);
    }
    for (int64_t d : all)
      if (!known.count(d))
        fail(at.path, "team device " + std::to_string(d) + " is not a device of the plan");
  }
}

/// A compute step reads, for operand i, a buffer of operand i's tensor (its
/// own buffer, or a view of it for this expression and operand) and writes
/// the expression's output (its partial buffer for a partial).
void PlanReader::checkCompute(const At &at, const PlanStep &s, const Plan &plan,
                              const PlanBuffer &out) const {
  if (!s.expr)
    fail(at.path, "a compute step names its \"expr\"");
  const Expr &e = plan.fusion.exprs[*s.expr];
  if (s.inputs.size() != e.inputs.size())
    fail(at.path + "/inputs", "a compute step lists one buffer per operand of expression " +
                                  std::to_string(*s.expr) + " (" +
                                  std::to_string(e.inputs.size()) + ")");
  if (e.outputs.size() != 1)
    fail(at.path + "/expr", "expression " + std::to_string(*s.expr) + " has " +
                                std::to_string(e.outputs.size()) + " outputs; one is computed");
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    std::string path = appendPointer(at.path + "/inputs", i);
    if (!e.inputs[i].tensor) {
      if (!s.inputs[i].empty())
        fail(path, "operand " + std::to_string(i) + " is a scalar: its buffer is \"\"");
      continue;
    }
    if (s.inputs[i].empty())
      fail(path, "operand " + std::to_string(i) + " is a tensor and needs a buffer");
    const PlanBuffer &b = *bufferNamed(s.inputs[i]);
    bool own = b.kind == BufferKind::Tensor && b.tensor == *e.inputs[i].tensor;
    bool view = b.kind == BufferKind::View && b.tensor == *e.inputs[i].tensor &&
                b.expr == s.expr && b.operand == i;
    if (!own && !view)
      fail(path, "buffer " + quotedToken(b.name) + " does not hold operand " + std::to_string(i) +
                     " of expression " + std::to_string(*s.expr) + " (T" +
                     std::to_string(*e.inputs[i].tensor) + ")");
  }
  BufferKind expected = s.mode == ComputeMode::Partial ? BufferKind::Partial : BufferKind::Tensor;
  if (out.kind != expected || out.tensor != e.outputs[0] ||
      (expected == BufferKind::Partial && out.expr != s.expr))
    fail(at.path + "/output", std::string("a ") + computeModeName(s.mode) +
                                  " compute step of expression " + std::to_string(*s.expr) +
                                  " writes " + (expected == BufferKind::Partial ? "a partial "
                                                                                : "the ") +
                                  "buffer of T" + std::to_string(e.outputs[0]));
}

/// A copy places elements of one tensor: the input holds the producer's
/// elements that the output's slots expect (a copy into a consumer's own
/// buffer names the edge, through `expr` and `operand`).
void PlanReader::checkCopy(const At &at, const PlanStep &s, const Plan &plan,
                           const PlanBuffer &in, const PlanBuffer &out) const {
  TensorNum expected = out.tensor;
  if (out.kind == BufferKind::Tensor) {
    if (!s.expr || !s.operand)
      fail(at.path, "a copy into a tensor's buffer names the edge (\"expr\", \"operand\")");
    const Expr &e = plan.fusion.exprs[*s.expr];
    if (*s.operand >= e.inputs.size() || !e.inputs[*s.operand].tensor ||
        e.outputs.size() != 1 || e.outputs[0] != out.tensor)
      fail(at.path, "expression " + std::to_string(*s.expr) + " operand " +
                        std::to_string(*s.operand) + " is not an edge into T" +
                        std::to_string(out.tensor));
    expected = *e.inputs[*s.operand].tensor;
  } else if (out.kind == BufferKind::Partial) {
    fail(at.path + "/output", "a copy does not write a partial buffer");
  }
  if (in.kind == BufferKind::Partial || in.tensor != expected)
    fail(at.path + "/inputs", "buffer " + quotedToken(in.name) +
                                  " does not hold the elements of T" + std::to_string(expected) +
                                  " that " + quotedToken(out.name) + " expects");
}

/// A collective is called on each device of its step with the sizes of its
/// buffers there: every device of the step has exactly one `counts` entry,
/// with `in` exactly where the input buffer lives and `out` likewise.
void PlanReader::checkCounts(const At &at, const PlanStep &s, const PlanBuffer &in,
                             const PlanBuffer &out) const {
  std::set<int64_t> stepDevices(s.devices.begin(), s.devices.end()), seen;
  for (size_t i = 0; i < s.counts.size(); ++i) {
    const PlanCount &c = s.counts[i];
    std::string path = appendPointer(at.path + "/counts", i);
    std::string device = "device " + std::to_string(c.device);
    if (!stepDevices.count(c.device))
      fail(path, device + " is not a device of the step");
    if (!seen.insert(c.device).second)
      fail(path, device + " has two counts entries");
    checkCount(path, in, c.device, c.in, "input");
    checkCount(path, out, c.device, c.out, "output");
  }
  for (int64_t d : s.devices)
    if (!seen.count(d))
      fail(at.path + "/counts", "device " + std::to_string(d) + " of the step has no counts entry");
}

void PlanReader::checkCount(const std::string &path, const PlanBuffer &b, int64_t device,
                            const std::optional<Extent> &count, const char *which) const {
  const PlanLocal *local = localOn(b, device);
  std::string name = "buffer " + quotedToken(b.name);
  if (!local && count)
    fail(path, name + " has no local shape on device " + std::to_string(device));
  if (local && !count)
    fail(path, std::string("the ") + which + " count of device " + std::to_string(device) +
                   " is missing (" + name + " lives there)");
  if (!local)
    return;
  std::string size = slots(local->shape, path).str();
  if (size != count->str())
    fail(path, std::string("the ") + which + " count " + shownToken(count->str()) +
                   " of device " + std::to_string(device) + " is not the size of " + name + " (" +
                   shownToken(size) + ")");
}

void PlanReader::index(const Plan &plan) {
  planDevices_.insert(plan.devices.begin(), plan.devices.end());
  for (const PlanBuffer &b : plan.buffers) {
    buffers_.emplace(b.name, &b);
    for (const PlanLocal &l : b.local)
      locals_.emplace(std::make_pair(&b, l.device), &l);
  }
}

const PlanBuffer *PlanReader::bufferNamed(const std::string &name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? nullptr : it->second;
}

const PlanLocal *PlanReader::localOn(const PlanBuffer &b, int64_t device) const {
  auto it = locals_.find({&b, device});
  return it == locals_.end() ? nullptr : it->second;
}

void PlanReader::checkStep(const At &at, const PlanStep &s, const Plan &plan,
                           std::set<std::string> &written) const {
  for (int64_t d : s.devices)
    if (!planDevices_.count(d))
      fail(at.path + "/devices", "device " + std::to_string(d) + " is not a device of the plan");
  if (s.expr && *s.expr >= plan.fusion.exprs.size())
    fail(at.path + "/expr", "the plan's fusion has no expression " + std::to_string(*s.expr));
  auto requireBuffer = [&](const std::string &name, const std::string &path) {
    const PlanBuffer *b = bufferNamed(name);
    if (!b)
      fail(path, "no buffer is called " + quotedToken(name));
    return b;
  };
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    std::string path = appendPointer(at.path + "/inputs", i);
    if (s.inputs[i].empty() && s.kind == StepKind::Compute)
      continue; // A scalar operand (checkCompute checks that it is one).
    const PlanBuffer *b = requireBuffer(s.inputs[i], path);
    bool isFusionInput = b->kind == BufferKind::Tensor &&
                         !plan.fusion.producerExpr(b->tensor);
    if (!written.count(s.inputs[i]) && !isFusionInput)
      fail(path, "buffer " + quotedToken(s.inputs[i]) + " is read before any step writes it");
  }
  const PlanBuffer *out = requireBuffer(s.output, at.path + "/output");
  switch (s.kind) {
  case StepKind::Compute:
    checkCompute(at, s, plan, *out);
    break;
  case StepKind::Collective: {
    if (!s.collective)
      fail(at.path, "a collective step names its \"collective\"");
    if (s.inputs.size() != 1)
      fail(at.path + "/inputs", "a collective step has one input buffer");
    checkTeamsWithin(at, s.teams, planDevices_);
    bool reduction = isReductionCollective(*s.collective);
    if (reduction != s.reduceOp.has_value())
      fail(at.path, reduction ? "a reduction collective names its \"reduce_op\""
                              : "only reduction collectives have a \"reduce_op\"");
    const PlanBuffer *in = bufferNamed(s.inputs[0]);
    if (s.collective == CollectiveType::AllToAllv &&
        (in->kind != BufferKind::Packed || out->kind != BufferKind::Unpacked ||
         in->consumer != out->consumer || in->expr != out->expr || in->operand != out->operand))
      fail(at.path, "an AllToAllv moves a packed buffer into the unpacked buffer of the same "
                    "edge");
    checkCounts(at, s, *in, *out);
    break;
  }
  case StepKind::Alias:
  case StepKind::Copy:
    if (s.inputs.size() != 1)
      fail(at.path + "/inputs", std::string("an ") + stepKindName(s.kind) +
                                    " step has one input buffer");
    if (s.kind == StepKind::Copy)
      checkCopy(at, s, plan, *bufferNamed(s.inputs[0]), *out);
    break;
  }
  written.insert(s.output);
}

Plan PlanReader::read(const json &rootValue) {
  At root{rootValue, ""};
  if (!root.value.is_object())
    fail("", "a plan is a JSON object");
  Plan plan;
  header(root, plan);
  expectObject(root, {"format", "version", "checker_version", "input", "lowerings", "devices",
                      "constraints", "tensors", "buffers", "steps", "fusion"});
  // The fusion first: every other section refers to it.
  At fusionAt = field(root, "fusion");
  Document doc = jsonir::readJsonIr(fusionAt.value, positions_, file_, "/fusion");
  if (doc.fusions.size() != 1)
    fail("/fusion/fusions", "a plan embeds exactly one fusion, found " +
                                std::to_string(doc.fusions.size()));
  plan.fusion = std::move(doc.fusions.front());
  checkFusionLimits(plan.fusion);
  for (const At &c : elements(field(root, "constraints")))
    plan.constraints.push_back(constraint(c));
  for (const At &t : elements(field(root, "tensors")))
    plan.tensors.push_back(tensor(t, plan.fusion));
  std::set<std::string> names;
  for (const At &b : elements(field(root, "buffers"))) {
    plan.buffers.push_back(buffer(b, plan));
    if (!names.insert(plan.buffers.back().name).second)
      fail(b.path + "/name", "two buffers are called " + quotedToken(plan.buffers.back().name));
  }
  index(plan);
  std::set<std::string> written;
  for (const At &s : elements(field(root, "steps"))) {
    plan.steps.push_back(step(s, plan));
    checkStep(s, plan.steps.back(), plan, written);
  }
  for (TensorNum t : plan.fusion.outputs)
    if (plan.fusion.producerExpr(t) && !written.count(tensorName(t)))
      fail("/steps", "no step writes the fusion output " + tensorName(t));
  return plan;
}

} // namespace

Plan planFromJsonText(const std::string &text, const std::string &file) {
  jsonir::ParsedJson parsed =
      jsonir::parseJsonText(text, file, {"plan-malformed", "plan-invalid", "plan JSON"});
  PlanReader reader(parsed.positions, file);
  return jsonir::guardJsonExceptions(file, "plan-invalid",
                                     [&] { return reader.read(parsed.root); });
}

} // namespace shardcheck
