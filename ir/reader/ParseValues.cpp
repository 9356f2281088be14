// Parsing of nvFuser's value spellings: extents, IterDomains, device meshes
// and tensors. See Parser.h; statements and blocks are parsed elsewhere.
#include "ir/reader/Parser.h"

#include "ir/json/InputRules.h"
#include "util/Checked.h"

#include <algorithm>
#include <limits>
#include <set>

namespace shardcheck::reader {

namespace {

/// Deeper nesting than any real extent or mesh; bounds the recursion.
constexpr int kMaxExtentDepth = 32;
constexpr int kMaxMeshDepth = 8;
/// More operators (and call arguments) than any real extent has (nvFuser's
/// have a handful). Each operator deepens the tree by one level at most, so
/// this bounds the depth of every extent the IR holds, also where no
/// parenthesis nests (`i0 * i1 * i2 ...`), and keeps its JSON form within
/// the JSON readers' nesting limit.
constexpr int kMaxExtentOperators = 128;

bool isSymbolChar(char c) {
  return isIdentChar(c) || c == '.';
}
bool isDtypeChar(char c) {
  return isIdentChar(c) || c == ':' || c == '<' || c == '>';
}

/// Combines two extents; constant folding is checked for overflow first
/// (Extent leaves an overflowing fold unfolded, which no dump prints), and
/// the result must be a size (InputRules.h).
Extent combine(Extent::Kind kind, const Extent &a, const Extent &b, const Cursor &c,
               size_t opOffset) {
  auto ca = a.asConstant(), cb = b.asConstant();
  if (ca && cb && *ca >= 0 && *cb > 0) {
    int64_t r = 0;
    bool overflow = (kind == Extent::Kind::Add && __builtin_add_overflow(*ca, *cb, &r)) ||
                    (kind == Extent::Kind::Mul && __builtin_mul_overflow(*ca, *cb, &r)) ||
                    (kind == Extent::Kind::CeilDiv && __builtin_add_overflow(*ca, *cb - 1, &r));
    if (overflow)
      c.failAt(opOffset, "extent arithmetic overflows 64-bit integers");
  }
  Extent e = binaryExtent(kind, a, b);
  if (auto problem = extentArithmeticProblem(kind, b, e))
    c.failAt(opOffset, *problem);
  return e;
}

} // namespace

bool Parser::atTensorStart() const {
  if (c_.peek() != 'T' || !isDigit(c_.peek(1)))
    return false;
  size_t n = 1;
  while (isDigit(c_.peek(n)))
    ++n;
  return c_.peek(n) == '_';
}

bool Parser::atStatementStart() const {
  if (atTensorStart())
    return true;
  if (c_.peek() != '(')
    return false;
  Cursor look = c_;
  look.advance();
  look.skipSpaces();
  return look.peek() == 'T' && isDigit(look.peek(1));
}

bool Parser::atIterDomainStart() const {
  if (!parseIterTypeLetter(c_.peek()))
    return false;
  std::string_view rest = c_.source().text().substr(c_.pos() + 1);
  return matchParallelType(rest.substr(0, 24)).has_value();
}

void Parser::noteExtentOperator(size_t offset) {
  if (++extentOperators_ > kMaxExtentOperators)
    c_.failAt(offset, "extent has more than " + std::to_string(kMaxExtentOperators) +
                          " operators and call arguments");
}

Extent Parser::parseExtent(int depth) {
  if (depth == 0)
    extentOperators_ = 0; // a new extent
  if (depth > kMaxExtentDepth)
    c_.fail("extent expression nested more than " + std::to_string(kMaxExtentDepth) +
            " levels deep");
  if (isDigit(c_.peek()))
    return Extent::constant(c_.parseInt("extent"));
  if (c_.accept("(")) {
    c_.skipSpaces();
    Extent e = parseExtentSum(depth + 1);
    c_.skipSpaces();
    c_.expect(")", "to close the extent expression");
    return e;
  }
  if (isIdentStart(c_.peek())) {
    size_t start = c_.pos();
    while (isSymbolChar(c_.peek()))
      c_.advance();
    std::string name(c_.source().text().substr(start, c_.pos() - start));
    if (c_.peek() == '(')
      return parseExtentCall(std::move(name), depth);
    return Extent::symbol(std::move(name));
  }
  c_.failExpected("an extent (a number, a symbol like 'i0', or '( ... )')");
}

Extent Parser::parseExtentCall(std::string name, int depth) {
  size_t callOffset = c_.pos();
  std::string shown = "'" + shownToken(name) + "'";
  c_.expect("(", "after " + shown);
  std::vector<Extent> args;
  while (true) {
    noteExtentOperator(c_.pos());
    c_.skipSpaces();
    args.push_back(parseExtentSum(depth + 1));
    c_.skipSpaces();
    if (c_.accept(")"))
      break;
    c_.expect(",", "or ')' in the arguments of " + shown);
  }
  if (name == "ceilDiv" && args.size() == 2)
    return combine(Extent::Kind::CeilDiv, args[0], args[1], c_, callOffset);
  // Other functions (max, min, ...) have no Extent kind: keep them as an
  // opaque symbol spelled canonically, so equal prints compare equal.
  std::string spelled = name + "(";
  for (size_t i = 0; i < args.size(); ++i)
    spelled += (i ? ", " : "") + args[i].str();
  return Extent::symbol(spelled + ")");
}

Extent Parser::parseExtentSum(int depth) {
  Extent lhs = parseExtentProduct(depth);
  while (true) {
    size_t save = c_.pos();
    c_.skipSpaces();
    char op = c_.peek();
    if ((op != '+' && op != '-') || c_.peek(1) == '>') {
      c_.setPos(save);
      return lhs;
    }
    size_t opOffset = c_.pos();
    noteExtentOperator(opOffset);
    c_.advance();
    c_.skipSpaces();
    Extent rhs = parseExtentProduct(depth);
    lhs = combine(op == '+' ? Extent::Kind::Add : Extent::Kind::Sub, lhs, rhs, c_, opOffset);
  }
}

Extent Parser::parseExtentProduct(int depth) {
  Extent lhs = parseExtent(depth);
  while (true) {
    size_t save = c_.pos();
    c_.skipSpaces();
    char op = c_.peek();
    if (op != '*' && op != '/' && op != '%') {
      c_.setPos(save);
      return lhs;
    }
    size_t opOffset = c_.pos();
    noteExtentOperator(opOffset);
    c_.advance();
    c_.skipSpaces();
    Extent rhs = parseExtent(depth);
    auto kind = op == '*' ? Extent::Kind::Mul : op == '/' ? Extent::Kind::Div : Extent::Kind::Mod;
    lhs = combine(kind, lhs, rhs, c_, opOffset);
  }
}

Extent Parser::parseSignedExtent() {
  if (!c_.accept("-"))
    return parseExtent();
  if (isDigit(c_.peek()))
    return Extent::constant(-c_.parseInt("extent"));
  return Extent::sub(Extent::constant(0), parseExtent());
}

IterDomain Parser::parseIterDomain() {
  size_t start = c_.pos();
  auto iterType = parseIterTypeLetter(c_.peek());
  if (!iterType)
    c_.failExpected("an IterDomain like 'iS0{8}'");
  c_.advance();
  std::string_view rest = c_.source().text().substr(c_.pos());
  auto parallel = matchParallelType(rest.substr(0, 24));
  if (!parallel)
    c_.failExpected("a parallel type (e.g. 'S', 'deviceIdx.x') in an IterDomain like 'iS0{8}'");
  c_.advance(parallel->second);
  IterDomain id;
  id.iterType = *iterType;
  id.parallel = parallel->first;
  id.number = c_.parseInt("the IterDomain's number (as in 'iS0{8}')");
  id.loc = c_.locAt(start);
  parseIdBraces(id);
  if (c_.accept("rf"))
    id.rfactor = true;
  while (c_.startsWith("_p") || c_.startsWith("_c")) {
    id.extraSuffix += std::string(c_.source().text().substr(c_.pos(), 2));
    c_.advance(2);
  }
  cur_->noteId(id);
  return id;
}

void Parser::parseIdBraces(IterDomain &id) {
  std::string name = "IterDomain " + std::to_string(id.number);
  c_.expect("{", "to open the extent of " + name);
  // `{extent}`, `{start : extent}` or `{start : stop : extent}`.
  std::vector<Extent> parts;
  while (true) {
    c_.skipSpaces();
    parts.push_back(parseExtent());
    c_.skipSpaces();
    if (parts.size() == 3 || !c_.accept(":"))
      break;
  }
  id.extent = parts.back();
  if (parts.size() >= 2)
    id.start = parts[0];
  if (parts.size() == 3)
    id.stop = parts[1];
  if (c_.startsWith("ex") && !isSymbolChar(c_.peek(2))) {
    c_.advance(2);
    c_.skipSpaces();
    id.expandedExtent = parseExtent();
    c_.skipSpaces();
  }
  c_.expect("}", "to close the extent of " + name);
}

std::vector<IdNum> Parser::parseIdList(char close, const std::string &what) {
  std::string closeStr(1, close);
  std::vector<IdNum> ids;
  c_.skipSpaces();
  if (c_.accept(closeStr))
    return ids;
  // Zero-dim tensors print as `[ 0 ]` in some versions.
  if (close == ']' && c_.peek() == '0') {
    Cursor save = c_;
    c_.advance();
    c_.skipSpaces();
    if (c_.accept("]"))
      return ids;
    c_ = save;
  }
  std::set<IdNum> seen;
  while (true) {
    // An iter type letter starts an IterDomain; parseIterDomain then names
    // what is wrong with it.
    if (!parseIterTypeLetter(c_.peek()))
      c_.failExpected("an IterDomain like 'iS0{8}' in " + what);
    size_t idOffset = c_.pos();
    IterDomain id = parseIterDomain();
    if (!seen.insert(id.number).second)
      c_.failAt(idOffset, "IterDomain " + shownToken(id.str()) + " appears twice in " + what);
    ids.push_back(id.number);
    c_.skipSpaces();
    if (c_.accept(",")) {
      c_.skipSpaces();
      continue;
    }
    if (c_.accept(closeStr))
      return ids;
    if (c_.atLineEnd())
      c_.failExpected("'" + closeStr + "' to close " + what);
    c_.failExpected("',' or '" + closeStr + "' in " + what);
  }
}

std::vector<int64_t> Parser::parseMeshGroup(int depth, std::vector<int64_t> &devices) {
  if (depth > kMaxMeshDepth)
    c_.fail("device mesh nested more than " + std::to_string(kMaxMeshDepth) + " levels deep");
  size_t start = c_.pos();
  c_.expect("{", "to open a device mesh group");
  c_.skipSpaces();
  if (c_.peek() == '{') {
    // An N-d mesh: equally shaped sub-meshes, optionally comma-separated.
    std::optional<std::vector<int64_t>> childShape;
    int64_t count = 0;
    while (c_.peek() == '{') {
      size_t childOffset = c_.pos();
      auto shape = parseMeshGroup(depth + 1, devices);
      if (childShape && shape != *childShape)
        c_.failAt(childOffset, "the rows of a device mesh must all have the same shape");
      childShape = std::move(shape);
      ++count;
      c_.skipSpaces();
      c_.accept(",");
      c_.skipSpaces();
    }
    c_.expect("}", "to close the device mesh group");
    std::vector<int64_t> shape{count};
    shape.insert(shape.end(), childShape->begin(), childShape->end());
    return shape;
  }
  // A row of device ids: `{0 1}` or the old `{0, 1, }`.
  int64_t count = 0;
  while (!c_.accept("}")) {
    if (!isDigit(c_.peek()))
      c_.failExpected("a device id or '}' in the device mesh");
    devices.push_back(c_.parseInt("device id"));
    ++count;
    c_.skipSpaces();
    c_.accept(",");
    c_.skipSpaces();
  }
  if (count == 0)
    c_.failAt(start, "a device mesh needs at least one device");
  return {count};
}

DeviceMesh Parser::parseMesh() {
  std::vector<int64_t> devices;
  std::vector<int64_t> shape = parseMeshGroup(0, devices);
  // parseMeshGroup guarantees non-empty axes whose product is the count.
  return DeviceMesh::create(std::move(shape), std::move(devices));
}

int Parser::parseSmallInt(const std::string &what) {
  size_t start = c_.pos();
  int64_t v = c_.parseInt(what);
  if (v > std::numeric_limits<int>::max())
    c_.failAt(start, what + " " + std::to_string(v) + " is too large");
  return static_cast<int>(v);
}

MemoryType Parser::parseMemoryType(const std::string &name) {
  auto followsName = [&](size_t n) { return c_.peek(n) == '_' || c_.peek(n) == '['; };
  if (c_.startsWith("sym") && followsName(3)) {
    c_.advance(3);
    return MemoryType::Symmetric;
  }
  if (followsName(1)) {
    if (auto m = shardcheck::parseMemoryType(std::string(1, c_.peek()))) {
      c_.advance();
      return *m;
    }
  }
  c_.failExpected("a memory type (g, l, s, t or sym) after '" + name + "_'");
}

DataType Parser::parseDtype(const std::string &name) {
  size_t start = c_.pos();
  while (isDtypeChar(c_.peek()))
    c_.advance();
  std::string_view text = c_.source().text().substr(start, c_.pos() - start);
  auto dtype = parseDataType(text);
  if (!dtype) {
    if (text.empty())
      c_.failExpected("a data type after '" + name + "_'");
    c_.failAt(start, "unknown data type '" + excerpt(text) + "' in the name of " + name);
  }
  return *dtype;
}

TensorPrint Parser::parseTensor() {
  size_t start = c_.pos();
  c_.expect("T", "to start a tensor name");
  TensorPrint t;
  t.number = parseSmallInt("tensor number");
  t.loc = c_.locAt(start);
  std::string name = "T" + std::to_string(t.number);
  c_.expect("_", "and a memory type after '" + name + "'");
  t.memory = parseMemoryType(name);
  if (c_.accept("_"))
    t.dtype = parseDtype(name);
  c_.expect("[", "to open the loop domain of " + name);
  t.loop = parseIdList(']', "the loop domain of " + name);
  parseTensorSuffixes(t);
  cur_->noteTensor(t);
  return t;
}

void Parser::parseTensorSuffixes(TensorPrint &t) {
  std::string name = "T" + std::to_string(t.number);
  while (true) {
    size_t save = c_.pos();
    c_.skipSpaces();
    if (c_.accept("ca_pos(")) {
      c_.skipSpaces();
      t.caPos = parseSmallInt("ca_pos");
    } else if (c_.accept("produce_pos(")) {
      c_.skipSpaces();
      t.producePos = parseSmallInt("produce_pos");
    } else if (c_.accept("maybe_produce_pos(")) {
      c_.skipSpaces();
      parseSmallInt("maybe_produce_pos");
    } else if (c_.accept("compute_with(")) {
      // `compute_with( T3, T4, 2 )`: consumers and a position, not kept.
      while (!c_.atLineEnd() && c_.peek() != ')')
        c_.advance();
    } else if (c_.accept("(DeviceMesh")) {
      t.mesh = parseMesh();
      c_.expect(")", "to close the device mesh of " + name);
      continue;
    } else if (c_.accept("DeviceMesh")) {
      t.mesh = parseMesh();
      continue;
    } else {
      c_.setPos(save);
      return;
    }
    c_.skipSpaces();
    c_.expect(")", "to close the position suffix of " + name);
  }
}

} // namespace shardcheck::reader
