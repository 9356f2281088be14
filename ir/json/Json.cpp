// Writing the JSON IR (format "shardcheck-ir", version 1; docs/json-ir.md)
// and the entry point for reading it.
//
// documentToJson turns every field of a Document into JSON, losslessly:
// extents become expression trees, enums their enumerator names, locations
// `{"line", "column"[, "file"]}` objects (the file only where it differs from
// the document's). Fields at their default are left out where the format
// defines that default, which keeps files short without losing anything.
// documentToJsonText lays the JSON out for people: short values on one line,
// keys in a fixed, meaningful order.
//
// Reading is parseJsonText (JsonText.h: UTF-8, limits, syntax, duplicate
// keys) and then readJsonIr (JsonIrReader.cpp: schema and IR); this file only
// joins them and adds the one rule of whole files: a document has a fusion.
#include "ir/Json.h"

#include "ir/json/InputRules.h"
#include "ir/json/JsonIrReader.h"
#include "ir/json/JsonSpellings.h"
#include "ir/json/JsonText.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace shardcheck {

using nlohmann::json;
using namespace jsonir;

json extentToJson(const Extent &e) {
  switch (e.kind()) {
  case Extent::Kind::Constant:
    return *e.asConstant();
  case Extent::Kind::Symbol:
    return e.symbolName();
  default:
    return json{{"op", extentOpJsonName(e.kind())},
                {"lhs", extentToJson(e.lhs())},
                {"rhs", extentToJson(e.rhs())}};
  }
}

std::optional<Extent> extentFromJson(const json &v, int depth) {
  if (depth > kMaxJsonDepth)
    return std::nullopt;
  if (v.is_number()) {
    auto n = jsonInt64(v);
    if (!n || *n < 0)
      return std::nullopt; // sizes are non-negative int64
    return Extent::constant(*n);
  }
  if (v.is_string() && !v.get<std::string>().empty())
    return Extent::symbol(v.get<std::string>());
  if (!v.is_object() || !v.contains("op") || !v["op"].is_string() || !v.contains("lhs") ||
      !v.contains("rhs") || v.size() != 3)
    return std::nullopt;
  auto kind = parseExtentOpJson(v["op"].get<std::string>());
  auto lhs = extentFromJson(v["lhs"], depth + 1);
  auto rhs = extentFromJson(v["rhs"], depth + 1);
  if (!kind || !lhs || !rhs)
    return std::nullopt;
  Extent e = binaryExtent(*kind, *lhs, *rhs);
  if (extentArithmeticProblem(*kind, *rhs, e))
    return std::nullopt;
  return e;
}

namespace {

/// null for the fully unknown location of programmatically built IR.
json locToJson(const SourceLoc &loc, const std::string &documentFile) {
  if (loc.file.empty() && loc.line == 0 && loc.column == 0)
    return nullptr;
  json j{{"line", loc.line}, {"column", loc.column}};
  if (loc.file != documentFile)
    j["file"] = loc.file;
  return j;
}

json meshToJson(const DeviceMesh &mesh) {
  return json{{"shape", mesh.shape()}, {"devices", mesh.devices()}};
}

json iterDomainToJson(const IterDomain &id, const std::string &documentFile) {
  json j{{"number", id.number},
         {"iterType", iterTypeJsonName(id.iterType)},
         {"parallel", parallelTypeJsonName(id.parallel)},
         {"extent", extentToJson(id.extent)}};
  if (id.expandedExtent)
    j["expandedExtent"] = extentToJson(*id.expandedExtent);
  if (id.start)
    j["start"] = extentToJson(*id.start);
  if (id.stop)
    j["stop"] = extentToJson(*id.stop);
  if (id.rfactor)
    j["rfactor"] = true;
  if (!id.extraSuffix.empty())
    j["extraSuffix"] = id.extraSuffix;
  // `definition` is not written: the reader derives it from the transforms.
  j["loc"] = locToJson(id.loc, documentFile);
  return j;
}

json transformToJson(const Transform &t, const std::string &documentFile) {
  json j{{"kind", transformKindJsonName(t.kind)}, {"inputs", t.inputs}, {"outputs", t.outputs}};
  // Fields of other kinds are written only when they carry something, so a
  // Merge does not show a meaningless factor yet nothing is lost.
  bool isSplit = t.kind == Transform::Kind::Split;
  bool isResize = t.kind == Transform::Kind::Resize;
  if (isSplit || t.factor != Extent())
    j["factor"] = extentToJson(t.factor);
  if (isSplit || !t.innerSplit)
    j["innerSplit"] = t.innerSplit;
  if (t.chunked) // Absent on every nvFuser split (docs/json-ir.md).
    j["chunked"] = true;
  if (isResize || t.left != Extent())
    j["left"] = extentToJson(t.left);
  if (isResize || t.right != Extent())
    j["right"] = extentToJson(t.right);
  if (!t.detail.empty())
    j["detail"] = t.detail;
  j["loc"] = locToJson(t.loc, documentFile);
  return j;
}

json contiguityToJson(const std::vector<Contiguity> &contiguity) {
  json j = json::array();
  for (Contiguity c : contiguity)
    j.push_back(c == Contiguity::None ? json(nullptr) : json(c == Contiguity::True));
  return j;
}

json tensorToJson(const TensorView &tv, const std::string &documentFile) {
  json j{{"number", tv.number}, {"memory", memoryTypeJsonName(tv.memory)}};
  if (tv.dtype != DataType::Unknown)
    j["dtype"] = dataTypeJsonName(tv.dtype);
  j["root"] = tv.root;
  j["logical"] = tv.logical;
  j["allocation"] = tv.allocation;
  j["loop"] = tv.loop;
  j["contiguity"] = contiguityToJson(tv.contiguity);
  if (tv.mesh)
    j["mesh"] = meshToJson(*tv.mesh);
  if (tv.caPos)
    j["caPos"] = *tv.caPos;
  if (tv.producePos)
    j["producePos"] = *tv.producePos;
  if (!tv.hasTransformInfo)
    j["hasTransformInfo"] = false; // JSON gives domains, so true is the default
  j["loc"] = locToJson(tv.loc, documentFile);
  j["domainsLoc"] = locToJson(tv.domainsLoc, documentFile);
  return j;
}

json operandToJson(const Operand &o) {
  json j = json::object();
  if (o.tensor)
    j["tensor"] = *o.tensor;
  if (!o.scalar.empty() || !o.tensor)
    j["scalar"] = o.scalar;
  return j;
}

json communicationToJson(const CommunicationInfo &c) {
  json j{{"number", c.number}, {"type", collectiveTypeName(c.type)}, {"team", c.team}};
  if (c.root)
    j["root"] = *c.root;
  if (!c.backend.empty())
    j["backend"] = c.backend;
  return j;
}

json exprToJson(const Expr &e, const std::string &documentFile) {
  json inputs = json::array();
  for (const auto &o : e.inputs)
    inputs.push_back(operandToJson(o));
  json j{{"kind", opKindJsonName(e.kind)},
         {"op", e.op},
         {"inputs", std::move(inputs)},
         {"outputs", e.outputs}};
  if (!e.flags.empty())
    j["flags"] = e.flags;
  if (!e.attrs.empty()) {
    json attrs = json::array();
    for (const auto &[key, value] : e.attrs)
      attrs.push_back(json::array({key, value}));
    j["attrs"] = std::move(attrs);
  }
  if (e.communication)
    j["communication"] = communicationToJson(*e.communication);
  j["loc"] = locToJson(e.loc, documentFile);
  return j;
}

json groupToJson(const SegmentGroup &g) {
  return json{{"name", g.name}, {"scheduler", g.scheduler}, {"exprs", g.exprs}};
}

json fusionToJson(const Fusion &f, const std::string &documentFile) {
  json ids = json::array(), transforms = json::array(), tensors = json::array(),
       exprs = json::array();
  for (const auto &[number, id] : f.ids)
    ids.push_back(iterDomainToJson(id, documentFile));
  for (const auto &t : f.transforms)
    transforms.push_back(transformToJson(t, documentFile));
  for (const auto &[number, tv] : f.tensors)
    tensors.push_back(tensorToJson(tv, documentFile));
  for (const auto &e : f.exprs)
    exprs.push_back(exprToJson(e, documentFile));
  json j{{"kind", blockKindJsonName(f.kind)},
         {"inputs", f.inputs},
         {"outputs", f.outputs},
         {"iterDomains", std::move(ids)},
         {"transforms", std::move(transforms)},
         {"tensors", std::move(tensors)},
         {"exprs", std::move(exprs)}};
  if (!f.groups.empty()) {
    json groups = json::array();
    for (const auto &g : f.groups)
      groups.push_back(groupToJson(g));
    j["groups"] = std::move(groups);
  }
  j["loc"] = locToJson(f.loc, documentFile);
  return j;
}

// --- Text layout. ---

constexpr size_t kLineWidth = 120;

/// Keys print in this order (unknown keys after, alphabetically), so that a
/// node reads identity first, then shape, then links, then location.
constexpr std::string_view kKeyOrder[] = {
    "format", "version", "file", "fusions", "kind", "number", "name", "scheduler", "op", "type",
    "iterType", "parallel", "memory", "dtype", "extent", "expandedExtent", "start", "stop",
    "rfactor", "extraSuffix", "inputs", "outputs", "factor", "innerSplit", "chunked", "left",
    "right", "detail", "root", "logical", "allocation", "loop", "contiguity", "mesh", "caPos",
    "producePos", "hasTransformInfo", "flags", "attrs", "communication", "team", "backend",
    "iterDomains", "transforms", "tensors", "exprs", "groups", "shape", "devices", "lhs", "rhs",
    "line", "column", "loc", "domainsLoc",
    // Plan keys (docs/plan-format.md), after the IR's.
    "checker_version", "input", "lowerings", "constraints", "buffers", "steps", "index", "mode",
    "inputs", "output", "consumer", "operand", "collective", "reduce_op", "counts", "local", "role",
    "sharding", "edge", "claim", "status", "source", "detail", "input_sha256", "text", "sha256",
    "fusion"};

size_t keyRank(const std::string &key) {
  auto it = std::find(std::begin(kKeyOrder), std::end(kKeyOrder), key);
  return static_cast<size_t>(it - std::begin(kKeyOrder)); // unknown: one past the end
}

std::vector<std::string> orderedKeys(const json &object) {
  std::vector<std::string> keys;
  for (const auto &item : object.items())
    keys.push_back(item.key());
  std::stable_sort(keys.begin(), keys.end(), [](const std::string &a, const std::string &b) {
    return keyRank(a) != keyRank(b) ? keyRank(a) < keyRank(b) : a < b;
  });
  return keys;
}

std::string scalarText(const json &v) {
  // Replacing invalid UTF-8 keeps writing total; dumps are ASCII in practice.
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

void writeInline(const json &v, std::string &out) {
  if (v.is_object()) {
    out += "{";
    bool first = true;
    for (const auto &key : orderedKeys(v)) {
      out += first ? "" : ", ";
      first = false;
      out += scalarText(json(key)) + ": ";
      writeInline(v.at(key), out);
    }
    out += "}";
  } else if (v.is_array()) {
    out += "[";
    for (size_t i = 0; i < v.size(); ++i) {
      out += i ? ", " : "";
      writeInline(v[i], out);
    }
    out += "]";
  } else {
    out += scalarText(v);
  }
}

void writePretty(const json &v, size_t indent, std::string &out) {
  std::string inlineText;
  writeInline(v, inlineText);
  if (!v.is_structured() || indent + inlineText.size() <= kLineWidth) {
    out += inlineText;
    return;
  }
  std::string pad(indent + 2, ' ');
  out += v.is_object() ? "{\n" : "[\n";
  if (v.is_object()) {
    auto keys = orderedKeys(v);
    for (size_t i = 0; i < keys.size(); ++i) {
      out += pad + scalarText(json(keys[i])) + ": ";
      writePretty(v.at(keys[i]), indent + 2, out);
      out += i + 1 < keys.size() ? ",\n" : "\n";
    }
  } else {
    for (size_t i = 0; i < v.size(); ++i) {
      out += pad;
      writePretty(v[i], indent + 2, out);
      out += i + 1 < v.size() ? ",\n" : "\n";
    }
  }
  out += std::string(indent, ' ') + (v.is_object() ? "}" : "]");
}

} // namespace

std::string jsonToText(const json &value) {
  std::string out;
  writePretty(value, 0, out);
  return out + "\n";
}

json documentToJson(const Document &doc) {
  json fusions = json::array();
  for (const auto &f : doc.fusions)
    fusions.push_back(fusionToJson(f, doc.file));
  return json{{"format", "shardcheck-ir"},
              {"version", kJsonIrVersion},
              {"file", doc.file},
              {"fusions", std::move(fusions)}};
}

std::string documentToJsonText(const Document &doc) {
  std::string out;
  writePretty(documentToJson(doc), 0, out);
  out += "\n";
  return out;
}

Document documentFromJsonText(std::string_view text, const std::string &file) {
  ParsedJson parsed = parseJsonText(text, file, {"json-malformed", "json-schema", "JSON"});
  Document doc = guardJsonExceptions(
      file, "json-schema", [&] { return readJsonIr(parsed.root, parsed.positions, file); });
  // As for an empty dump: a file without a fusion is no input to check.
  if (doc.fusions.empty())
    throwInputError("no-fusion", "the JSON IR document has no fusion" + atPointer("/fusions"),
                    parsed.positions.locate("/fusions"));
  return doc;
}

} // namespace shardcheck
