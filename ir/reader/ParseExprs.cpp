// Parsing of expression statements (`T2 = Set( T1, ... )`, `T5 = T3 + T4;`,
// `T3 = broadcast( T2, flags = {...} )`, ...) and host IR `Communication`
// lines into Exprs. See Parser.h.
//
// A call reads as a pointwise op (Unary, Binary, Ternary) only when its name,
// or its name without CUDA's float suffix (`expf`), is listed in
// ir/PointwiseOps.h, the list the reference evaluator's rules are keyed by;
// operator spellings (`-T0`, `T0 + T1`) are pointwise by their syntax. Every
// other name (pad, cat, sdpa, cumsum, ...) reads as OpKind::Other with its
// tensor operands, which the checker reports as unsupported.
//
// This file does not guess: an unlisted name is never read as pointwise by
// its operand count, and a listed name printed with attributes (`key = v`,
// braced arguments) is Other too, since the rule ignores what they say.
#include "ir/ExprShape.h"
#include "ir/HostLoops.h"
#include "ir/PointwiseOps.h"
#include "ir/reader/Parser.h"
#include "util/Checked.h"

#include <algorithm>
#include <array>
#include <limits>

namespace shardcheck::reader {

namespace {

constexpr std::array<std::string_view, 18> kBinaryOperators{
    "<<", ">>", "==", ">=", "<=", "!=", "&&", "||", "+",
    "-",  "*",  "/",  "%",  ">",  "<",  "&",  "|",  "^"};

/// Host IR statements `T = NAME(...)` that only manage memory or streams.
/// (`HirAliasSelect` and `ShardByStream` name a slice of a tensor: they read
/// as ops without a data rule, like `select`.)
constexpr std::array<std::string_view, 4> kHostOnlyRhs{"ALLOCATE", "GetCurrentStream", "Deallocate",
                                                       "LaunchKernel"};

constexpr std::array<std::string_view, 9> kLoadStoreOps{"LdMatrix",
                                                        "LdMatrixTranspose",
                                                        "CpAsync",
                                                        "CpAsyncBulk",
                                                        "CpAsyncBulkTensorTile",
                                                        "StMatrix",
                                                        "LdTMem",
                                                        "StTMem",
                                                        "CpAsyncBulkTensorTileStore"};

template <size_t N> bool contains(const std::array<std::string_view, N> &set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

bool isCastName(std::string_view name) {
  // `__to_float`, `__bfloat2float`, `__float2half`, ...
  return name.substr(0, 2) == "__" &&
         (name.substr(0, 5) == "__to_" || name.find('2') != std::string_view::npos);
}

std::optional<std::string_view> matchBinaryOperator(const Cursor &c) {
  for (std::string_view op : kBinaryOperators)
    if (c.startsWith(op) && !(op == "-" && c.peek(1) == '>'))
      return op;
  return std::nullopt;
}

// Every operator the inline form parses is a listed binary op.
constexpr bool operatorsAreListed() {
  for (std::string_view op : kBinaryOperators)
    if (!isPointwiseOp(op, PointwiseArity::Binary))
      return false;
  return true;
}
static_assert(operatorsAreListed(), "an inline binary operator is missing from PointwiseOps.h");
static_assert(isPointwiseOp("-", PointwiseArity::Unary) &&
                  isPointwiseOp("!", PointwiseArity::Unary) &&
                  isPointwiseOp("~", PointwiseArity::Unary),
              "a prefix operator is missing from PointwiseOps.h");

OpKind kindOfArity(PointwiseArity arity) {
  switch (arity) {
  case PointwiseArity::Unary:
    return OpKind::Unary;
  case PointwiseArity::Binary:
    return OpKind::Binary;
  case PointwiseArity::Ternary:
    return OpKind::Ternary;
  }
  return OpKind::Other;
}

/// The kind a call-style op has by its printed name, or nullopt for names
/// that are neither a specific op nor listed pointwise ops.
std::optional<OpKind> kindOfName(std::string_view name) {
  if (name == "Set")
    return OpKind::Set;
  if (name.size() > 8 && name.substr(name.size() - 8) == ".Permute")
    return OpKind::Permute;
  if (name == "SegmenterSet")
    return OpKind::SegmenterSet;
  if (contains(kLoadStoreOps, name))
    return OpKind::LoadStore;
  if (name == "broadcast")
    return OpKind::Broadcast;
  if (name == "squeeze")
    return OpKind::Squeeze;
  if (name == "expand")
    return OpKind::Expand;
  if (name == "reduction")
    return OpKind::Reduction;
  if (name == "reshape" || name == "view")
    return OpKind::Reshape;
  if (name == "matmul")
    return OpKind::Matmul;
  if (name == "linear")
    return OpKind::Linear;
  if (name == "where")
    return OpKind::Where;
  if (auto arity = callArity(name))
    return kindOfArity(*arity);
  if (isCastName(name))
    return OpKind::Cast;
  return std::nullopt;
}

/// A call's kind. Unlisted names are Other (no element rule, no domain map);
/// so is a listed pointwise name printed with attributes, whose meaning the
/// element rule would ignore.
OpKind kindOfCall(std::string_view name, bool hasOtherArgs) {
  OpKind kind = kindOfName(name).value_or(OpKind::Other);
  bool pointwise = kind == OpKind::Unary || kind == OpKind::Binary || kind == OpKind::Ternary;
  return pointwise && hasOtherArgs ? OpKind::Other : kind;
}

std::string lower(std::string s) {
  for (char &ch : s)
    if (ch >= 'A' && ch <= 'Z')
      ch = static_cast<char>(ch - 'A' + 'a');
  return s;
}

} // namespace

void Parser::failAfter(size_t offset, bool crossedLine, const std::string &what) const {
  // When the expected token would have ended the previous line, point there
  // rather than at whatever the next line starts with.
  if (crossedLine)
    c_.failAt(offset, "expected " + what + ", found end of line");
  c_.failExpected(what);
}

std::vector<TensorNum> Parser::parseStatementOutputs() {
  // `T2_... =`, or `( T19_..., T20_... ) =` for ops with several outputs.
  bool parenthesized = c_.accept("(");
  if (parenthesized)
    c_.skipBlank();
  std::vector<TensorNum> outputs;
  while (true) {
    outputs.push_back(parseTensor().number);
    size_t after = c_.pos();
    bool crossed = c_.skipBlank();
    if (c_.accept(",")) {
      c_.skipBlank();
      if (!atTensorStart())
        c_.failExpected("another output tensor after ','");
      continue;
    }
    if (parenthesized && c_.accept(")")) {
      parenthesized = false;
      after = c_.pos();
      crossed = c_.skipBlank();
    }
    if (!parenthesized && c_.peek() == '=' && c_.peek(1) != '=')
      return outputs;
    failAfter(after, crossed,
              parenthesized ? "',' or ')' after the output T" + std::to_string(outputs.back())
                            : "'=' after the output T" + std::to_string(outputs.back()));
  }
}

void Parser::skipHostOnlyStatement() {
  // Memory and stream management: nothing to check. Pastes wrap long
  // statements, so a `)` alone on the next line closes this one.
  int open = 0;
  while (!c_.atLineEnd()) {
    open += c_.peek() == '(' ? 1 : c_.peek() == ')' ? -1 : 0;
    c_.advance();
  }
  size_t next = curLine() + 1;
  if (open > 0 && next < src_.lineCount() && src_.trimmedLine(next) == ")") {
    c_.nextLine();
    c_.skipToLineEnd();
  }
}

std::optional<size_t> Parser::parseStatement(bool hostIr) {
  size_t start = c_.pos();
  std::vector<TensorNum> outputs = parseStatementOutputs();
  c_.advance(); // '='
  c_.skipBlank();
  std::string outName = "T" + std::to_string(outputs.front());
  if (hostIr) {
    Cursor look = c_;
    std::string_view name = look.parseIdentifier();
    if (contains(kHostOnlyRhs, name)) {
      skipHostOnlyStatement();
      return std::nullopt;
    }
  }
  Rhs rhs = parseRhs(outName);
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after the statement defining " + outName);
  Expr e = makeExpr(std::move(outputs), std::move(rhs), c_.locAt(start));
  // A statement in a loop body runs once per iteration (ir/HostLoops.h);
  // slice views are no statements of their own there.
  if (hostIr && !isSliceView(e))
    for (auto &attr : hostScopeAttrs(/*communication=*/false))
      e.attrs.push_back(std::move(attr));
  return cur_->noteExpr(std::move(e));
}

Rhs Parser::parseRhs(const std::string &outName) {
  size_t start = c_.pos();
  Rhs rhs;
  rhs.opOffset = start;
  char ch = c_.peek();
  if (atTensorStart()) {
    CallArg first = parseOperand();
    Cursor afterOperand = c_;
    c_.skipSpaces();
    if (c_.accept(";")) {
      // 2023 dumps print a plain copy as `T12_l[...] = T0_g[...];`.
      rhs.form = Rhs::Form::Call;
      rhs.op = "Set";
      rhs.args.push_back(std::move(first));
      rhs.semicolon = true;
      return rhs;
    }
    c_ = afterOperand;
    return parseInlineRest(std::move(first));
  }
  if ((ch == '-' || ch == '!' || ch == '~') && c_.peek(1) == 'T') {
    rhs.form = Rhs::Form::Prefix;
    rhs.op = std::string(1, ch);
    c_.advance();
    rhs.args.push_back(parseOperand());
    c_.skipSpaces();
    c_.expect(";", "to end the statement defining " + outName);
    rhs.semicolon = true;
    return rhs;
  }
  if (ch == '(' && tryCStyleCast(rhs))
    return rhs;
  if (isIdentStart(ch)) {
    Cursor save = c_;
    while (isIdentChar(c_.peek()) || c_.peek() == '.')
      c_.advance();
    if (c_.peek() == '(') {
      rhs.op = std::string(c_.source().text().substr(start, c_.pos() - start));
      return parseCallRest(std::move(rhs), start);
    }
    c_ = save;
  }
  if (isIdentChar(ch) || ch == '.' || ch == '(' || ch == '-')
    return parseInlineRest(parseOperand());
  c_.failExpected("an expression defining " + outName);
}

Rhs Parser::parseCallRest(Rhs rhs, size_t start) {
  rhs.form = Rhs::Form::Call;
  rhs.args = parseCallArgs(shownToken(rhs.op));
  Cursor afterCall = c_;
  // `double(2)` may be the scalar left operand of an inline binary op, whose
  // operator nvFuser prints at the start of the next line.
  c_.skipSpaces();
  if (c_.peek() == '\n') {
    c_.advance();
    c_.skipSpaces();
  }
  if (matchBinaryOperator(c_) && rhs.op.find('.') == std::string::npos) {
    c_.setPos(start);
    return parseInlineRest(parseOperand());
  }
  c_ = afterCall;
  c_.skipSpaces();
  rhs.semicolon = c_.accept(";");
  return rhs;
}

Rhs Parser::parseInlineRest(CallArg lhs) {
  Rhs rhs;
  rhs.form = Rhs::Form::Inline;
  size_t after = c_.pos();
  bool crossed = c_.skipBlank();
  auto op = matchBinaryOperator(c_);
  if (!op)
    failAfter(after, crossed, "a binary operator (such as '+') after the first operand");
  rhs.op = std::string(*op);
  rhs.opOffset = c_.pos();
  c_.advance(op->size());
  c_.skipBlank();
  rhs.args.push_back(std::move(lhs));
  rhs.args.push_back(parseOperand());
  c_.skipSpaces();
  c_.expect(";", "to end the binary expression");
  rhs.semicolon = true;
  return rhs;
}

bool Parser::tryCStyleCast(Rhs &rhs) {
  // `(float)(T0_g[...])` as printed before mid 2025.
  Cursor save = c_;
  size_t start = c_.pos();
  c_.advance();
  size_t typeStart = c_.pos();
  while (isIdentChar(c_.peek()) || c_.peek() == ':' || c_.peek() == '<' || c_.peek() == '>')
    c_.advance();
  size_t typeEnd = c_.pos();
  if (typeEnd == typeStart || !c_.accept(")") || !c_.accept("(")) {
    c_ = save;
    return false;
  }
  c_.skipBlank();
  if (!atTensorStart()) {
    c_ = save;
    return false;
  }
  rhs.form = Rhs::Form::CStyleCast;
  rhs.op = "(" + std::string(c_.source().text().substr(typeStart, typeEnd - typeStart)) + ")";
  rhs.opOffset = start;
  rhs.args.push_back(parseOperand());
  c_.skipBlank();
  c_.expect(")", "to close the cast operand");
  c_.skipSpaces();
  c_.expect(";", "to end the cast");
  rhs.semicolon = true;
  return true;
}

CallArg Parser::parseOperand() {
  CallArg arg;
  arg.offset = c_.pos();
  if (atTensorStart()) {
    arg.kind = CallArg::Kind::Tensor;
    arg.tensor = parseTensor().number;
    return arg;
  }
  arg.kind = CallArg::Kind::Scalar;
  arg.text = parseScalarText();
  return arg;
}

void Parser::scanGroup() {
  // A bracketed group on one line, e.g. `(0)`, `{false, true}`, `iS3{4}`'s
  // braces; nesting is counted, mismatches are errors.
  std::string closers;
  size_t start = c_.pos();
  do {
    char ch = c_.peek();
    if (c_.atLineEnd())
      c_.failExpected("'" + std::string(1, closers.back()) + "' to close the '" +
                      std::string(1, c_.source().text()[start]) + "' opened at column " +
                      std::to_string(c_.locAt(start).column));
    if (ch == '(' || ch == '[' || ch == '{')
      closers.push_back(ch == '(' ? ')' : ch == '[' ? ']' : '}');
    else if (ch == ')' || ch == ']' || ch == '}') {
      if (ch != closers.back())
        c_.failExpected("'" + std::string(1, closers.back()) + "'");
      closers.pop_back();
    }
    c_.advance();
  } while (!closers.empty());
}

std::string Parser::parseScalarText() {
  size_t start = c_.pos();
  c_.accept("-");
  if (c_.peek() == '(') {
    scanGroup();
    if (c_.peek() == '(')
      scanGroup(); // `(double)(i3)`
  } else if (isIdentChar(c_.peek()) || c_.peek() == '.') {
    bool number = isDigit(c_.peek()) || c_.peek() == '.';
    while (isIdentChar(c_.peek()) || c_.peek() == '.') {
      char prev = c_.peek();
      c_.advance();
      // An exponent sign (`1e-05`) belongs to the number.
      if (number && (prev == 'e' || prev == 'E') && (c_.peek() == '+' || c_.peek() == '-') &&
          isDigit(c_.peek(1)))
        c_.advance();
    }
    if (c_.peek() == '(')
      scanGroup(); // `float(0)`
  } else {
    c_.failExpected("an operand (a tensor or a scalar)");
  }
  return std::string(c_.source().text().substr(start, c_.pos() - start));
}

std::string Parser::scanRawArg() {
  size_t start = c_.pos();
  while (!c_.atLineEnd() && c_.peek() != ',' && c_.peek() != ')') {
    char ch = c_.peek();
    if (ch == '(' || ch == '[' || ch == '{')
      scanGroup();
    else if (ch == ']' || ch == '}')
      c_.failExpected("an argument (unbalanced '" + std::string(1, ch) + "')");
    else
      c_.advance();
  }
  return std::string(trim(c_.source().text().substr(start, c_.pos() - start)));
}

std::optional<std::string> Parser::tryParseKey() {
  // `cache_op=`, `op = `, `initial value = `: words, then a lone '='.
  Cursor save = c_;
  std::string key;
  while (true) {
    std::string_view word = c_.parseIdentifier();
    if (word.empty())
      break;
    key += (key.empty() ? "" : " ") + std::string(word);
    c_.skipSpaces();
    if (c_.peek() == '=' && c_.peek(1) != '=') {
      c_.advance();
      c_.skipSpaces();
      return key;
    }
  }
  c_ = save;
  return std::nullopt;
}

CallArg Parser::parseCallArg(const std::string &name) {
  CallArg arg;
  arg.offset = c_.pos();
  if (atTensorStart())
    return parseOperand();
  if (c_.peek() == '{') {
    arg.kind = CallArg::Kind::Braced;
    scanGroup();
    arg.text = std::string(c_.source().text().substr(arg.offset, c_.pos() - arg.offset));
    return arg;
  }
  if (auto key = tryParseKey()) {
    arg.kind = CallArg::Kind::KeyValue;
    arg.key = *key;
    arg.valueOffset = c_.pos();
    if (atTensorStart())
      arg.tensor = parseTensor().number;
    else
      arg.text = scanRawArg();
    if (!arg.tensor && arg.text.empty())
      c_.failExpected("a value after '" + shownToken(arg.key) + " ='");
    return arg;
  }
  arg.kind = CallArg::Kind::Scalar;
  arg.text = scanRawArg();
  if (arg.text.empty())
    c_.failExpected("an argument of " + name);
  return arg;
}

std::vector<CallArg> Parser::parseCallArgs(const std::string &name) {
  c_.expect("(", "after '" + name + "'");
  std::vector<CallArg> args;
  c_.skipBlank();
  if (c_.accept(")"))
    return args;
  while (true) {
    args.push_back(parseCallArg(name));
    size_t after = c_.pos();
    bool crossed = c_.skipBlank();
    if (c_.accept(",")) {
      c_.skipBlank();
      continue;
    }
    if (c_.accept(")"))
      return args;
    failAfter(after, crossed, "',' or ')' in the arguments of " + name);
  }
}

std::vector<bool> Parser::parseFlags(const CallArg &arg) {
  // `{false, true}`; the value text starts at arg.valueOffset.
  std::vector<bool> flags;
  std::string_view text = arg.text;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    c_.failAt(arg.valueOffset,
              "expected flags like '{false, true}', found '" + excerpt(text) + "'");
  size_t i = 1;
  while (i + 1 < text.size()) {
    while (i + 1 < text.size() && (isInlineSpace(text[i]) || text[i] == ','))
      ++i;
    size_t start = i;
    while (i + 1 < text.size() && !isInlineSpace(text[i]) && text[i] != ',')
      ++i;
    std::string_view item = text.substr(start, i - start);
    if (item.empty())
      break;
    if (item == "true" || item == "1")
      flags.push_back(true);
    else if (item == "false" || item == "0")
      flags.push_back(false);
    else
      c_.failAt(arg.valueOffset + start,
                "expected 'true' or 'false' in the flags, found '" + excerpt(item) + "'");
  }
  return flags;
}

bool Parser::addArgs(Expr &e, const Rhs &rhs) {
  // Tensors and scalars are operands in printed order; braced and key=value
  // arguments become attributes (broadcast/squeeze flags their own field).
  size_t positional = 0;
  bool hasOtherArgs = false;
  for (const CallArg &a : rhs.args) {
    if (a.kind == CallArg::Kind::Tensor) {
      e.inputs.push_back(Operand::ofTensor(*a.tensor));
      ++positional;
    } else if (a.kind == CallArg::Kind::Scalar) {
      e.inputs.push_back(Operand::ofScalar(a.text));
      ++positional;
    } else if (a.kind == CallArg::Kind::Braced) {
      hasOtherArgs = true;
      e.attrs.emplace_back("arg" + std::to_string(positional++), a.text);
    } else {
      hasOtherArgs = true;
      if (a.key == "flags")
        e.flags = parseFlags(a);
      else if (a.tensor)
        e.inputs.push_back(Operand::ofTensor(*a.tensor)); // scatter(in = T0, ...)
      else
        e.attrs.emplace_back(a.key, a.text);
    }
  }
  return hasOtherArgs;
}

Expr Parser::makeExpr(std::vector<TensorNum> outputs, Rhs rhs, const SourceLoc &loc) {
  Expr e;
  e.loc = loc;
  e.outputs = std::move(outputs);
  e.op = rhs.op;
  bool hasOtherArgs = addArgs(e, rhs);
  switch (rhs.form) {
  case Rhs::Form::Inline:
    e.kind = OpKind::Binary;
    break;
  case Rhs::Form::Prefix:
    e.kind = OpKind::Unary;
    break;
  case Rhs::Form::CStyleCast:
    e.kind = OpKind::Cast;
    break;
  case Rhs::Form::Call:
    e.kind = kindOfCall(rhs.op, hasOtherArgs);
    break;
  }
  checkOperands(e, rhs);
  return e;
}

void Parser::checkOperands(const Expr &e, const Rhs &rhs) {
  if (auto problem = exprShapeProblem(e))
    c_.failAt(rhs.opOffset, "'" + shownToken(e.op) + "' " + *problem);
}

std::vector<int64_t> Parser::parseTeam() {
  c_.expect("(", "to open the team");
  std::vector<int64_t> team;
  while (true) {
    c_.skipSpaces();
    if (c_.accept(")"))
      return team;
    if (!isDigit(c_.peek()))
      c_.failExpected("a device id or ')' in the team");
    team.push_back(c_.parseInt("device id"));
    c_.skipSpaces();
    c_.accept(",");
  }
}

void Parser::parseCommunicationField(const std::string &key, Expr &e) {
  CommunicationInfo &info = *e.communication;
  std::string k = lower(key);
  if (k == "type") {
    size_t at = c_.pos();
    std::string_view name = c_.parseIdentifier();
    auto type = parseCollectiveType(name);
    if (!type)
      c_.failAt(at, "unknown collective type '" + excerpt(name.empty() ? c_.found() : name) +
                        "' (expected Allgather, Gather, Scatter, Reduce, Allreduce, "
                        "ReduceScatter, Broadcast, SendRecv, AllToAll or CollectivePermute)");
    info.type = *type;
    e.op = collectiveTypeName(*type);
  } else if (k == "team") {
    info.team = parseTeam();
  } else if (k == "root" && isDigit(c_.peek())) {
    info.root = c_.parseInt("root");
  } else if (k == "input" || k == "output") {
    if (!atTensorStart())
      c_.failExpected("a tensor after '" + shownToken(key) + "='");
    TensorNum t = parseTensor().number;
    if (k == "input")
      e.inputs = {Operand::ofTensor(t)};
    else
      e.outputs = {t};
  } else if (k == "backend") {
    info.backend = std::string(c_.parseIdentifier());
    if (info.backend.empty())
      c_.failExpected("a backend name after 'backend='");
  } else {
    std::string value = scanRawArg();
    if (value.empty())
      c_.failExpected("a value after '" + shownToken(key) + "='");
    e.attrs.emplace_back(key, value);
  }
}

void Parser::parseCommunication() {
  // `Communication N (type=T, ...)`, or since 2026 `CollectivePermute N
  // (team=(...), send_peer=P, recv_peer=Q, ...)`, which names its type.
  size_t start = c_.pos();
  bool permute = c_.accept("CollectivePermute");
  if (!permute)
    c_.expect("Communication", "");
  c_.skipSpaces();
  Expr e;
  e.kind = OpKind::Communication;
  e.loc = c_.locAt(start);
  e.communication = CommunicationInfo{};
  if (permute) {
    e.communication->type = CollectiveType::CollectivePermute;
    e.op = collectiveTypeName(CollectiveType::CollectivePermute);
  }
  e.communication->number = parseSmallInt("communication number");
  std::string name =
      (permute ? "CollectivePermute " : "Communication ") + std::to_string(e.communication->number);
  c_.skipSpaces();
  c_.expect("(", "after '" + name + "'");
  bool sawType = permute, sawTeam = false;
  while (true) {
    c_.skipSpaces();
    std::string key(c_.parseIdentifier());
    if (key.empty())
      c_.failExpected("a field such as 'type=' in " + name);
    c_.skipSpaces();
    c_.expect("=", "after '" + shownToken(key) + "' in " + name);
    c_.skipSpaces();
    sawType |= lower(key) == "type";
    sawTeam |= lower(key) == "team";
    parseCommunicationField(key, e);
    c_.skipSpaces();
    if (c_.accept(","))
      continue;
    if (c_.accept(")"))
      break;
    c_.failExpected("',' or ')' in " + name);
  }
  if (!sawType || !sawTeam)
    c_.failAt(start, name + " has no '" + (sawType ? "team" : "type") + "=' field");
  if (e.inputs.empty() || e.outputs.empty())
    c_.failAt(start, name + " has no '" + (e.inputs.empty() ? "input" : "output") + "=' field");
  for (auto &attr : hostScopeAttrs(/*communication=*/true))
    e.attrs.push_back(std::move(attr));
  c_.skipSpaces();
  // Before July 2024 the Wait that follows was printed on the same line.
  if (c_.startsWith("Wait"))
    c_.skipToLineEnd();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after " + name);
  cur_->noteExpr(std::move(e));
}

} // namespace shardcheck::reader
