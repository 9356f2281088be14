// Reading a DTensor document; see DTensorReader.h and docs/dtensor.md.
//
// A small schema walk over ir/json's parsed tree: every value is read
// through Node (the JSON value and its pointer), so every error names the
// place it was found. It does not map placements to the IR.
#include "dtensor/DTensorReader.h"

#include "ir/json/JsonText.h"

#include <algorithm>
#include <regex>
#include <set>

namespace shardcheck::dtensor {

using nlohmann::json;

namespace {

constexpr const char *kSchema = "dtensor-schema";

/// A JSON value and where it is.
struct Node {
  const json &value;
  std::string path;
};

class Reader {
public:
  Reader(const jsonir::ParsedJson &parsed, std::string file)
      : parsed_(parsed), file_(std::move(file)) {}

  DTensorCase read();

private:
  [[noreturn]] void fail(const std::string &code, const std::string &path,
                         const std::string &message) const {
    throwInputError(code, message + jsonir::atPointer(path), parsed_.positions.locate(path));
  }
  SourceLoc loc(const std::string &path) const { return parsed_.positions.locate(path); }

  void expectObject(const Node &n, const char *what, std::set<std::string> allowed) const;
  std::optional<Node> optional(const Node &n, const char *key) const;
  Node required(const Node &n, const char *key) const;
  std::string string(const Node &n) const;
  int64_t integer(const Node &n, int64_t min) const;
  std::vector<int64_t> integers(const Node &n, int64_t min) const;
  std::vector<Node> elements(const Node &n) const;

  void mesh(const Node &n, DTensorCase &c) const;
  void tensor(const Node &n, DTensorCase &c) const;
  Placements placements(const Node &n) const;
  Placement placement(const Node &n) const;
  Issued issued(const Node &n, const DeviceMesh &mesh) const;
  IssuedCollective collective(const Node &n, const DeviceMesh &mesh) const;
  void requireMeshDevice(const Node &n, int64_t device, const DeviceMesh &mesh) const;
  IssuedStep step(const Node &n, size_t collectiveCount) const;

  const jsonir::ParsedJson &parsed_;
  std::string file_;
};

void Reader::expectObject(const Node &n, const char *what, std::set<std::string> allowed) const {
  if (!n.value.is_object())
    fail(kSchema, n.path, std::string(what) + " must be a JSON object");
  for (const auto &[key, _] : n.value.items())
    if (!allowed.count(key))
      fail(kSchema, jsonir::appendPointer(n.path, key),
           "unknown field " + jsonir::quotedToken(key) + " in " + what);
}

std::optional<Node> Reader::optional(const Node &n, const char *key) const {
  auto it = n.value.find(key);
  if (it == n.value.end() || it->is_null())
    return std::nullopt;
  return Node{*it, jsonir::appendPointer(n.path, key)};
}

Node Reader::required(const Node &n, const char *key) const {
  if (auto v = optional(n, key))
    return *v;
  fail(kSchema, n.path, std::string("missing field \"") + key + "\"");
}

std::string Reader::string(const Node &n) const {
  if (!n.value.is_string())
    fail(kSchema, n.path, "expected a string");
  return n.value.get<std::string>();
}

int64_t Reader::integer(const Node &n, int64_t min) const {
  auto v = jsonir::jsonInt64(n.value);
  if (!v || *v < min)
    fail(kSchema, n.path, "expected an integer >= " + std::to_string(min));
  return *v;
}

std::vector<Node> Reader::elements(const Node &n) const {
  if (!n.value.is_array())
    fail(kSchema, n.path, "expected an array");
  std::vector<Node> r;
  for (size_t i = 0; i < n.value.size(); ++i)
    r.push_back(Node{n.value[i], jsonir::appendPointer(n.path, i)});
  return r;
}

std::vector<int64_t> Reader::integers(const Node &n, int64_t min) const {
  std::vector<int64_t> r;
  for (const Node &e : elements(n))
    r.push_back(integer(e, min));
  return r;
}

void Reader::mesh(const Node &n, DTensorCase &c) const {
  expectObject(n, "mesh", {"shape", "devices", "dim_names"});
  Node shapeNode = required(n, "shape");
  std::vector<int64_t> shape = integers(shapeNode, 1);
  if (shape.empty())
    fail(kSchema, shapeNode.path, "a DTensor mesh has at least one dim");
  Node devicesNode = required(n, "devices");
  std::vector<int64_t> devices = integers(devicesNode, 0);
  int64_t count = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(count, s, &count))
      fail(kSchema, shapeNode.path, "the mesh is too large");
  if (count != static_cast<int64_t>(devices.size()))
    fail(kSchema, devicesNode.path,
         "the mesh shape holds " + std::to_string(count) + " devices but " +
             std::to_string(devices.size()) + " are listed");
  std::set<int64_t> distinct(devices.begin(), devices.end());
  if (distinct.size() != devices.size())
    fail(kSchema, devicesNode.path, "a device is listed twice");
  c.mesh = DeviceMesh::create(shape, devices);
  c.meshLoc = loc(n.path);
  if (auto names = optional(n, "dim_names")) {
    for (const Node &e : elements(*names))
      c.meshDimNames.push_back(string(e));
    if (c.meshDimNames.size() != shape.size())
      fail(kSchema, names->path, "one name per mesh dim");
  }
}

void Reader::tensor(const Node &n, DTensorCase &c) const {
  expectObject(n, "tensor", {"shape", "dtype"});
  Node shape = required(n, "shape");
  c.shape = integers(shape, 1);
  int64_t count = 1;
  for (int64_t s : c.shape)
    if (__builtin_mul_overflow(count, s, &count))
      fail(kSchema, shape.path, "the tensor has more elements than a signed 64-bit integer counts");
  c.dtype = optional(n, "dtype") ? string(*optional(n, "dtype")) : "float32";
  c.tensorLoc = loc(n.path);
}

Placement Reader::placement(const Node &n) const {
  std::string text = string(n);
  auto p = parsePlacement(text);
  if (!p)
    fail(kSchema, n.path,
         "unknown placement " + jsonir::quotedToken(text) +
             " (expected Shard(d), _StridedShard(d, split_factor=f), Replicate() or "
             "Partial(sum|avg|max|min))");
  p->loc = loc(n.path);
  return *p;
}

Placements Reader::placements(const Node &n) const {
  expectObject(n, "placements", {"placements", "shard_order"});
  Placements r;
  r.loc = loc(n.path);
  for (const Node &e : elements(required(n, "placements")))
    r.perMeshDim.push_back(placement(e));
  if (auto order = optional(n, "shard_order"))
    for (const Node &e : elements(*order)) {
      expectObject(e, "shard_order entry", {"tensor_dim", "mesh_dims"});
      r.shardOrder.push_back(
          {integer(required(e, "tensor_dim"), 0), integers(required(e, "mesh_dims"), 0)});
    }
  return r;
}

/// A rank or group member a collective names must be a device of the mesh:
/// the mapping locates it there.
void Reader::requireMeshDevice(const Node &n, int64_t device, const DeviceMesh &mesh) const {
  if (!mesh.contains(device))
    fail(kSchema, n.path, "rank " + std::to_string(device) + " is not a device of the mesh");
}

IssuedCollective Reader::collective(const Node &n, const DeviceMesh &mesh) const {
  expectObject(n, "collective", {"kind", "op", "reduce_op", "ranks"});
  IssuedCollective c;
  c.loc = loc(n.path);
  c.kind = string(required(n, "kind"));
  static const std::set<std::string> kinds = {"all_gather", "reduce_scatter", "all_reduce",
                                              "all_to_all", "broadcast"};
  if (!kinds.count(c.kind))
    fail(kSchema, n.path + "/kind",
         "unknown collective kind " + jsonir::quotedToken(c.kind) +
             " (all_gather, reduce_scatter, all_reduce, all_to_all, broadcast)");
  if (auto op = optional(n, "op"))
    c.op = string(*op);
  if (auto op = optional(n, "reduce_op"))
    c.reduceOp = string(*op);
  for (const Node &r : elements(required(n, "ranks"))) {
    expectObject(r, "rank entry", {"rank", "group", "input_shape", "output_shape"});
    Node rank = required(r, "rank"), group = required(r, "group");
    c.ranks.push_back(RankCall{integer(rank, 0), integers(group, 0),
                               integers(required(r, "input_shape"), 0),
                               integers(required(r, "output_shape"), 0)});
    requireMeshDevice(rank, c.ranks.back().rank, mesh);
    for (const Node &member : elements(group))
      requireMeshDevice(member, integer(member, 0), mesh);
  }
  return c;
}

IssuedStep Reader::step(const Node &n, size_t collectiveCount) const {
  expectObject(n, "step", {"mesh_dim", "from", "to", "collectives"});
  IssuedStep s;
  s.loc = loc(n.path);
  s.meshDim = integer(required(n, "mesh_dim"), 0);
  s.from = placement(required(n, "from"));
  s.to = placement(required(n, "to"));
  if (auto list = optional(n, "collectives"))
    for (const Node &e : elements(*list)) {
      int64_t i = integer(e, 0);
      if (static_cast<size_t>(i) >= collectiveCount)
        fail(kSchema, e.path, "no collective " + std::to_string(i) + " is listed");
      s.collectives.push_back(static_cast<size_t>(i));
    }
  return s;
}

Issued Reader::issued(const Node &n, const DeviceMesh &mesh) const {
  expectObject(n, "dtensor",
               {"recorder", "torch_version", "rank_views", "steps", "collectives", "comm_counts"});
  Issued r;
  r.loc = loc(n.path);
  if (auto v = optional(n, "torch_version"))
    r.torchVersion = string(*v);
  if (auto list = optional(n, "collectives"))
    for (const Node &e : elements(*list))
      r.collectives.push_back(collective(e, mesh));
  for (const Node &e : elements(required(n, "steps")))
    r.steps.push_back(step(e, r.collectives.size()));
  return r;
}

DTensorCase Reader::read() {
  Node root{parsed_.root, ""};
  if (!root.value.is_object() || !root.value.contains("format") ||
      !root.value["format"].is_string() || root.value["format"] != kDTensorFormat)
    fail("dtensor-format", root.value.is_object() && root.value.contains("format") ? "/format" : "",
         std::string("not a DTensor document this shardcheck reads: expected \"format\": \"") +
             kDTensorFormat + "\"");
  expectObject(root, "DTensor document",
               {"format", "name", "mesh", "tensor", "source", "target", "dtensor", "recorder_error",
                "expect", "notes"});
  DTensorCase c;
  c.file = file_;
  c.loc = loc("");
  if (auto name = optional(root, "name"))
    c.name = string(*name);
  mesh(required(root, "mesh"), c);
  tensor(required(root, "tensor"), c);
  c.source = placements(required(root, "source"));
  c.target = placements(required(root, "target"));
  if (auto d = optional(root, "dtensor"))
    c.issued = issued(*d, c.mesh);
  if (auto e = optional(root, "recorder_error"))
    c.recorderError = string(*e);
  for (const char *key : {"expect", "notes"})
    if (auto list = optional(root, key))
      for (const Node &e : elements(*list))
        string(e);
  return c;
}

} // namespace

bool isDTensorText(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '{')
    return false;
  // Cheap before a parse: the format key's value must name this format.
  static const std::regex formatKey(R"re("format"\s*:\s*"shardcheck-dtensor/)re");
  std::string head(text.substr(0, std::min<size_t>(text.size(), 4096)));
  return std::regex_search(head, formatKey);
}

std::optional<Placement> parsePlacement(std::string_view spelling) {
  std::string s;
  for (char ch : spelling)
    if (ch != ' ')
      s += ch;
  static const std::regex shard(R"((?:Shard|S)\((?:dim=)?(\d{1,6})\))");
  static const std::regex strided(
      R"((?:_StridedShard|_S)\((?:dim=)?(\d{1,6}),(?:split_factor=|sf=)?(\d{1,9})\))");
  static const std::regex replicate(R"(R|Replicate(?:\(\))?)");
  static const std::regex partial(R"((?:Partial|P)(?:\((?:reduce_op=)?(\w*)\))?)");
  std::smatch m;
  Placement p;
  p.spelling = std::string(spelling);
  if (std::regex_match(s, m, shard)) {
    p.kind = Placement::Kind::Shard;
    p.dim = std::stoll(m[1]);
  } else if (std::regex_match(s, m, strided)) {
    p.kind = Placement::Kind::Shard;
    p.dim = std::stoll(m[1]);
    p.splitFactor = std::stoll(m[2]);
  } else if (std::regex_match(s, m, replicate)) {
    p.kind = Placement::Kind::Replicate;
  } else if (std::regex_match(s, m, partial)) {
    p.kind = Placement::Kind::Partial;
    p.reduceOp = m[1].matched && m[1].length() > 0 ? std::string(m[1]) : "sum";
  } else {
    return std::nullopt;
  }
  return p;
}

DTensorCase readDTensorCase(std::string_view text, const std::string &file) {
  jsonir::ParsedJson parsed =
      jsonir::parseJsonText(text, file, {"json-malformed", kSchema, "DTensor JSON"});
  return jsonir::guardJsonExceptions(file, kSchema, [&] { return Reader(parsed, file).read(); });
}

} // namespace shardcheck::dtensor
