// Validating JSON IR reader; see JsonIrReader.h and docs/json-ir.md.
//
// Every value is visited through an `At` (the value, its JSON pointer path and
// a human label such as `tensor field "logical"`), so that each check can say
// what was wrong, where in the JSON tree, and at which FILE:LINE:COL.
//
// Error codes: `json-format` (not a JSON IR document), `json-version`
// (another version), `json-schema` (missing, mistyped or unknown fields, bad
// enum names, integers out of range, extents that are no size: see
// ir/json/InputRules.h) and `json-inconsistent` (an IR that the schema
// allows but that makes no sense: unknown or duplicate numbers, double
// definitions, cycles, a pointwise kind whose `op` is not listed in
// ir/PointwiseOps.h). Messages quote input names bounded (quotedToken).
//
// The reader does not reclassify: an unlisted op must be written with kind
// "Other" (as the dump reader reads it), so a document cannot have a proof
// rest on a positional map for an op the reference evaluator cannot run.
#include "ir/json/JsonIrReader.h"

#include "ir/ExprShape.h"
#include "ir/Json.h"
#include "ir/Limits.h"
#include "ir/PointwiseOps.h"
#include "ir/Printer.h"
#include "ir/json/InputRules.h"
#include "ir/json/JsonSpellings.h"
#include "ir/json/JsonText.h"
#include "ir/reader/DumpReader.h"
#include "util/Checked.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace shardcheck::jsonir {

using nlohmann::json;

namespace {

/// A JSON value, where it is (JSON pointer) and what it is (for messages).
struct At {
  const json &value;
  std::string path;
  std::string label;
};

std::string typeName(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::object:
    return "an object";
  case json::value_t::array:
    return "an array";
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a non-integer number";
  default:
    return "an unsupported value";
  }
}

/// Line `n` (1-based) of `text` without its indentation; empty past the end.
std::string lineAt(std::string_view text, int n) {
  size_t start = 0;
  for (int i = 1; i < n; ++i) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      return "";
    start = end + 1;
  }
  if (n < 1 || start >= text.size())
    return "";
  std::string_view line = text.substr(start, text.find('\n', start) - start);
  size_t first = line.find_first_not_of(" \t");
  return first == std::string_view::npos ? "" : std::string(line.substr(first));
}

/// Symbols print inside `{...}` of an IterDomain and inside `( ... )`
/// extents: a name without blanks, braces, parentheses or commas, or a
/// function of extents the dump reader keeps opaque, spelled as it spells
/// one (`max(i0, 3)`). checkPrintsBack judges whether the call reads back.
bool isPrintableSymbol(const std::string &s) {
  auto plain = [](std::string_view name) {
    return !name.empty() && name.find_first_of(" \t\n\r{}(),") == std::string_view::npos;
  };
  size_t open = s.find('(');
  if (open == std::string::npos)
    return plain(s);
  return open > 0 && plain(std::string_view(s).substr(0, open)) && s.back() == ')' &&
         s.find_first_of("\t\n\r{}") == std::string::npos;
}

/// (inputs, outputs) each transform kind has.
std::pair<size_t, size_t> transformArity(Transform::Kind k) {
  switch (k) {
  case Transform::Kind::Split:
    return {1, 2};
  case Transform::Kind::Merge:
    return {2, 1};
  case Transform::Kind::Resize:
  case Transform::Kind::Swizzle1D:
    return {1, 1};
  case Transform::Kind::Swizzle2D:
    return {2, 2};
  }
  return {0, 0};
}

class Reader {
public:
  Reader(const JsonPositions &positions, std::string jsonFile)
      : positions_(positions), jsonFile_(std::move(jsonFile)) {}

  Document document(const json &root, const std::string &basePath);

private:
  // --- Failing with a location. ---
  [[noreturn]] void fail(const std::string &code, const std::string &path,
                         const std::string &message) const {
    throwInputError(code, message + atPointer(path), positions_.locate(path));
  }
  [[noreturn]] void failSchema(const At &at, const std::string &message) const {
    fail("json-schema", at.path, message);
  }
  [[noreturn]] void failInconsistent(const std::string &path, const std::string &message) const {
    fail("json-inconsistent", path, message);
  }
  int lineOf(const std::string &path) const { return positions_.locate(path).line; }

  // --- Schema helpers. ---
  void expectObject(const At &at) const;
  void checkKeys(const At &object, std::initializer_list<std::string_view> allowed) const;
  At field(const At &object, const std::string &key) const;
  std::optional<At> optionalField(const At &object, const std::string &key) const;
  std::vector<At> elements(const At &array) const;
  int64_t integer(const At &at, int64_t min, int64_t max) const;
  std::string string(const At &at) const;
  bool boolean(const At &at) const;
  template <typename E>
  E enumValue(const At &at, std::optional<E> (*parse)(std::string_view),
              std::string (*choices)()) const;

  // --- IR pieces. ---
  Extent extent(const At &at, int depth = 0) const;
  Extent signedExtent(const At &at) const;
  std::optional<Extent> optionalExtent(const At &object, const std::string &key) const;
  SourceLoc location(const At &object, const std::string &key) const;
  DeviceMesh mesh(const At &at) const;
  std::vector<IdNum> idList(const At &array, const Fusion &f) const;
  std::vector<TensorNum> tensorList(const At &array, const Fusion &f) const;
  TensorNum tensorNumber(const At &at, const Fusion &f) const;

  Fusion fusion(const At &at) const;
  void readIterDomains(const At &list, Fusion &f) const;
  IterDomain iterDomain(const At &at) const;
  void readTransforms(const At &list, Fusion &f) const;
  Transform transform(const At &at) const;
  void checkTransformUse(const At &at, const Transform &t, const Fusion &f,
                         const std::string &listPath) const;
  void checkTransformsAcyclic(const Fusion &f, const std::string &listPath) const;
  void readTensors(const At &list, Fusion &f) const;
  TensorView tensor(const At &at, const Fusion &f) const;
  std::vector<Contiguity> contiguity(const At &at) const;
  void checkDomains(const At &at, const TensorView &tv, const Fusion &f) const;
  void readExprs(const At &list, Fusion &f) const;
  Expr expr(const At &at, const Fusion &f) const;
  void checkPointwiseOp(const At &op, OpKind kind, const std::string &name) const;
  Operand operand(const At &at, const Fusion &f) const;
  CommunicationInfo communication(const At &at) const;
  void readGroups(const At &list, Fusion &f) const;
  void checkPrintsBack(const At &at, const Fusion &f) const;

  const JsonPositions &positions_;
  std::string jsonFile_;     ///< The JSON's own name (locations it leaves out).
  std::string documentFile_; ///< Document::file, the default file of locations.
};

// --- Schema helpers. ---

void Reader::expectObject(const At &at) const {
  if (!at.value.is_object())
    failSchema(at, at.label + " must be an object, got " + typeName(at.value));
}

void Reader::checkKeys(const At &object, std::initializer_list<std::string_view> allowed) const {
  for (const auto &item : object.value.items()) {
    bool known = false;
    for (auto a : allowed)
      known = known || item.key() == a;
    if (known)
      continue;
    std::string choices;
    for (auto a : allowed)
      choices += (choices.empty() ? "" : ", ") + quotedToken(a);
    fail("json-schema", appendPointer(object.path, item.key()),
         object.label + " has unknown field " + quotedToken(item.key()) + "; expected one of " +
             choices);
  }
}

At Reader::field(const At &object, const std::string &key) const {
  auto it = object.value.find(key);
  if (it == object.value.end())
    failSchema(object, object.label + " is missing required field " + quotedToken(key));
  return At{*it, appendPointer(object.path, key), object.label + " field " + quotedToken(key)};
}

std::optional<At> Reader::optionalField(const At &object, const std::string &key) const {
  auto it = object.value.find(key);
  if (it == object.value.end() || it->is_null())
    return std::nullopt;
  return At{*it, appendPointer(object.path, key), object.label + " field " + quotedToken(key)};
}

std::vector<At> Reader::elements(const At &array) const {
  if (!array.value.is_array())
    failSchema(array, array.label + " must be an array, got " + typeName(array.value));
  std::vector<At> out;
  for (size_t i = 0; i < array.value.size(); ++i)
    out.push_back(At{array.value[i], appendPointer(array.path, i),
                     array.label + " element " + std::to_string(i)});
  return out;
}

int64_t Reader::integer(const At &at, int64_t min, int64_t max) const {
  const json &v = at.value;
  if (!v.is_number())
    failSchema(at, at.label + " must be an integer, got " + typeName(v));
  auto n = jsonInt64(v); // 2.5, 1e20 and 2^64 are numbers but no int64
  if (!n || *n < min || *n > max)
    failSchema(at, at.label + " must be an integer between " + std::to_string(min) + " and " +
                       std::to_string(max) + ", got " + shownToken(v.dump()));
  return *n;
}

std::string Reader::string(const At &at) const {
  if (!at.value.is_string())
    failSchema(at, at.label + " must be a string, got " + typeName(at.value));
  return at.value.get<std::string>();
}

bool Reader::boolean(const At &at) const {
  if (!at.value.is_boolean())
    failSchema(at, at.label + " must be true or false, got " + typeName(at.value));
  return at.value.get<bool>();
}

template <typename E>
E Reader::enumValue(const At &at, std::optional<E> (*parse)(std::string_view),
                    std::string (*choices)()) const {
  std::string name = string(at);
  if (auto e = parse(name))
    return *e;
  failSchema(at, at.label + " must be one of " + choices() + ", got " + quotedToken(name));
}

// --- IR pieces. ---

Extent Reader::extent(const At &at, int depth) const {
  // parseJsonText bounds the nesting already; this guards trees built in
  // memory, whose every recursive algorithm would risk the stack.
  if (depth > kMaxJsonDepth)
    failSchema(at, "extent is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  const json &v = at.value;
  if (v.is_number())
    return Extent::constant(integer(at, 0, INT64_MAX)); // a size, as a dump prints it
  if (v.is_string()) {
    std::string name = v.get<std::string>();
    if (!isPrintableSymbol(name))
      failSchema(at,
                 at.label + " is not a valid symbol name: " + quotedToken(name) +
                     " (it must be non-empty, without blanks, braces, parentheses or commas, or a "
                     "function call like \"max(i0, 3)\")");
    return Extent::symbol(std::move(name));
  }
  if (!v.is_object())
    failSchema(at, at.label +
                       " must be an integer, a symbol name or an {\"op\", \"lhs\", "
                       "\"rhs\"} object, got " +
                       typeName(v));
  checkKeys(at, {"op", "lhs", "rhs"});
  Extent::Kind op = enumValue(field(at, "op"), parseExtentOpJson, extentOpJsonChoices);
  Extent lhs = extent(field(at, "lhs"), depth + 1);
  Extent rhs = extent(field(at, "rhs"), depth + 1);
  Extent result = binaryExtent(op, lhs, rhs);
  if (auto problem = extentArithmeticProblem(op, rhs, result))
    failSchema(at, at.label + ": " + *problem);
  return result;
}

/// A Resize amount: an extent, or a negative constant (`by -1`), as the dump
/// reader reads it.
Extent Reader::signedExtent(const At &at) const {
  if (at.value.is_number())
    return Extent::constant(integer(at, INT64_MIN, INT64_MAX));
  return extent(at);
}

std::optional<Extent> Reader::optionalExtent(const At &object, const std::string &key) const {
  if (auto at = optionalField(object, key))
    return extent(*at);
  return std::nullopt;
}

SourceLoc Reader::location(const At &object, const std::string &key) const {
  auto it = object.value.find(key);
  // Hand-written JSON usually has no locations: point diagnostics at the
  // node's own place in the JSON instead.
  if (it == object.value.end())
    return positions_.locate(object.path);
  At at{*it, appendPointer(object.path, key), object.label + " field " + quotedToken(key)};
  if (it->is_null())
    return SourceLoc{};
  expectObject(at);
  checkKeys(at, {"file", "line", "column"});
  SourceLoc loc;
  loc.line = static_cast<int>(integer(field(at, "line"), 0, INT_MAX));
  loc.column = static_cast<int>(integer(field(at, "column"), 0, INT_MAX));
  auto file = optionalField(at, "file");
  loc.file = file ? string(*file) : documentFile_;
  return loc;
}

DeviceMesh Reader::mesh(const At &at) const {
  expectObject(at);
  checkKeys(at, {"shape", "devices"});
  std::vector<int64_t> shape, devices;
  for (const At &axis : elements(field(at, "shape")))
    shape.push_back(integer(axis, 1, INT64_MAX));
  for (const At &device : elements(field(at, "devices")))
    devices.push_back(integer(device, 0, INT64_MAX));
  if (shape.empty() && devices.empty())
    return DeviceMesh{}; // the empty mesh, printed `DeviceMesh{}`
  // Multiply with an early exit: a product past the device count (or past
  // int64) can only be a mismatch.
  std::optional<int64_t> capacity = 1;
  for (int64_t s : shape) {
    capacity = checkedMul(*capacity, s);
    if (!capacity || *capacity > static_cast<int64_t>(devices.size()))
      break;
  }
  if (capacity != static_cast<int64_t>(devices.size())) {
    std::string shapeText;
    for (int64_t s : shape)
      shapeText += (shapeText.empty() ? "" : ", ") + std::to_string(s);
    failInconsistent(at.path, "mesh of shape [" + shownToken(shapeText) + "] lists " +
                                  std::to_string(devices.size()) +
                                  " devices; the shape's product must equal the device count");
  }
  return DeviceMesh::create(std::move(shape), std::move(devices));
}

std::vector<IdNum> Reader::idList(const At &array, const Fusion &f) const {
  std::vector<IdNum> ids;
  std::set<IdNum> seen;
  for (const At &element : elements(array)) {
    IdNum n = integer(element, 0, INT64_MAX);
    if (!f.hasId(n))
      failInconsistent(element.path, array.label + " refers to IterDomain " + std::to_string(n) +
                                         ", which is not listed in iterDomains");
    if (!seen.insert(n).second) // as the dump reader says of a printed domain
      failInconsistent(element.path,
                       "IterDomain " + std::to_string(n) + " appears twice in " + array.label);
    ids.push_back(n);
  }
  return ids;
}

TensorNum Reader::tensorNumber(const At &at, const Fusion &f) const {
  auto n = static_cast<TensorNum>(integer(at, 0, INT_MAX));
  if (!f.hasTensor(n))
    failInconsistent(at.path, at.label + " refers to tensor T" + std::to_string(n) +
                                  ", which is not listed in tensors");
  return n;
}

std::vector<TensorNum> Reader::tensorList(const At &array, const Fusion &f) const {
  std::vector<TensorNum> tensors;
  for (const At &element : elements(array))
    tensors.push_back(tensorNumber(element, f));
  return tensors;
}

// --- Document and fusion. ---

Document Reader::document(const json &root, const std::string &basePath) {
  At doc{root, basePath, "JSON IR document"};
  expectObject(doc);
  // Format and version come first: a newer version may well have fields this
  // reader does not know, and "unsupported version" is the useful message.
  auto format = root.find("format");
  if (format == root.end() || !format->is_string() || *format != "shardcheck-ir")
    fail("json-format", format == root.end() ? basePath : basePath + "/format",
         "not a shardcheck JSON IR document: expected \"format\": \"shardcheck-ir\"");
  auto version = root.find("version");
  if (version == root.end() || !version->is_number_integer())
    fail("json-version", version == root.end() ? basePath : basePath + "/version",
         "JSON IR field \"version\" must be an integer (this shardcheck reads version " +
             std::to_string(kJsonIrVersion) + ")");
  if (!version->is_number_unsigned() || version->get<uint64_t>() != kJsonIrVersion)
    fail("json-version", basePath + "/version",
         "unsupported JSON IR version " + version->dump() + "; this shardcheck reads version " +
             std::to_string(kJsonIrVersion));
  checkKeys(doc, {"format", "version", "file", "fusions"});

  Document result;
  auto file = optionalField(doc, "file");
  result.file = file ? string(*file) : jsonFile_;
  documentFile_ = result.file;
  for (const At &f : elements(field(doc, "fusions")))
    result.fusions.push_back(fusion(At{f.value, f.path, "fusion"}));
  return result;
}

Fusion Reader::fusion(const At &at) const {
  expectObject(at);
  checkKeys(at, {"kind", "loc", "inputs", "outputs", "iterDomains", "transforms", "tensors",
                 "exprs", "groups"});
  Fusion f;
  f.kind = enumValue(field(at, "kind"), parseBlockKindJson, blockKindJsonChoices);
  f.loc = location(at, "loc");
  // Dependency order: IDs, then what refers to them.
  if (auto ids = optionalField(at, "iterDomains"))
    readIterDomains(*ids, f);
  if (auto transforms = optionalField(at, "transforms"))
    readTransforms(*transforms, f);
  if (auto tensors = optionalField(at, "tensors"))
    readTensors(*tensors, f);
  if (auto exprs = optionalField(at, "exprs"))
    readExprs(*exprs, f);
  if (auto groups = optionalField(at, "groups"))
    readGroups(*groups, f);
  if (auto inputs = optionalField(at, "inputs"))
    f.inputs = tensorList(*inputs, f);
  if (auto outputs = optionalField(at, "outputs"))
    f.outputs = tensorList(*outputs, f);
  checkPrintsBack(at, f);
  return f;
}

/// JSON IR is lossless only if the fusion prints as a dump shardcheck reads
/// back: its free-form strings (op spellings, scalars, attributes, symbols)
/// are judged by the dump grammar itself, not by a second copy of it. The
/// error points at the expr whose statement does not read, else the fusion.
void Reader::checkPrintsBack(const At &at, const Fusion &f) const {
  checkFusionLimits(f); // the printer walks transform chains
  std::string printed = printFusion(f);
  if (printed.find_first_not_of(" \t\n") == std::string::npos)
    return; // an empty fusion prints nothing
  try {
    readNvFuserDump(printed, "printed fusion");
  } catch (const InputError &e) {
    const Diagnostic &d = e.diagnostic();
    std::string line = lineAt(printed, d.loc.line);
    std::string path = at.path;
    for (size_t i = 0; i < f.exprs.size() && !line.empty(); ++i)
      if (printExpr(f, f.exprs[i]).find(line) != std::string::npos) {
        path = appendPointer(appendPointer(at.path, "exprs"), i);
        break;
      }
    failInconsistent(path, "this fusion prints as a dump shardcheck cannot read back (" +
                               d.message + "; printed: `" + shownToken(line) + "`)");
  }
}

// --- IterDomains and transforms. ---

void Reader::readIterDomains(const At &list, Fusion &f) const {
  std::map<IdNum, std::string> firstPath;
  for (const At &element : elements(list)) {
    IterDomain id = iterDomain(At{element.value, element.path, "iterDomain"});
    auto [it, isNew] = firstPath.emplace(id.number, element.path);
    if (!isNew)
      failInconsistent(element.path, "IterDomain " + std::to_string(id.number) +
                                         " is listed twice (first at line " +
                                         std::to_string(lineOf(it->second)) + ")");
    f.addIterDomain(std::move(id));
  }
}

IterDomain Reader::iterDomain(const At &at) const {
  expectObject(at);
  checkKeys(at, {"number", "iterType", "parallel", "extent", "expandedExtent", "start", "stop",
                 "rfactor", "extraSuffix", "loc"});
  IterDomain id;
  id.number = integer(field(at, "number"), 0, INT64_MAX);
  id.iterType = enumValue(field(at, "iterType"), parseIterTypeJson, iterTypeJsonChoices);
  if (auto parallel = optionalField(at, "parallel"))
    id.parallel = enumValue(*parallel, parseParallelTypeJson, parallelTypeJsonChoices);
  id.extent = extent(field(at, "extent"));
  id.expandedExtent = optionalExtent(at, "expandedExtent");
  id.start = optionalExtent(at, "start");
  id.stop = optionalExtent(at, "stop");
  if (auto rfactor = optionalField(at, "rfactor"))
    id.rfactor = boolean(*rfactor);
  if (auto suffix = optionalField(at, "extraSuffix"))
    id.extraSuffix = string(*suffix);
  id.loc = location(at, "loc");
  return id;
}

void Reader::readTransforms(const At &list, Fusion &f) const {
  for (const At &element : elements(list)) {
    At at{element.value, element.path, "transform"};
    Transform t = transform(at);
    checkTransformUse(at, t, f, list.path);
    f.addTransform(std::move(t));
  }
  checkTransformsAcyclic(f, list.path);
}

Transform Reader::transform(const At &at) const {
  expectObject(at);
  checkKeys(at, {"kind", "inputs", "outputs", "factor", "innerSplit", "chunked", "left", "right",
                 "detail", "loc"});
  Transform t;
  t.kind = enumValue(field(at, "kind"), parseTransformKindJson, transformKindJsonChoices);
  for (const At &in : elements(field(at, "inputs")))
    t.inputs.push_back(integer(in, 0, INT64_MAX));
  for (const At &out : elements(field(at, "outputs")))
    t.outputs.push_back(integer(out, 0, INT64_MAX));
  auto [ins, outs] = transformArity(t.kind);
  if (t.inputs.size() != ins || t.outputs.size() != outs)
    failInconsistent(at.path, std::string("a ") + transformKindJsonName(t.kind) +
                                  " transform has " + std::to_string(ins) + " input(s) and " +
                                  std::to_string(outs) + " output(s), this one has " +
                                  std::to_string(t.inputs.size()) + " and " +
                                  std::to_string(t.outputs.size()));
  // Each kind's own fields are required; others are optional (lossless
  // writing only emits them when they differ from their defaults).
  if (t.kind == Transform::Kind::Split) {
    At factor = field(at, "factor");
    t.factor = extent(factor);
    if (t.factor.asConstant() == 0)
      failSchema(factor, "a split factor must be positive, got 0"); // as the dump reader says
  } else if (auto factor = optionalExtent(at, "factor")) {
    t.factor = *factor;
  }
  if (auto inner = optionalField(at, "innerSplit"))
    t.innerSplit = boolean(*inner);
  if (auto chunked = optionalField(at, "chunked")) {
    t.chunked = boolean(*chunked);
    if (t.chunked && (t.kind != Transform::Kind::Split || t.innerSplit))
      failInconsistent(at.path, "only an outer split (innerSplit false) may be chunked");
  }
  if (t.kind == Transform::Kind::Resize) {
    t.left = signedExtent(field(at, "left"));
    t.right = signedExtent(field(at, "right"));
  } else {
    t.left = optionalExtent(at, "left").value_or(Extent());
    t.right = optionalExtent(at, "right").value_or(Extent());
  }
  if (auto detail = optionalField(at, "detail"))
    t.detail = string(*detail);
  t.loc = location(at, "loc");
  return t;
}

void Reader::checkTransformUse(const At &at, const Transform &t, const Fusion &f,
                               const std::string &listPath) const {
  for (size_t i = 0; i < t.inputs.size(); ++i)
    if (!f.hasId(t.inputs[i]))
      failInconsistent(appendPointer(appendPointer(at.path, "inputs"), i),
                       "transform input IterDomain " + std::to_string(t.inputs[i]) +
                           " is not listed in iterDomains");
  std::set<IdNum> seen;
  for (size_t i = 0; i < t.outputs.size(); ++i) {
    IdNum out = t.outputs[i];
    std::string path = appendPointer(appendPointer(at.path, "outputs"), i);
    if (!f.hasId(out))
      failInconsistent(path, "transform output IterDomain " + std::to_string(out) +
                                 " is not listed in iterDomains");
    if (!seen.insert(out).second)
      failInconsistent(path, "transform lists IterDomain " + std::to_string(out) +
                                 " twice among its outputs");
    if (auto def = f.id(out).definition)
      failInconsistent(path, "IterDomain " + std::to_string(out) +
                                 " is already defined by transform " + std::to_string(*def) +
                                 " (line " + std::to_string(lineOf(appendPointer(listPath, *def))) +
                                 "); an IterDomain has at most one definition");
  }
}

/// The cycle is the stack from `input` up; its last-read transform is the
/// one that closed it, so that is where the error points.
size_t lastTransformOfCycle(const Fusion &f, const std::vector<std::pair<IdNum, size_t>> &stack,
                            IdNum input) {
  size_t last = 0;
  bool inCycle = false;
  for (const auto &[id, unused] : stack) {
    inCycle = inCycle || id == input;
    if (inCycle)
      last = std::max(last, *f.id(id).definition);
  }
  return last;
}

void Reader::checkTransformsAcyclic(const Fusion &f, const std::string &listPath) const {
  // Iterative DFS from each ID through its definition's inputs; meeting an ID
  // still on the stack means it is derived from itself.
  enum class Mark { Unvisited, OnStack, Done };
  std::map<IdNum, Mark> mark;
  for (const auto &[start, unused] : f.ids) {
    if (mark[start] != Mark::Unvisited)
      continue;
    std::vector<std::pair<IdNum, size_t>> stack{{start, 0}};
    mark[start] = Mark::OnStack;
    while (!stack.empty()) {
      IdNum current = stack.back().first;
      size_t nextInput = stack.back().second;
      const Transform *def = f.definition(current);
      if (!def || nextInput >= def->inputs.size()) {
        mark[current] = Mark::Done;
        stack.pop_back();
        continue;
      }
      ++stack.back().second;
      IdNum input = def->inputs[nextInput];
      if (mark[input] == Mark::OnStack)
        failInconsistent(appendPointer(listPath, lastTransformOfCycle(f, stack, input)),
                         "transforms form a cycle: IterDomain " + std::to_string(input) +
                             " is derived from itself");
      if (mark[input] == Mark::Unvisited) {
        mark[input] = Mark::OnStack;
        stack.push_back({input, 0});
      }
    }
  }
}

// --- Tensors. ---

/// nvFuser's default: contiguous, except broadcasts, which have no value.
std::vector<Contiguity> defaultContiguity(const TensorView &tv, const Fusion &f) {
  std::vector<Contiguity> out;
  for (IdNum n : tv.allocationOrLogical())
    out.push_back(f.id(n).isBroadcast() ? Contiguity::None : Contiguity::True);
  return out;
}

/// The first of `ids` not derived from `base` through transforms, if any.
/// Undefined broadcasts count as derived: nvFuser adds them to loop domains.
std::optional<IdNum> firstUnderived(const Fusion &f, const std::vector<IdNum> &ids,
                                    const std::set<IdNum> &base) {
  // One `seen` for all of `ids`: an ID reached before is known derived (or
  // is being explored), so the walk is linear in the transforms, not in
  // their product with the domain's length.
  std::set<IdNum> seen;
  for (IdNum top : ids) {
    std::vector<IdNum> work{top};
    while (!work.empty()) {
      IdNum n = work.back();
      work.pop_back();
      if (base.count(n) || !seen.insert(n).second)
        continue;
      if (const Transform *def = f.definition(n))
        work.insert(work.end(), def->inputs.begin(), def->inputs.end());
      else if (!f.id(n).isBroadcast())
        return top;
    }
  }
  return std::nullopt;
}

void Reader::readTensors(const At &list, Fusion &f) const {
  std::map<TensorNum, std::string> firstPath;
  for (const At &element : elements(list)) {
    TensorView tv = tensor(At{element.value, element.path, "tensor"}, f);
    auto [it, isNew] = firstPath.emplace(tv.number, element.path);
    if (!isNew)
      failInconsistent(element.path, "tensor T" + std::to_string(tv.number) +
                                         " is listed twice (first at line " +
                                         std::to_string(lineOf(it->second)) + ")");
    f.addTensor(std::move(tv));
  }
}

TensorView Reader::tensor(const At &at, const Fusion &f) const {
  expectObject(at);
  checkKeys(at, {"number", "memory", "dtype", "root", "logical", "allocation", "loop", "contiguity",
                 "mesh", "caPos", "producePos", "hasTransformInfo", "loc", "domainsLoc"});
  TensorView tv;
  tv.number = static_cast<TensorNum>(integer(field(at, "number"), 0, INT_MAX));
  tv.memory = enumValue(field(at, "memory"), parseMemoryTypeJson, memoryTypeJsonChoices);
  if (auto dtype = optionalField(at, "dtype"))
    tv.dtype = enumValue(*dtype, parseDataTypeJson, dataTypeJsonChoices);
  if (auto root = optionalField(at, "root"))
    tv.root = idList(*root, f);
  tv.logical = idList(field(at, "logical"), f);
  if (auto allocation = optionalField(at, "allocation"))
    tv.allocation = idList(*allocation, f);
  auto loop = optionalField(at, "loop");
  tv.loop = loop ? idList(*loop, f) : tv.logical; // unscheduled: loop = logical
  auto info = optionalField(at, "hasTransformInfo");
  tv.hasTransformInfo = info ? boolean(*info) : true; // JSON states the domains
  if (auto c = optionalField(at, "contiguity"))
    tv.contiguity = contiguity(*c);
  else if (tv.hasTransformInfo)
    tv.contiguity = defaultContiguity(tv, f);
  checkDomains(at, tv, f);
  if (auto m = optionalField(at, "mesh"))
    tv.mesh = mesh(*m);
  if (auto ca = optionalField(at, "caPos"))
    tv.caPos = static_cast<int>(integer(*ca, 0, INT_MAX));
  if (auto produce = optionalField(at, "producePos"))
    tv.producePos = static_cast<int>(integer(*produce, 0, INT_MAX));
  tv.loc = location(at, "loc");
  tv.domainsLoc = location(at, "domainsLoc");
  return tv;
}

void Reader::checkDomains(const At &at, const TensorView &tv, const Fusion &f) const {
  std::string name = tv.name();
  // Without transform info the dump showed only the loop domain; anything
  // else could not be printed back (the printer prints no entry for it).
  if (!tv.hasTransformInfo &&
      (tv.hasRoot() || tv.hasAllocation() || !tv.contiguity.empty() || tv.logical != tv.loop))
    failInconsistent(at.path, name + " has \"hasTransformInfo\": false, so its logical domain "
                                     "must equal its loop domain and it can have no root, "
                                     "allocation or contiguity");
  size_t expected = tv.allocationOrLogical().size();
  if (!tv.contiguity.empty() && tv.contiguity.size() != expected)
    failInconsistent(appendPointer(at.path, "contiguity"),
                     "the contiguity of " + name + " has " + std::to_string(tv.contiguity.size()) +
                         " entries, expected " + std::to_string(expected) + " (one per " +
                         (tv.hasAllocation() ? "allocation" : "logical") + " IterDomain)");
  auto complain = [&](IdNum id, const char *domain, const char *from) {
    failInconsistent(appendPointer(at.path, domain),
                     std::string("the ") + domain + " domain of " + name + " contains IterDomain " +
                         std::to_string(id) + ", which is not derived from its " + from +
                         " domain");
  };
  std::set<IdNum> root(tv.root.begin(), tv.root.end());
  if (tv.hasRoot())
    if (auto bad = firstUnderived(f, tv.logical, root))
      complain(*bad, "logical", "root");
  std::set<IdNum> base = root;
  base.insert(tv.logical.begin(), tv.logical.end());
  if (auto bad = firstUnderived(f, tv.allocation, base))
    complain(*bad, "allocation", "logical");
  if (auto bad = firstUnderived(f, tv.loop, base))
    complain(*bad, "loop", "logical");
}

std::vector<Contiguity> Reader::contiguity(const At &at) const {
  std::vector<Contiguity> out;
  for (const At &element : elements(at)) {
    if (element.value.is_null())
      out.push_back(Contiguity::None);
    else if (element.value.is_boolean())
      out.push_back(element.value.get<bool>() ? Contiguity::True : Contiguity::False);
    else
      failSchema(element,
                 element.label + " must be true, false or null, got " + typeName(element.value));
  }
  return out;
}

// --- Expressions and segment groups. ---

void Reader::readExprs(const At &list, Fusion &f) const {
  for (const At &element : elements(list))
    f.addExpr(expr(At{element.value, element.path, "expr"}, f));
}

Expr Reader::expr(const At &at, const Fusion &f) const {
  expectObject(at);
  checkKeys(at, {"kind", "op", "inputs", "outputs", "flags", "attrs", "communication", "loc"});
  Expr e;
  e.kind = enumValue(field(at, "kind"), parseOpKindJson, opKindJsonChoices);
  At op = field(at, "op");
  e.op = string(op);
  checkPointwiseOp(op, e.kind, e.op);
  for (const At &in : elements(field(at, "inputs")))
    e.inputs.push_back(operand(At{in.value, in.path, "operand"}, f));
  e.outputs = tensorList(field(at, "outputs"), f);
  if (auto flags = optionalField(at, "flags"))
    for (const At &flag : elements(*flags))
      e.flags.push_back(boolean(flag));
  if (auto attrs = optionalField(at, "attrs"))
    for (const At &pair : elements(*attrs)) {
      auto kv = elements(pair);
      if (kv.size() != 2)
        failSchema(pair, pair.label + " must be a [key, value] pair of strings");
      e.attrs.emplace_back(string(kv[0]), string(kv[1]));
    }
  if (auto comm = optionalField(at, "communication"))
    e.communication = communication(*comm);
  if (e.kind == OpKind::Communication && !e.communication)
    failInconsistent(at.path, "a Communication expr needs a \"communication\" object");
  if (auto problem = exprShapeProblem(e))
    failInconsistent(at.path, "a " + std::string(opKindName(e.kind)) + " expr " + *problem);
  e.loc = location(at, "loc");
  return e;
}

/// A Unary/Binary/Ternary expr's `op` must be a listed spelling of that
/// arity: the kind is what the checker maps positionally and the evaluator
/// runs, and neither may rest on a name without an element rule.
void Reader::checkPointwiseOp(const At &op, OpKind kind, const std::string &name) const {
  std::optional<PointwiseArity> arity;
  if (kind == OpKind::Unary)
    arity = PointwiseArity::Unary;
  else if (kind == OpKind::Binary)
    arity = PointwiseArity::Binary;
  else if (kind == OpKind::Ternary)
    arity = PointwiseArity::Ternary;
  if (!arity || isPointwiseOp(name, *arity))
    return;
  failInconsistent(op.path, quotedToken(name) + " is not a " + opKindName(kind) +
                                " op shardcheck knows (ir/PointwiseOps.h lists them); an op "
                                "without an element rule has kind \"Other\"");
}

Operand Reader::operand(const At &at, const Fusion &f) const {
  expectObject(at);
  checkKeys(at, {"tensor", "scalar"});
  Operand o;
  if (auto tensor = optionalField(at, "tensor"))
    o.tensor = tensorNumber(*tensor, f);
  if (auto scalar = optionalField(at, "scalar"))
    o.scalar = string(*scalar);
  return o;
}

CommunicationInfo Reader::communication(const At &at) const {
  expectObject(at);
  checkKeys(at, {"number", "type", "team", "root", "backend"});
  CommunicationInfo c;
  c.number = static_cast<int>(integer(field(at, "number"), 0, INT_MAX));
  c.type = enumValue(
      field(at, "type"), parseCollectiveType,
      +[] { return collectiveChoices(&CollectiveInfo::hostIr); });
  for (const At &device : elements(field(at, "team")))
    c.team.push_back(integer(device, 0, INT64_MAX));
  if (auto root = optionalField(at, "root"))
    c.root = integer(*root, 0, INT64_MAX);
  if (auto backend = optionalField(at, "backend"))
    c.backend = string(*backend);
  return c;
}

void Reader::readGroups(const At &list, Fusion &f) const {
  for (const At &element : elements(list)) {
    At at{element.value, element.path, "segment group"};
    expectObject(at);
    checkKeys(at, {"name", "scheduler", "exprs"});
    SegmentGroup g;
    g.name = string(field(at, "name"));
    g.scheduler = string(field(at, "scheduler"));
    for (const At &index : elements(field(at, "exprs"))) {
      int64_t i = integer(index, 0, INT64_MAX);
      if (static_cast<uint64_t>(i) >= f.exprs.size())
        failInconsistent(index.path, "segment group refers to expr " + std::to_string(i) +
                                         ", but the fusion has " + std::to_string(f.exprs.size()) +
                                         " exprs");
      g.exprs.push_back(static_cast<size_t>(i));
    }
    f.groups.push_back(std::move(g));
  }
}

} // namespace

Document readJsonIr(const json &root, const JsonPositions &positions, const std::string &file,
                    const std::string &basePath) {
  Reader reader(positions, file);
  return reader.document(root, basePath);
}

} // namespace shardcheck::jsonir
