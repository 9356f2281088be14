// Parsing of TransformPrinter entries: a tensor header line followed by its
// domain lines (`root domain : (...)`, `logical domain: (...)`, the pre-2024
// `rfactor`/`leaf` spellings, `contiguity: t f n`) and transform lines
// (Split, Outer split, Merge, Resize, `Xor(2D)` swizzles, Swizzle1D). Used
// both inside `%kernel { ... TransformPrinter : ... }` and for
// transforms-only sections. See Parser.h.
#include "ir/reader/Parser.h"

#include <array>

namespace shardcheck::reader {

namespace {

struct LabelSpelling {
  std::string_view text;
  enum Which { Root, Logical, Allocation, Loop, AlternateLoop } which;
};

// Longer spellings first: `loop domain` is a suffix of `alternate loop domain`.
constexpr std::array<LabelSpelling, 7> kLabels{{
    {"alternate loop domain", LabelSpelling::AlternateLoop},
    {"allocation domain", LabelSpelling::Allocation},
    {"logical domain", LabelSpelling::Logical},
    {"rfactor domain", LabelSpelling::Logical},
    {"root domain", LabelSpelling::Root},
    {"loop domain", LabelSpelling::Loop},
    {"leaf domain", LabelSpelling::Loop},
}};

const LabelSpelling *matchLabel(std::string_view trimmed) {
  for (const auto &l : kLabels) {
    if (trimmed.substr(0, l.text.size()) != l.text)
      continue;
    std::string_view rest = trim(trimmed.substr(l.text.size()));
    if (!rest.empty() && rest.front() == ':')
      return &l;
  }
  return nullptr;
}

/// `Xor(2D):`, `CyclicShift(2D):`: a swizzle name then `(2D):`.
bool isSwizzle2DLine(std::string_view trimmed) {
  size_t n = 0;
  while (n < trimmed.size() && isIdentChar(trimmed[n]))
    ++n;
  return n > 0 && trimmed.substr(n, 5) == "(2D):";
}

} // namespace

SectionLine classifySectionLine(std::string_view trimmed) {
  if (matchLabel(trimmed))
    return SectionLine::Label;
  if (trimmed.substr(0, 10) == "contiguity") {
    std::string_view rest = trim(trimmed.substr(10));
    if (!rest.empty() && rest.front() == ':')
      return SectionLine::Contiguity;
  }
  for (std::string_view kw :
       {"Split:", "Outer split:", "Chunked outer split:", "Merge:", "Resize:"})
    if (trimmed.substr(0, kw.size()) == kw)
      return SectionLine::Transform;
  if (isSwizzle2DLine(trimmed) || trimmed.find("= Swizzle1D(") != std::string_view::npos)
    return SectionLine::Transform;
  return SectionLine::Other;
}

void Parser::parseTensorSection() {
  size_t headerOffset = c_.pos();
  TensorPrint t = parseTensor();
  std::string name = "T" + std::to_string(t.number);
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after the TransformPrinter header of " + name);
  c_.nextLine();
  DomainPrint d;
  d.loc = c_.locAt(headerOffset);
  size_t firstLine = curLine();
  while (!c_.atEnd()) {
    SectionLine kind = classifySectionLine(curTrimmed());
    if (kind == SectionLine::Other)
      break;
    c_.skipSpaces();
    if (kind == SectionLine::Label)
      parseDomainLabel(d, name);
    else if (kind == SectionLine::Contiguity)
      parseContiguity(d, name);
    else
      parseTransformLine();
    c_.nextLine();
  }
  if (!d.sawRoot && !d.sawLogical) {
    size_t at = curLine() == firstLine ? c_.pos() : headerOffset;
    c_.failAt(at, "expected 'logical domain : (...)' (or 'root domain') after the "
                  "TransformPrinter header of " +
                      name);
  }
  cur_->noteDomains(t.number, std::move(d));
}

void Parser::parseDomainLabel(DomainPrint &d, const std::string &tensorName) {
  size_t start = c_.pos();
  const LabelSpelling *label = matchLabel(c_.restOfLine());
  c_.advance(label->text.size());
  c_.skipSpaces();
  c_.expect(":", "after '" + std::string(label->text) + "'");
  c_.skipSpaces();
  std::string what = "the " + std::string(label->text) + " of " + tensorName;
  c_.expect("(", "to open " + what);
  std::vector<IdNum> ids = parseIdList(')', what);
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after " + what);
  auto assign = [&](std::vector<IdNum> &dst, bool &seen, SourceLoc &loc) {
    if (seen)
      c_.failAt(start, "a second '" + std::string(label->text) + "' line for " + tensorName);
    dst = std::move(ids);
    seen = true;
    loc = c_.locAt(start);
  };
  bool sawLoop = d.loop.has_value();
  std::vector<IdNum> ignored;
  switch (label->which) {
  case LabelSpelling::Root:
    assign(d.root, d.sawRoot, d.rootLoc);
    break;
  case LabelSpelling::Logical:
    assign(d.logical, d.sawLogical, d.logicalLoc);
    break;
  case LabelSpelling::Allocation:
    assign(d.allocation, d.sawAllocation, d.allocationLoc);
    break;
  case LabelSpelling::Loop: {
    std::vector<IdNum> loop;
    assign(loop, sawLoop, d.loopLoc);
    d.loop = std::move(loop);
    break;
  }
  case LabelSpelling::AlternateLoop:
    // Read (its IDs are noted) but not kept: the IR has no such domain.
    assign(ignored, d.sawAlternateLoop, d.alternateLoopLoc);
    break;
  }
}

void Parser::parseContiguity(DomainPrint &d, const std::string &tensorName) {
  if (d.sawContiguity)
    c_.fail("a second 'contiguity' line for " + tensorName);
  d.sawContiguity = true;
  d.contiguityLoc = c_.loc();
  c_.advance(10); // "contiguity"
  c_.skipSpaces();
  c_.expect(":", "after 'contiguity'");
  while (true) {
    c_.skipSpaces();
    if (c_.atLineEnd())
      return;
    size_t start = c_.pos();
    while (!c_.atLineEnd() && !isInlineSpace(c_.peek()) && c_.peek() != ',')
      c_.advance();
    std::string_view token = c_.source().text().substr(start, c_.pos() - start);
    if (token == "t" || token == "true" || token == "1")
      d.contiguity.push_back(Contiguity::True);
    else if (token == "f" || token == "false" || token == "0")
      d.contiguity.push_back(Contiguity::False);
    else if (token == "n")
      d.contiguity.push_back(Contiguity::None);
    else
      c_.failAt(start, "expected 't', 'f' or 'n' in the contiguity of " + tensorName + ", found '" +
                           excerpt(token) + "'");
    c_.skipSpaces();
    c_.accept(",");
  }
}

IdNum Parser::parseIdAfterSpaces() {
  c_.skipSpaces();
  if (!atIterDomainStart())
    c_.failExpected("an IterDomain like 'iS0{8}'");
  return parseIterDomain().number;
}

void Parser::expectKeyword(std::string_view word, const std::string &context) {
  c_.skipSpaces();
  c_.expect(word, context);
}

void Parser::parseSplit(Transform &t, bool inner) {
  t.kind = Transform::Kind::Split;
  t.innerSplit = inner;
  t.inputs = {parseIdAfterSpaces()};
  expectKeyword("by", "after the input of the split");
  expectKeyword("factor", "after 'by'");
  c_.skipSpaces();
  size_t factorOffset = c_.pos();
  t.factor = parseExtent();
  if (auto f = t.factor.asConstant(); f && *f <= 0)
    c_.failAt(factorOffset, "a split factor must be positive, found " + std::to_string(*f));
  expectKeyword("->", "after the split factor");
  IdNum outer = parseIdAfterSpaces();
  expectKeyword(",", "between the outputs of the split");
  IdNum innerId = parseIdAfterSpaces();
  t.outputs = {outer, innerId};
  // Pre-2023: `, start offset: 0, stop offset: 0` (no longer meaningful).
  c_.skipSpaces();
  if (c_.accept(",")) {
    expectKeyword("start offset:", "after ','");
    c_.skipSpaces();
    parseExtent();
    expectKeyword(",", "after the start offset");
    expectKeyword("stop offset:", "after ','");
    c_.skipSpaces();
    parseExtent();
  }
}

void Parser::parseMerge(Transform &t) {
  t.kind = Transform::Kind::Merge;
  IdNum outer = parseIdAfterSpaces();
  expectKeyword("and", "between the inputs of the merge");
  IdNum inner = parseIdAfterSpaces();
  t.inputs = {outer, inner};
  expectKeyword("->", "after the inputs of the merge");
  t.outputs = {parseIdAfterSpaces()};
}

void Parser::parseResize(Transform &t) {
  t.kind = Transform::Kind::Resize;
  t.inputs = {parseIdAfterSpaces()};
  expectKeyword("by", "after the input of the resize");
  c_.skipSpaces();
  t.left = parseSignedExtent();
  expectKeyword("and", "between the resize amounts");
  c_.skipSpaces();
  t.right = parseSignedExtent();
  expectKeyword("->", "after the resize amounts");
  t.outputs = {parseIdAfterSpaces()};
}

void Parser::parseSwizzle2D(Transform &t) {
  t.kind = Transform::Kind::Swizzle2D;
  t.detail = std::string(c_.parseIdentifier());
  c_.expect("(2D):", "after the swizzle name");
  IdNum x = parseIdAfterSpaces();
  expectKeyword(",", "between the swizzle inputs");
  IdNum y = parseIdAfterSpaces();
  t.inputs = {x, y};
  expectKeyword("->", "after the swizzle inputs");
  IdNum outX = parseIdAfterSpaces();
  expectKeyword(",", "between the swizzle outputs");
  IdNum outY = parseIdAfterSpaces();
  t.outputs = {outX, outY};
}

void Parser::parseSwizzle1D(Transform &t) {
  t.kind = Transform::Kind::Swizzle1D;
  t.outputs = {parseIdAfterSpaces()};
  expectKeyword("=", "after the output of Swizzle1D");
  expectKeyword("Swizzle1D(", "after '='");
  t.inputs = {parseIdAfterSpaces()};
  expectKeyword(",", "after the input of Swizzle1D");
  expectKeyword("parallelType", "in Swizzle1D");
  expectKeyword("=", "after 'parallelType'");
  c_.skipSpaces();
  size_t start = c_.pos();
  while (!c_.atLineEnd() && c_.peek() != ')' && !isInlineSpace(c_.peek()))
    c_.advance();
  t.detail = std::string(c_.source().text().substr(start, c_.pos() - start));
  if (t.detail.empty())
    c_.failExpected("a parallel type after 'parallelType='");
  expectKeyword(")", "to close Swizzle1D");
}

void Parser::parseTransformLine() {
  Transform t;
  t.loc = c_.loc();
  if (c_.accept("Split:"))
    parseSplit(t, true);
  else if (c_.accept("Outer split:"))
    parseSplit(t, false);
  else if (c_.accept("Chunked outer split:")) { // shardcheck's own (ir/Fusion.h)
    parseSplit(t, false);
    t.chunked = true;
  } else if (c_.accept("Merge:"))
    parseMerge(t);
  else if (c_.accept("Resize:"))
    parseResize(t);
  else if (isSwizzle2DLine(c_.restOfLine()))
    parseSwizzle2D(t);
  else
    parseSwizzle1D(t);
  c_.skipSpaces();
  if (!c_.atLineEnd())
    c_.failExpected("end of line after the " + std::string(transformKindName(t.kind)) +
                    " transform");
  cur_->noteTransform(std::move(t));
}

} // namespace shardcheck::reader
