// The nvFuser dump parser behind DumpReader.h (internal to ir/reader/).
//
// A recursive-descent parser over one Source, split by topic:
//   ParseValues.cpp      extents, IterDomains, device meshes, tensors
//   ParseExprs.cpp       expression statements and host IR communications
//   ParseTransforms.cpp  TransformPrinter entries (domains and transforms)
//   ParseBlocks.cpp      block detection and the per-block line loops
// Blocks are read line by line; a statement or a tensor is read with a
// cursor that may cross lines where nvFuser's printer breaks them. Every
// parsed IterDomain, tensor, transform and expression goes straight to the
// current block's BlockBuilder, which checks consistency and builds the
// Fusion once the whole file has been read (a later transforms-only section
// may still add to an earlier block).
//
// This parser does not lint and does not check sharding.
#pragma once

#include "ir/reader/BlockBuilder.h"
#include "ir/reader/Cursor.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardcheck::reader {

/// One argument of a call-style right-hand side such as `Set( T0, cache_op=Streaming )`.
struct CallArg {
  enum class Kind { Tensor, Scalar, Braced, KeyValue };
  Kind kind = Kind::Scalar;
  std::optional<TensorNum> tensor; ///< Tensor, or a KeyValue whose value is one.
  std::string key;                 ///< KeyValue: `cache_op`, `initial value`, ...
  std::string text;                ///< Scalar, Braced, or a KeyValue's value.
  size_t offset = 0;               ///< Where the argument starts.
  size_t valueOffset = 0;          ///< KeyValue: where its value starts.
};

/// The right-hand side of a statement, before it is classified as an Expr.
struct Rhs {
  enum class Form { Call, Inline, Prefix, CStyleCast };
  Form form = Form::Call;
  std::string op; ///< `Set`, `+`, `-`, `(float)`, `max`, ...
  size_t opOffset = 0;
  std::vector<CallArg> args;
  bool semicolon = false; ///< Ended by `;` (pointwise ops) rather than ` )`.
};

/// Kinds of lines inside a TransformPrinter entry.
enum class SectionLine { Label, Contiguity, Transform, Other };
SectionLine classifySectionLine(std::string_view trimmed);

class Parser {
public:
  explicit Parser(const Source &src) : src_(src), c_(src) {}
  /// Reads every block of the source.
  Document run();

private:
  // --- Values (ParseValues.cpp) ---
  bool atTensorStart() const;
  /// A tensor, or `( T...` opening the outputs of a multi-output statement.
  bool atStatementStart() const;
  bool atIterDomainStart() const;
  Extent parseExtent(int depth = 0);
  Extent parseExtentSum(int depth);
  Extent parseExtentProduct(int depth);
  Extent parseExtentCall(std::string name, int depth);
  void noteExtentOperator(size_t offset);
  Extent parseSignedExtent();
  IterDomain parseIterDomain();
  void parseIdBraces(IterDomain &id);
  std::vector<IdNum> parseIdList(char close, const std::string &what);
  DeviceMesh parseMesh();
  std::vector<int64_t> parseMeshGroup(int depth, std::vector<int64_t> &devices);
  TensorPrint parseTensor();
  MemoryType parseMemoryType(const std::string &name);
  DataType parseDtype(const std::string &name);
  void parseTensorSuffixes(TensorPrint &t);
  int parseSmallInt(const std::string &what);

  // --- Expressions (ParseExprs.cpp) ---
  std::optional<size_t> parseStatement(bool hostIr);
  std::vector<TensorNum> parseStatementOutputs();
  void skipHostOnlyStatement();
  Rhs parseRhs(const std::string &outName);
  Rhs parseCallRest(Rhs rhs, size_t start);
  Rhs parseInlineRest(CallArg lhs);
  bool tryCStyleCast(Rhs &rhs);
  CallArg parseOperand();
  std::string parseScalarText();
  void scanGroup();
  std::string scanRawArg();
  std::vector<CallArg> parseCallArgs(const std::string &name);
  CallArg parseCallArg(const std::string &name);
  std::optional<std::string> tryParseKey();
  Expr makeExpr(std::vector<TensorNum> outputs, Rhs rhs, const SourceLoc &loc);
  /// Adds the arguments to `e`; returns whether any is braced or key=value.
  bool addArgs(Expr &e, const Rhs &rhs);
  void checkOperands(const Expr &e, const Rhs &rhs);
  std::vector<bool> parseFlags(const CallArg &arg);
  void parseCommunication();
  void parseCommunicationField(const std::string &key, Expr &e);
  std::vector<int64_t> parseTeam();
  [[noreturn]] void failAfter(size_t offset, bool crossedLine, const std::string &what) const;

  // --- TransformPrinter entries (ParseTransforms.cpp) ---
  void parseTensorSection();
  void parseDomainLabel(DomainPrint &d, const std::string &tensorName);
  void parseContiguity(DomainPrint &d, const std::string &tensorName);
  void parseTransformLine();
  void parseSplit(Transform &t, bool inner);
  void parseMerge(Transform &t);
  void parseResize(Transform &t);
  void parseSwizzle2D(Transform &t);
  void parseSwizzle1D(Transform &t);
  IdNum parseIdAfterSpaces();
  void expectKeyword(std::string_view word, const std::string &context);

  // --- Blocks (ParseBlocks.cpp) ---
  /// The truncation an InputError shows (the failure is followed by blanks
  /// only); rethrows it when it shows malformed input instead.
  InputEnd truncationOf(const InputError &e) const;
  size_t curLine() const { return src_.lineOf(c_.pos()); }
  std::string_view curTrimmed() const { return src_.trimmedLine(curLine()); }
  BlockBuilder &newBlock(BlockKind kind, size_t offset);
  void parseTopLevelLine();
  std::optional<BlockKind> ioHeaderLeadsToBlock(size_t line) const;
  void parseIoHeaderAndBlock();
  void parseIoLists();
  std::vector<TensorNum> parseIoEntries();
  void parseIoEntry(std::vector<TensorNum> &out);
  void parseKernelBlock(BlockKind kind, bool newBuilder);
  void parseKernelBody(const std::string &closer, const SourceLoc &open);
  void parseTransformPrinter(const std::string &closer, const SourceLoc &open);
  void expectCloser(std::string_view trimmed, const std::string &closer, const SourceLoc &open);
  [[noreturn]] void failUnclosed(const std::string &closer, const SourceLoc &open) const;
  void parseHostIr();
  void parseHostSignature();
  std::vector<TensorNum> parseValueList();
  bool parseHostBodyLine(const SourceLoc &openLoc);
  void noteHostScope();
  /// The scope attributes of ir/HostLoops.h for a statement on the current
  /// line: its loop (header, which loop of the block, outer loops) and its
  /// branch. Outside loops only a Communication records its branch.
  std::vector<std::pair<std::string, std::string>> hostScopeAttrs(bool communication) const;
  void parseHostLine();
  void parseHostUnitHeader();
  void parseSegmented();
  bool parseSegmentedLine();
  void skipToGroupDetails();
  void parseGroupDetails(bool fragment);
  void parseGroup();
  SegmentGroup parseGroupHeader();
  void parseExprNumber(const SegmentGroup &group);
  void parseGroupExpr(SegmentGroup &group, const SourceLoc &open);
  bool isStandaloneTransformsStart(size_t line) const;
  void parseStandaloneTransforms();
  bool isScalarStatement(std::string_view trimmed) const;

  const Source &src_;
  Cursor c_;
  std::vector<std::unique_ptr<BlockBuilder>> blocks_;
  BlockBuilder *cur_ = nullptr;
  int extentOperators_ = 0; ///< In the extent being read (noteExtentOperator).
  /// Host IR loops and branches enclosing the current line (by indentation).
  struct HostScope {
    size_t indent = 0;
    bool loop = false;  ///< FOR (IF/ELSE are branches).
    std::string header; ///< `FOR StreamIdx in iStreamIdx2{i0}`.
    int loopNumber = 0; ///< FOR: its place among the block's loops, from 1.
  };
  std::vector<HostScope> hostScopes_;
  int hostLoopsSeen_ = 0; ///< FOR headers read in the current block.
};

} // namespace shardcheck::reader
