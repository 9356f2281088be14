// Block detection and the line loops of each block kind: `%kernel_math {`
// and `%kernel {` (with their `Inputs:`/`Outputs:` header and optional
// TransformPrinter section; old ones close with a bare `}`),
// `%HostIrContainer {` (the July-2024 `HOST IRS:` ... `END.` layout too, with
// loop and branch scopes tracked by indentation), segmented fusions
// (`Segmented_Fusion Dump:` ... `} //Segmented_Fusion`, or their group
// details pasted alone) and transforms-only sections (after a
// `TransformPrinter :` line or not). Text outside blocks is skipped. Where
// the input ends early the parse stops and Parser::truncationOf decides
// whether it was cut (kept, marked) or malformed (an error).
//
// This file does not decide what a construct means for the checker: a
// statement in a loop only carries its loop's header and number
// (kHostLoopAttr, kHostLoopIdAttr; ir/HostLoops.h).
#include "ir/reader/Parser.h"

#include "ir/HostLoops.h"

#include <algorithm>
#include <array>

namespace shardcheck::reader {

namespace {

constexpr std::string_view kKernelCloser = "} // %kernel";
constexpr std::string_view kMathCloser = "} // %kernel_math";
constexpr std::string_view kHostCloser = "} // %HostIrContainer";
constexpr std::string_view kSegmentedCloser = "} //Segmented_Fusion";
constexpr std::string_view kCompleteFusionCloser = "} // {Re-written complete fusion}";

/// Host IR statements that manage streams, memory, control flow or launches:
/// accepted and skipped (the computation they schedule is printed elsewhere).
constexpr std::array<std::string_view, 19> kHostSkipped{"Wait",
                                                        "FOR",
                                                        "IF",
                                                        "ELSE",
                                                        "PostOnStream",
                                                        "ShardByStream",
                                                        "SetCurrentStream",
                                                        "GetCurrentStream",
                                                        "Synchronize",
                                                        "Stream",
                                                        "Deallocate",
                                                        "P2PCommunication",
                                                        "LaunchKernel",
                                                        "StartCoalescing",
                                                        "EndCoalescing",
                                                        "ALLOCATE",
                                                        "ShareMemHandles",
                                                        "Allocate"};

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// `T12_...`: the start of a tensor name.
bool isTensorName(std::string_view s) {
  if (s.size() < 3 || s[0] != 'T' || !isDigit(s[1]))
    return false;
  size_t i = 1;
  while (i < s.size() && isDigit(s[i]))
    ++i;
  return i < s.size() && s[i] == '_';
}

/// The number of the tensor a line starts with, or -1 if it does not fit.
int64_t leadingTensorNumber(std::string_view s) {
  int64_t n = 0;
  for (size_t i = 1; i < s.size() && isDigit(s[i]); ++i) {
    if (n > 100000000)
      return -1;
    n = n * 10 + (s[i] - '0');
  }
  return n;
}

bool isStrayCloser(std::string_view t) {
  return t == kKernelCloser || t == kMathCloser || t == kHostCloser || t == kSegmentedCloser;
}

/// `TransformPrinter :` (any spacing before the colon).
bool isTransformPrinterHeader(std::string_view t) {
  if (!startsWith(t, "TransformPrinter"))
    return false;
  std::string_view rest = trim(t.substr(16));
  return !rest.empty() && rest.front() == ':' && trim(rest.substr(1)).empty();
}

/// A line that ends an `Inputs:` entry list although it is indented (a
/// torchrun `[rank0]:` prefix indents every line).
bool endsEntryList(std::string_view trimmed) {
  return trimmed == "Outputs:" || trimmed == "Inputs:" || startsWith(trimmed, "%");
}

/// Where the statement quoted by an assert message (`... Given: T6_l[...]
/// = Op(...)`) starts in a trimmed line, if the line quotes one.
std::optional<size_t> assertedStatementOffset(std::string_view t) {
  size_t at = t.find("Given: T");
  if (at == std::string_view::npos || !isTensorName(t.substr(at + 7)) ||
      t.find(" = ", at) == std::string_view::npos)
    return std::nullopt;
  return at + 7;
}

/// The number of columns a line is indented by.
size_t indentOf(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && isInlineSpace(line[n]))
    ++n;
  return n;
}

bool isDtypeChar(char c) {
  return isIdentChar(c) || c == ':' || c == '<' || c == '>';
}

} // namespace

Document Parser::run() {
  std::optional<InputEnd> truncated;
  try {
    while (!c_.atEnd())
      parseTopLevelLine();
  } catch (const InputError &e) {
    truncated = truncationOf(e); // Rethrows malformed input.
  }
  if (blocks_.empty())
    throwInputError("no-fusion",
                    "no nvFuser block found: expected '%kernel {', '%kernel_math {', "
                    "'%HostIrContainer {', 'Segmented_Fusion Dump:' or a TransformPrinter entry",
                    src_.loc(0));
  Document doc;
  doc.file = src_.file();
  for (const auto &block : blocks_)
    doc.fusions.push_back(block->build(truncated && block == blocks_.back()));
  doc.truncated = std::move(truncated);
  return doc;
}

InputEnd Parser::truncationOf(const InputError &e) const {
  // A paste cut short fails where the text ends: mid-statement, or inside a
  // block whose closer never comes. Only blanks follow the failure then;
  // anything else after it is malformed input, which stays an error.
  const Diagnostic &d = e.diagnostic();
  if (d.code != kParseError || blocks_.empty())
    throw e;
  size_t offset = src_.size();
  if (d.loc.line >= 1 && static_cast<size_t>(d.loc.line) <= src_.lineCount())
    offset = std::min(src_.size(), src_.lineStart(d.loc.line - 1) + d.loc.column - 1);
  if (!trim(src_.text().substr(offset)).empty())
    throw e;
  // The statement being read is dropped (nothing of it was noted as an
  // expression); report at the start of the line it began on.
  size_t line = src_.lineOf(std::min(offset, src_.size() ? src_.size() - 1 : 0));
  while (line > 0 && src_.trimmedLine(line).empty())
    --line;
  return InputEnd{src_.loc(src_.lineStart(line)),
                  "the input ends early (" + d.message +
                      "): the complete statements before this line are checked; what the "
                      "dump would have said from here on is not"};
}

BlockBuilder &Parser::newBlock(BlockKind kind, size_t offset) {
  blocks_.push_back(std::make_unique<BlockBuilder>(kind, c_.locAt(offset)));
  cur_ = blocks_.back().get();
  return *cur_;
}

bool Parser::isScalarStatement(std::string_view t) const {
  // `i23 = 0 + 768;`, `b5 = i3 == 1;`: scalar arithmetic, one line each.
  if (t.empty() || !isIdentStart(t[0]))
    return false;
  size_t i = 0;
  while (i < t.size() && (isIdentChar(t[i]) || t[i] == '.'))
    ++i;
  while (i < t.size() && isInlineSpace(t[i]))
    ++i;
  return i + 1 < t.size() && t[i] == '=' && t[i + 1] != '=';
}

void Parser::parseTopLevelLine() {
  size_t line = curLine();
  std::string_view t = src_.trimmedLine(line);
  c_.setPos(src_.lineStart(line));
  if (startsWith(t, "%kernel_math {"))
    return parseKernelBlock(BlockKind::KernelMath, true);
  if (startsWith(t, "%kernel {"))
    return parseKernelBlock(BlockKind::Kernel, true);
  if (startsWith(t, "%HostIrContainer {"))
    return parseHostIr();
  if (startsWith(t, "Segmented_Fusion"))
    return parseSegmented();
  if (startsWith(t, "group details:")) {
    // A pasted fragment: the group details of a segmented fusion alone.
    c_.skipSpaces();
    newBlock(BlockKind::SegmentedFusion, c_.pos());
    return parseGroupDetails(true);
  }
  if (isTransformPrinterHeader(t) && isStandaloneTransformsStart(line + 1)) {
    c_.nextLine(); // A TransformPrinter section pasted on its own.
    return parseStandaloneTransforms();
  }
  if (t == "Inputs:" && ioHeaderLeadsToBlock(line))
    return parseIoHeaderAndBlock();
  if (isStandaloneTransformsStart(line))
    return parseStandaloneTransforms();
  if (isStrayCloser(t)) {
    c_.skipSpaces();
    c_.fail("'" + excerpt(t, 40) + "' without a block it closes");
  }
  if (auto given = assertedStatementOffset(t)) {
    // nvFuser's assert messages print the offending statement after
    // `Given: `; a user pastes exactly that, and it is one fusion.
    c_.setPos(static_cast<size_t>(t.data() - src_.text().data()) + *given);
    newBlock(BlockKind::Kernel, c_.pos());
    parseStatement(false);
  }
  c_.nextLine(); // Unrelated log text.
}

// --- Inputs:/Outputs: headers ---

std::optional<BlockKind> Parser::ioHeaderLeadsToBlock(size_t line) const {
  // `Inputs:` and `Outputs:` with indented entries, blank lines, then the
  // block. Anything else means the `Inputs:` line is unrelated text.
  size_t n = src_.lineCount(), i = line + 1;
  auto entry = [&](size_t l) {
    std::string_view text = src_.lineText(l);
    return !text.empty() && isInlineSpace(text[0]) && !trim(text).empty() &&
           !endsEntryList(trim(text));
  };
  while (i < n && entry(i))
    ++i;
  if (i >= n || src_.trimmedLine(i) != "Outputs:")
    return std::nullopt;
  for (++i; i < n && entry(i); ++i) {
  }
  while (i < n && src_.trimmedLine(i).empty())
    ++i;
  if (i < n && startsWith(src_.trimmedLine(i), "%kernel_math {"))
    return BlockKind::KernelMath;
  if (i < n && startsWith(src_.trimmedLine(i), "%kernel {"))
    return BlockKind::Kernel;
  return std::nullopt;
}

void Parser::parseIoHeaderAndBlock() {
  BlockKind kind = *ioHeaderLeadsToBlock(curLine());
  c_.skipSpaces();
  newBlock(kind, c_.pos());
  parseIoLists();
  while (!c_.atEnd() && curTrimmed().empty())
    c_.nextLine();
  parseKernelBlock(kind, false);
}

void Parser::parseIoLists() {
  c_.nextLine(); // `Inputs:`
  std::vector<TensorNum> inputs = parseIoEntries();
  c_.skipSpaces();
  c_.expect("Outputs:", "after the 'Inputs:' list");
  c_.nextLine();
  cur_->setInputs(std::move(inputs));
  cur_->setOutputs(parseIoEntries());
}

std::vector<TensorNum> Parser::parseIoEntries() {
  std::vector<TensorNum> tensors;
  while (!c_.atEnd()) {
    std::string_view text = src_.lineText(curLine());
    if (text.empty() || !isInlineSpace(text[0]) || trim(text).empty() || endsEntryList(trim(text)))
      break;
    parseIoEntry(tensors);
    c_.nextLine();
  }
  return tensors;
}

void Parser::parseIoEntry(std::vector<TensorNum> &out) {
  // `  T0_g_float[iS0{8}]`, old `  T0_g[ iS0{i0} ], float`, segmented-group
  // `T0_g_float[iS0{8}] float`, or a scalar input (`  i2`, `  d3, double`).
  c_.skipSpaces();
  if (atTensorStart()) {
    TensorPrint t = parseTensor();
    out.push_back(t.number);
  } else if (isIdentStart(c_.peek())) {
    c_.parseIdentifier();
  } else {
    c_.failExpected("a tensor (like 'T0_g_float[iS0{8}]') or a scalar in the list");
  }
  c_.skipSpaces();
  c_.accept(",");
  c_.skipSpaces();
  while (isDtypeChar(c_.peek()))
    c_.advance();
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after a list entry");
}

// --- %kernel and %kernel_math ---

void Parser::failUnclosed(const std::string &closer, const SourceLoc &open) const {
  c_.failAt(src_.size(), "expected '" + closer + "' to close the block opened at " + open.str() +
                             ", found end of input");
}

void Parser::expectCloser(std::string_view trimmed, const std::string &closer,
                          const SourceLoc &open) {
  // Old dumps (and July-2024 host units) close `%kernel {` and
  // `%kernel_math {` with a bare `}`.
  if (trimmed == closer || trimmed == "}")
    return;
  c_.fail("expected '" + closer + "' to close the block opened at " + open.str() + ", found '" +
          excerpt(trimmed, 40) + "'");
}

void Parser::parseKernelBlock(BlockKind kind, bool newBuilder) {
  c_.skipSpaces();
  size_t open = c_.pos();
  std::string header = kind == BlockKind::KernelMath ? "%kernel_math {" : "%kernel {";
  c_.expect(header, "to open the block");
  if (newBuilder)
    newBlock(kind, open);
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after '" + header + "'");
  std::string closer(kind == BlockKind::KernelMath ? kMathCloser : kKernelCloser);
  parseKernelBody(closer, c_.locAt(open));
}

void Parser::parseKernelBody(const std::string &closer, const SourceLoc &open) {
  c_.nextLine();
  while (true) {
    if (c_.atEnd())
      failUnclosed(closer, open);
    std::string_view t = curTrimmed();
    c_.skipSpaces();
    if (t.empty()) {
      c_.nextLine();
    } else if (t.front() == '}') {
      expectCloser(t, closer, open);
      c_.nextLine();
      return;
    } else if (startsWith(t, "TransformPrinter")) {
      c_.advance(16);
      c_.skipSpaces();
      c_.expect(":", "after 'TransformPrinter'");
      c_.skipSpaces();
      if (!c_.atLineEnd())
        c_.failExpected("end of line after 'TransformPrinter :'");
      return parseTransformPrinter(closer, open);
    } else if (atStatementStart()) {
      parseStatement(false);
      c_.nextLine();
    } else if (isScalarStatement(t)) {
      c_.nextLine();
    } else {
      c_.failExpected("an expression, 'TransformPrinter :' or '" + closer + "'");
    }
  }
}

void Parser::parseTransformPrinter(const std::string &closer, const SourceLoc &open) {
  c_.nextLine();
  while (true) {
    if (c_.atEnd())
      failUnclosed(closer, open);
    std::string_view t = curTrimmed();
    c_.skipSpaces();
    if (t.empty()) {
      c_.nextLine();
    } else if (t.front() == '}') {
      expectCloser(t, closer, open);
      c_.nextLine();
      return;
    } else if (atTensorStart()) {
      parseTensorSection();
    } else {
      c_.failExpected("a tensor of the TransformPrinter section or '" + closer + "'");
    }
  }
}

// --- %HostIrContainer ---

void Parser::parseHostIr() {
  c_.skipSpaces();
  size_t open = c_.pos();
  c_.expect("%HostIrContainer {", "to open the block");
  newBlock(BlockKind::HostIr, open);
  c_.skipSpaces();
  if (c_.peek() == '(')
    parseHostSignature();
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after the %HostIrContainer signature");
  c_.nextLine();
  hostScopes_.clear();
  hostLoopsSeen_ = 0;
  SourceLoc openLoc = c_.locAt(open);
  while (true) {
    if (c_.atEnd())
      failUnclosed(std::string(kHostCloser), openLoc);
    if (!parseHostBodyLine(openLoc))
      return;
  }
}

bool Parser::parseHostBodyLine(const SourceLoc &openLoc) {
  std::string_view t = curTrimmed();
  c_.skipSpaces();
  if (t.empty()) {
    c_.nextLine();
  } else if (t.front() == '}' || t == "END.") {
    // `} // %HostIrContainer`; July-2024 containers end with `END.`.
    if (t != "}" && t != kHostCloser && t != "END.")
      c_.failExpected("'" + std::string(kHostCloser) + "' to close the block opened at " +
                      openLoc.str());
    c_.nextLine();
    return false;
  } else if (startsWith(t, "HOST IRS:")) {
    // July 2024: `%HostIrContainer {`, a blank line, then the signature.
    c_.advance(9);
    c_.skipSpaces();
    parseHostSignature();
    c_.skipSpaces();
    if (!c_.atLineEnd())
      c_.failExpected("end of line after the HOST IRS signature");
    c_.nextLine();
  } else {
    noteHostScope();
    parseHostLine();
  }
  return true;
}

void Parser::noteHostScope() {
  // Host IR nests loop and branch bodies by indentation: a line closes every
  // scope indented as deep as it or deeper.
  size_t indent = indentOf(src_.lineText(curLine()));
  while (!hostScopes_.empty() && hostScopes_.back().indent >= indent)
    hostScopes_.pop_back();
  std::string_view t = curTrimmed();
  bool loop = startsWith(t, "FOR ");
  if (loop || startsWith(t, "IF ") || startsWith(t, "ELSE")) {
    // The header without its `:` and without characters a Communication
    // field value cannot hold (it is kept as one, see parseCommunication).
    std::string header(
        t.substr(0, t.rfind(':') == std::string_view::npos ? t.size() : t.rfind(':')));
    for (char &ch : header)
      if (ch == ',' || ch == '(' || ch == ')')
        ch = ' ';
    hostScopes_.push_back(
        HostScope{indent, loop, std::string(trim(header)), loop ? ++hostLoopsSeen_ : 0});
  }
}

std::vector<std::pair<std::string, std::string>> Parser::hostScopeAttrs(bool communication) const {
  const HostScope *loop = nullptr, *branch = nullptr;
  std::string outer;
  for (const HostScope &s : hostScopes_) {
    if (!s.loop) {
      branch = &s;
      continue;
    }
    if (loop)
      outer += (outer.empty() ? "" : " ; ") + loop->header;
    loop = &s;
  }
  std::vector<std::pair<std::string, std::string>> attrs;
  if (loop) {
    attrs.emplace_back(kHostLoopAttr, loop->header);
    attrs.emplace_back(kHostLoopIdAttr, std::to_string(loop->loopNumber));
    if (!outer.empty())
      attrs.emplace_back(kHostLoopOuterAttr, outer);
  }
  if (branch && (loop || communication))
    attrs.emplace_back(kHostBranchAttr, branch->header);
  return attrs;
}

void Parser::parseHostSignature() {
  // `(T0_g_float[...] (DeviceMesh{0 1}), T1_...) -> (T2_...) :`
  c_.expect("(", "to open the host IR inputs");
  std::vector<TensorNum> inputs = parseValueList();
  c_.skipSpaces();
  c_.expect("->", "between the inputs and outputs of the host IR signature");
  c_.skipSpaces();
  c_.expect("(", "to open the host IR outputs");
  std::vector<TensorNum> outputs = parseValueList();
  c_.skipSpaces();
  c_.expect(":", "to end the host IR signature");
  cur_->setInputs(std::move(inputs));
  cur_->setOutputs(std::move(outputs));
}

std::vector<TensorNum> Parser::parseValueList() {
  std::vector<TensorNum> tensors;
  c_.skipSpaces();
  if (c_.accept(")"))
    return tensors;
  while (true) {
    c_.skipSpaces();
    if (atTensorStart())
      tensors.push_back(parseTensor().number);
    else if (scanRawArg().empty())
      c_.failExpected("a tensor or a scalar in the list");
    c_.skipSpaces();
    if (c_.accept(","))
      continue;
    if (c_.accept(")"))
      return tensors;
    c_.failExpected("',' or ')' in the list");
  }
}

void Parser::parseHostLine() {
  if (c_.startsWith("%kernel {")) {
    // A host unit's kernel: its expressions join the host IR fusion.
    size_t open = c_.pos();
    c_.advance(9);
    c_.skipSpaces();
    if (!c_.atLineEnd())
      c_.failExpected("end of line after '%kernel {'");
    return parseKernelBody(std::string(kKernelCloser), c_.locAt(open));
  }
  if (atStatementStart()) {
    parseStatement(true);
    return c_.nextLine();
  }
  Cursor look = c_;
  std::string_view word = look.parseIdentifier();
  look.skipSpaces();
  if ((word == "Communication" || word == "CollectivePermute") && isDigit(look.peek())) {
    parseCommunication();
    return c_.nextLine();
  }
  if (startsWith(word, "HostUnit"))
    return parseHostUnitHeader();
  if (std::find(kHostSkipped.begin(), kHostSkipped.end(), word) != kHostSkipped.end() ||
      isScalarStatement(curTrimmed()))
    return c_.nextLine();
  c_.failExpected("a host IR statement (an expression, 'Communication N (...)', 'Wait', "
                  "'FOR', 'PostOnStream', ...) or '" +
                  std::string(kHostCloser) + "'");
}

void Parser::parseHostUnitHeader() {
  // `HostUnit0: Inputs={...} -> Outputs={...}`, which nvFuser sometimes
  // prints glued to the `Inputs:` list of the kernel print that follows
  // (`... }Inputs:`); the lists repeat what the kernel says.
  std::string_view t = curTrimmed();
  bool gluedLists = t.size() >= 7 && t.substr(t.size() - 7) == "Inputs:";
  c_.nextLine();
  if (!gluedLists)
    return;
  std::vector<TensorNum> ignored = parseIoEntries();
  c_.skipSpaces();
  c_.expect("Outputs:", "after the 'Inputs:' list of the host unit");
  c_.nextLine();
  ignored = parseIoEntries();
}

// --- Segmented fusions ---

void Parser::parseSegmented() {
  c_.skipSpaces();
  newBlock(BlockKind::SegmentedFusion, c_.pos());
  while (true) {
    if (c_.atEnd())
      failUnclosed(std::string(kSegmentedCloser), cur_->loc());
    if (!parseSegmentedLine())
      return;
  }
}

bool Parser::parseSegmentedLine() {
  std::string_view t = curTrimmed();
  c_.skipSpaces();
  if (t.empty() || startsWith(t, "Segmented_Fusion")) {
    c_.nextLine();
  } else if (t == "Inputs:") {
    parseIoLists();
  } else if (startsWith(t, "%kernel_math {")) {
    parseKernelBlock(BlockKind::KernelMath, false);
  } else if (startsWith(t, "%kernel {")) {
    parseKernelBlock(BlockKind::Kernel, false);
  } else if (t == kCompleteFusionCloser) {
    // The complete fusion may be followed by its segments; if not, the
    // block ends here.
    c_.nextLine();
    size_t line = curLine();
    while (!c_.atEnd() && line < src_.lineCount() && src_.trimmedLine(line).empty())
      ++line;
    return !c_.atEnd() && line < src_.lineCount() &&
           startsWith(src_.trimmedLine(line), "Segmented_Fusion");
  } else if (startsWith(t, "groups:") || startsWith(t, "edges:")) {
    skipToGroupDetails();
  } else if (startsWith(t, "group details:")) {
    parseGroupDetails(false);
    return false;
  } else if (t == kSegmentedCloser) {
    c_.nextLine();
    return false;
  } else {
    c_.failExpected("a segmented-fusion section ('Inputs:', '%kernel {', 'groups:', "
                    "'group details:') or '" +
                    std::string(kSegmentedCloser) + "'");
  }
  return true;
}

void Parser::skipToGroupDetails() {
  // The `groups:` and `edges:` summaries repeat what the details print.
  c_.nextLine();
  while (!c_.atEnd()) {
    std::string_view t = curTrimmed();
    if (startsWith(t, "group details:") || t == kSegmentedCloser)
      return;
    c_.nextLine();
  }
}

void Parser::parseGroupDetails(bool fragment) {
  // A fragment (the group details pasted alone) may end after any group.
  c_.nextLine();
  while (true) {
    if (c_.atEnd() && fragment)
      return;
    if (c_.atEnd())
      failUnclosed(std::string(kSegmentedCloser), cur_->loc());
    std::string_view t = curTrimmed();
    c_.skipSpaces();
    if (t.empty()) {
      c_.nextLine();
    } else if (t == kSegmentedCloser) {
      c_.nextLine();
      return;
    } else if (startsWith(t, "g{")) {
      parseGroup();
    } else {
      c_.failExpected("a group 'g{(scheduler)' or '" + std::string(kSegmentedCloser) + "'");
    }
  }
}

SegmentGroup Parser::parseGroupHeader() {
  // `g{(pointwise)`, or `g{` in groups without a scheduler.
  c_.expect("g{", "to open a group");
  SegmentGroup group;
  group.name = "g" + std::to_string(cur_->groupCount());
  if (c_.accept("(")) {
    size_t start = c_.pos();
    while (!c_.atLineEnd() && c_.peek() != ')')
      c_.advance();
    group.scheduler = std::string(c_.source().text().substr(start, c_.pos() - start));
    c_.expect(")", "to close the scheduler name");
  }
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after the group header");
  return group;
}

void Parser::parseExprNumber(const SegmentGroup &group) {
  // `(7)`: the name of the expression just printed.
  if (group.exprs.empty())
    c_.fail("expected an expression before its number '" + excerpt(curTrimmed()) + "'");
  c_.advance();
  parseSmallInt("expression number");
  c_.expect(")", "after the expression number");
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after the expression number");
}

void Parser::parseGroupExpr(SegmentGroup &group, const SourceLoc &open) {
  if (c_.accept(",")) // Old groups separate expressions with ` , `.
    c_.skipSpaces();
  if (atTensorStart())
    group.exprs.push_back(*parseStatement(false));
  else if (!isScalarStatement(curTrimmed()))
    c_.failExpected("an expression, 'inputs:', 'outputs:' or '}' in the group opened at " +
                    open.str());
}

void Parser::parseGroup() {
  SourceLoc open = c_.loc();
  SegmentGroup group = parseGroupHeader();
  c_.nextLine();
  bool listMode = false;
  while (true) {
    if (c_.atEnd())
      failUnclosed("}", open);
    std::string_view t = curTrimmed();
    c_.skipSpaces();
    if (t == "}") {
      c_.nextLine();
      break;
    }
    if (t.empty()) {
      listMode = false; // The expressions follow the lists after blank lines.
    } else if (startsWith(t, "group id:")) {
      // `group id: 6` (since 2024): the group's number, informational.
    } else if (t == "inputs:" || t == "outputs:") {
      listMode = true;
    } else if (t.front() == '(') {
      parseExprNumber(group);
    } else if (listMode) {
      std::vector<TensorNum> ignored; // Group boundaries; the exprs say it all.
      parseIoEntry(ignored);
    } else {
      parseGroupExpr(group, open);
    }
    c_.nextLine();
  }
  cur_->addGroup(std::move(group));
}

// --- Transforms-only sections ---

bool Parser::isStandaloneTransformsStart(size_t line) const {
  if (!isTensorName(src_.trimmedLine(line)) || line + 1 >= src_.lineCount())
    return false;
  SectionLine next = classifySectionLine(src_.trimmedLine(line + 1));
  return next == SectionLine::Label || next == SectionLine::Contiguity;
}

void Parser::parseStandaloneTransforms() {
  // A section following a block whose tensors it all prints adds to that
  // block; otherwise it is a fusion of its own.
  std::vector<int64_t> headers;
  for (size_t line = curLine(); line < src_.lineCount(); ++line) {
    if (isStandaloneTransformsStart(line))
      headers.push_back(leadingTensorNumber(src_.trimmedLine(line)));
    else if (classifySectionLine(src_.trimmedLine(line)) == SectionLine::Other)
      break;
  }
  bool attach = !blocks_.empty() && std::all_of(headers.begin(), headers.end(), [&](int64_t t) {
    return t >= 0 && blocks_.back()->hasTensor(static_cast<TensorNum>(t));
  });
  c_.skipSpaces();
  if (attach)
    cur_ = blocks_.back().get();
  else
    newBlock(BlockKind::TransformsOnly, c_.pos());
  while (!c_.atEnd() && isStandaloneTransformsStart(curLine())) {
    c_.setPos(src_.lineStart(curLine()));
    c_.skipSpaces();
    parseTensorSection();
  }
}

} // namespace shardcheck::reader
