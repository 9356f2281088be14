// JSON text -> Plan (docs/plan-format.md).
//
// Reading goes in three passes: the JSON text (parseJsonText: UTF-8, limits,
// syntax, duplicate keys, located by byte offset), the schema (every field's
// type, located by JSON pointer through JsonPositions), and consistency
// across fields (PlanVerifier, run as each buffer and step is read so that an
// error is reported where reading reached). Every failure is an InputError at
// the offending value: an inconsistent plan is the user's problem to see,
// never a crash of the executor later.
//
// Does not: write plans (PlanWriter.cpp) or judge whether a plan is *right*
// (the checker proves it and the executor's validation confirms it).
#include "ir/Json.h"
#include "ir/Limits.h"
#include "ir/Scalars.h"
#include "ir/json/JsonIrReader.h"
#include "ir/json/JsonPositions.h"
#include "ir/json/JsonText.h"
#include "plan/Plan.h"
#include "plan/PlanVerifier.h"
#include "util/Checked.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace shardcheck {

using jsonir::appendPointer;
using jsonir::atPointer;
using jsonir::JsonPositions;
using jsonir::quotedToken;
using nlohmann::json;

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

  /// The plan `root` holds; the first schema or consistency failure throws.
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
  /// The value `at`'s string spells in `table` (util/Spellings.h).
  template <class Table> auto enumValue(const At &at, const Table &table) const {
    std::string s = string(at);
    if (auto value = parseIn(table, s))
      return *value;
    fail(at.path, quotedToken(s) + " is not one of " + choicesIn(table));
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

  /// `what` exists from kPlanLoopVersion on.
  void requireVersion(const At &at, const Plan &plan, const std::string &what) const {
    if (plan.version < kPlanLoopVersion)
      fail(at.path, what + " needs plan version " + std::to_string(kPlanLoopVersion) +
                        "; this plan says version " + std::to_string(plan.version));
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

  const JsonPositions &positions_;
  std::string file_;
  /// Set once the header and fusion are read.
  std::optional<PlanVerifier> verifier_;
};

void PlanReader::header(const At &root, Plan &plan) const {
  auto format = root.value.find("format");
  if (format == root.value.end() || !format->is_string() || *format != kPlanFormat)
    fail(format == root.value.end() ? "" : "/format",
         std::string("not a shardcheck plan: expected \"format\": \"") + kPlanFormat + "\"");
  At version = field(root, "version");
  auto v = jsonir::jsonInt64(version.value);
  if (!v || *v < 1 || *v > kPlanVersion)
    fail(version.path, "unsupported plan version " + shownToken(version.value.dump()) +
                           "; this shardcheck reads versions 1 to " + std::to_string(kPlanVersion));
  plan.version = static_cast<int>(*v);
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
  c.kind = enumValue(field(at, "kind"), kPlanConstraintKinds);
  c.lhs = extent(field(at, "lhs"));
  c.rhs = extent(field(at, "rhs"));
  c.text = string(field(at, "text"));
  return c;
}

PlanTensor PlanReader::tensor(const At &at, const Fusion &fusion) const {
  expectObject(at, {"tensor", "role", "shape", "sharding"});
  PlanTensor t;
  t.tensor = tensorRef(field(at, "tensor"), fusion);
  // The roles are plain strings (PlanTensor::role); the table lists them.
  static constexpr Spelling<std::string_view> kRoles[] = {
      {"input", "input"}, {"output", "output"}, {"intermediate", "intermediate"}};
  t.role = enumValue(field(at, "role"), kRoles);
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
                    "collective", "base", "axis", "loop", "swizzle_team", "local"});
  PlanBuffer b;
  b.name = string(field(at, "name"));
  if (b.name.empty())
    fail(at.path + "/name", "a buffer needs a name");
  b.kind = enumValue(field(at, "kind"), kBufferKinds);
  if (b.kind == BufferKind::Slice)
    requireVersion(at, plan, "a slice buffer");
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
  if (auto base = optionalField(at, "base"))
    b.base = string(*base);
  if (auto axis = optionalField(at, "axis"))
    b.axis = static_cast<size_t>(nonNegative(*axis));
  if (auto loop = optionalField(at, "loop"))
    b.loopVar = string(*loop);
  if (auto team = optionalField(at, "swizzle_team"))
    b.swizzleTeam = devices(*team);
  for (const At &l : elements(field(at, "local"))) {
    expectObject(l, {"device", "shape", "held"});
    b.local.push_back(PlanLocal{nonNegative(field(l, "device")), extents(field(l, "shape"))});
    if (auto h = optionalField(l, "held"))
      b.local.back().held = nonNegative(*h);
    verifier_->slots(b.local.back().shape, l.path + "/shape"); // its count must fit in int64
  }
  return b;
}

PlanVerdict PlanReader::verdict(const At &at) const {
  expectObject(at, {"edge", "expr", "claim", "status", "source", "detail", "checker_version",
                    "input_sha256"});
  PlanVerdict v;
  v.edge = string(field(at, "edge"));
  v.expr = static_cast<size_t>(nonNegative(field(at, "expr")));
  v.claim = string(field(at, "claim"));
  v.status = enumValue(field(at, "status"), kPlanStatuses);
  v.source = string(field(at, "source"));
  if (auto d = optionalField(at, "detail"))
    v.detail = string(*d);
  v.checkerVersion = string(field(at, "checker_version"));
  v.inputSha256 = string(field(at, "input_sha256"));
  return v;
}

PlanStep PlanReader::step(const At &at, const Plan &plan) const {
  expectObject(at, {"index", "kind", "devices", "expr", "mode", "inputs", "output", "collective",
                    "teams", "reduce_op", "ring", "counts", "operand", "var", "lo", "hi", "body",
                    "rests_on"});
  PlanStep s;
  s.kind = enumValue(field(at, "kind"), kStepKinds);
  if (s.kind == StepKind::Loop) {
    requireVersion(at, plan, "a loop step");
    s.loopVar = string(field(at, "var"));
    s.lo = extent(field(at, "lo"));
    s.hi = extent(field(at, "hi"));
    s.body = static_cast<size_t>(nonNegative(field(at, "body")));
  }
  s.devices = devices(field(at, "devices"));
  if (auto e = optionalField(at, "expr"))
    s.expr = static_cast<size_t>(nonNegative(*e));
  if (auto m = optionalField(at, "mode"))
    s.mode = enumValue(*m, kComputeModes);
  for (const At &in : elements(field(at, "inputs")))
    s.inputs.push_back(string(in));
  s.output = string(field(at, "output"));
  if (auto c = optionalField(at, "collective"))
    s.collective = named(*c, parsePlanCollective, collectiveChoices(&CollectiveInfo::plan));
  if (auto t = optionalField(at, "teams"))
    s.teams = teams(*t);
  if (auto r = optionalField(at, "reduce_op"))
    s.reduceOp = named(*r, parseReduceOp, reduceOpChoices());
  if (auto r = optionalField(at, "ring")) {
    expectObject(*r, {"loop", "recv_shift", "send_shift"});
    s.ring = PlanRing{string(field(*r, "loop")), nonNegative(field(*r, "recv_shift")),
                      nonNegative(field(*r, "send_shift"))};
  }
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
    fail("/fusion/fusions",
         "a plan embeds exactly one fusion, found " + std::to_string(doc.fusions.size()));
  plan.fusion = std::move(doc.fusions.front());
  checkFusionLimits(plan.fusion);
  for (const At &c : elements(field(root, "constraints")))
    plan.constraints.push_back(constraint(c));
  for (const At &t : elements(field(root, "tensors")))
    plan.tensors.push_back(tensor(t, plan.fusion));
  verifier_.emplace(
      plan, [this](const std::string &path, const std::string &message) { fail(path, message); });
  for (const At &b : elements(field(root, "buffers"))) {
    plan.buffers.push_back(buffer(b, plan));
    verifier_->checkBuffer(plan.buffers.size() - 1);
  }
  verifier_->indexBuffers();
  for (const At &s : elements(field(root, "steps"))) {
    plan.steps.push_back(step(s, plan));
    verifier_->checkStep(plan.steps.size() - 1);
  }
  verifier_->checkOutputsWritten();
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
