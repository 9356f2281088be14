// Prints fusions in nvFuser's current (2026) dump style; see Printer.h.
//
// The layout follows nvFuser's own toString()s as NVFUSER_DUMPS.md records
// them, stray spaces included (`linear(A,` / `B  ,` / `BIAS  )`), so that the
// dump reader reads the printout back into an equivalent fusion. Each block
// kind prints as the block it was read from where that block can carry the
// fusion (`%kernel_math`, `%kernel` with its TransformPrinter, transforms-only
// sections, `%HostIrContainer`); segmented and JSON fusions print as
// `%kernel`. Tensors whose domains were never printed (no TransformPrinter
// entry) get none, so re-reading takes their logical domain from the loop
// domain exactly as the first reading did.
//
// The printer does not validate: it prints what the IR holds, and an op with
// an unexpected operand count falls back to a generic `op( a, b )` form.
#include "ir/Printer.h"

#include "ir/ExprShape.h"
#include "ir/HostLoops.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace shardcheck {

namespace {

// --- Small pieces. ---

std::string operandStr(const Fusion &f, const Operand &o) {
  return o.tensor && f.hasTensor(*o.tensor) ? f.tensorStr(*o.tensor) : o.scalar;
}

std::string idStr(const Fusion &f, IdNum n) {
  return f.hasId(n) ? f.id(n).str() : "?" + std::to_string(n);
}

std::string domainStr(const Fusion &f, const std::vector<IdNum> &ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i ? ", " : "") + idStr(f, ids[i]);
  return s;
}

/// An expr's outputs, one tensor per line (sdpa-style multi-output ops).
std::string outputsStr(const Fusion &f, const Expr &e) {
  std::string s;
  for (size_t i = 0; i < e.outputs.size(); ++i)
    s += (i ? ",\n" : "") + f.tensorStr(e.outputs[i]);
  return s;
}

std::string flagsStr(const std::vector<bool> &flags) {
  std::string s = "{";
  for (size_t i = 0; i < flags.size(); ++i)
    s += std::string(i ? ", " : "") + (flags[i] ? "true" : "false");
  return s + "}";
}

/// The position a braced positional argument had (`arg1` for the `{0, 1}` of
/// `pad( T0, {0, 1} )`), as the reader names such attributes.
std::optional<size_t> positionalAttrIndex(const std::string &key) {
  if (key.size() < 4 || key.compare(0, 3, "arg") != 0)
    return std::nullopt;
  size_t index = 0;
  for (size_t i = 3; i < key.size(); ++i) {
    if (key[i] < '0' || key[i] > '9')
      return std::nullopt;
    index = index * 10 + static_cast<size_t>(key[i] - '0');
  }
  return index;
}

/// A call's arguments as the reader takes them apart: operands and braced
/// positional attributes in their places, then the flags, then `key=value`
/// attributes with `separator` (`=` for load/store ops, ` = ` elsewhere).
std::string callArgs(const Fusion &f, const Expr &e, std::string_view separator) {
  std::vector<std::string> positional;
  for (const auto &o : e.inputs)
    positional.push_back(operandStr(f, o));
  std::string keyed;
  for (const auto &[key, value] : e.attrs) {
    if (isHostScopeAttr(key) || isOutputViewAttr(key))
      continue; // printed as the loop around it and the view before it
    if (auto index = positionalAttrIndex(key))
      positional.insert(positional.begin() +
                            static_cast<std::ptrdiff_t>(std::min(*index, positional.size())),
                        value);
    else
      keyed += ", " + key + std::string(separator) + value;
  }
  std::string s;
  for (size_t i = 0; i < positional.size(); ++i)
    s += (i ? ", " : "") + positional[i];
  if (!e.flags.empty())
    s += std::string(s.empty() ? "" : ", ") + "flags = " + flagsStr(e.flags);
  if (s.empty() && !keyed.empty())
    keyed.erase(0, 2);
  return s + keyed;
}

bool isInlineBinaryOp(const std::string &op) {
  static const std::set<std::string> kInline{"+", "-",  "*", "/",  "%",  "<<", ">>", "==", ">=",
                                             ">", "<=", "<", "!=", "&&", "||", "&",  "|",  "^"};
  return kInline.count(op) > 0;
}

bool isInlineUnaryOp(const std::string &op) {
  return op == "-" || op == "!" || op == "~";
}

/// `Set`, `Set.Permute`, `SegmenterSet`, or the load/store op's own spelling.
std::string loadStoreName(const Expr &e) {
  std::string name = e.op;
  if (name.empty())
    name = e.kind == OpKind::SegmenterSet ? "SegmenterSet" : "Set";
  constexpr std::string_view kPermute = ".Permute";
  bool endsWithPermute =
      name.size() >= kPermute.size() &&
      name.compare(name.size() - kPermute.size(), kPermute.size(), kPermute) == 0;
  if (e.kind == OpKind::Permute && !endsWithPermute)
    name += kPermute;
  return name;
}

// --- Statements, one function per printed shape. ---

/// `OUT` newline `   = RHS` newline: the common two-line statement.
std::string statement(const Fusion &f, const Expr &e, const std::string &rhs) {
  return outputsStr(f, e) + "\n   = " + rhs + "\n";
}

/// `OUT` newline `   = NAME( ARGS )`: every call-style tensor op.
std::string callStatement(const Fusion &f, const Expr &e, const std::string &name,
                          std::string_view separator = " = ") {
  std::string args = callArgs(f, e, separator);
  return statement(f, e, name + (args.empty() ? "()" : "( " + args + " )"));
}

std::string unaryStatement(const Fusion &f, const Expr &e) {
  const std::string in = operandStr(f, e.inputs[0]);
  return statement(f, e, (isInlineUnaryOp(e.op) ? e.op + in : e.op + "(" + in + ")") + ";");
}

std::string binaryStatement(const Fusion &f, const Expr &e) {
  const std::string a = operandStr(f, e.inputs[0]), b = operandStr(f, e.inputs[1]);
  if (isInlineBinaryOp(e.op))
    return statement(f, e, a + "\n   " + e.op + " " + b + ";");
  return statement(f, e, e.op + "(" + a + "\n  , " + b + ");");
}

std::string ternaryStatement(const Fusion &f, const Expr &e) {
  return statement(f, e,
                   e.op + "(" + operandStr(f, e.inputs[0]) + "\n  , " + operandStr(f, e.inputs[1]) +
                       "\n  , " + operandStr(f, e.inputs[2]) + ");");
}

std::string matmulStatement(const Fusion &f, const Expr &e) {
  return statement(f, e,
                   "matmul(" + operandStr(f, e.inputs[0]) + ",\n            " +
                       operandStr(f, e.inputs[1]) + ")");
}

std::string linearStatement(const Fusion &f, const Expr &e) {
  std::string rhs =
      "linear(" + operandStr(f, e.inputs[0]) + ",\n            " + operandStr(f, e.inputs[1]);
  if (e.inputs.size() == 3)
    rhs += "  ,\n          " + operandStr(f, e.inputs[2]);
  return statement(f, e, rhs + "  )");
}

std::string communicationLine(const Fusion &f, const Expr &e) {
  const CommunicationInfo &c = *e.communication;
  std::string team;
  for (size_t i = 0; i < c.team.size(); ++i)
    team += (i ? " " : "") + std::to_string(c.team[i]);
  std::string s = "Communication " + std::to_string(c.number) +
                  " (type=" + collectiveTypeName(c.type) + ", team=(" + team + ")";
  if (c.root)
    s += ", root=" + std::to_string(*c.root);
  if (!e.inputs.empty())
    s += ", input=" + operandStr(f, e.inputs[0]);
  if (!e.outputs.empty())
    s += ", output=" + f.tensorStr(e.outputs[0]);
  for (const auto &[key, value] : e.attrs) // fields the reader did not know
    if (!isOutputViewAttr(key) && !isHostScopeAttr(key))
      s += ", " + key + "=" + value;
  if (!c.backend.empty())
    s += ", backend=" + c.backend;
  return s + ")\n";
}

/// Whether `e` has the shape its kind's printed form needs (ExprShape.h);
/// fusions built in code may not, and print generically.
bool hasExpectedArity(const Expr &e) {
  if (e.kind == OpKind::Communication && !e.communication)
    return false;
  return !e.outputs.empty() && !exprShapeProblem(e);
}

// --- Transforms and tensors. ---

std::string transformLine(const Fusion &f, const Transform &t) {
  auto in = [&](size_t i) { return i < t.inputs.size() ? idStr(f, t.inputs[i]) : "?"; };
  auto out = [&](size_t i) { return i < t.outputs.size() ? idStr(f, t.outputs[i]) : "?"; };
  switch (t.kind) {
  case Transform::Kind::Split:
    if (t.chunked) // Not nvFuser's: the marker says so (docs/json-ir.md, Chunked splits).
      return "Chunked outer split: " + in(0) + " by factor " + t.factor.str() + " -> " + out(0) +
             ", " + out(1);
    return std::string(t.innerSplit ? "Split: " : "Outer split: ") + in(0) + " by factor " +
           t.factor.str() + " -> " + out(0) + ", " + out(1);
  case Transform::Kind::Merge:
    return "Merge: " + in(0) + " and " + in(1) + " -> " + out(0);
  case Transform::Kind::Resize:
    return "Resize: " + in(0) + " by " + t.left.str() + " and " + t.right.str() + " -> " + out(0);
  case Transform::Kind::Swizzle2D:
    return (t.detail.empty() ? std::string("Xor") : t.detail) + "(2D): " + in(0) + " , " + in(1) +
           " -> " + out(0) + " , " + out(1);
  case Transform::Kind::Swizzle1D:
    return out(0) + " = Swizzle1D(" + in(0) + ", parallelType=" + t.detail + ")";
  }
  return "?";
}

/// The transforms between `stopAt` and `targets`, found by walking
/// definitions backwards from the targets, in dependency order.
std::vector<size_t> transformsBetween(const Fusion &f, const std::vector<IdNum> &targets,
                                      const std::set<IdNum> &stopAt) {
  std::set<size_t> found;
  std::set<IdNum> visited;
  std::vector<IdNum> work(targets.begin(), targets.end());
  while (!work.empty()) {
    IdNum n = work.back();
    work.pop_back();
    if (!visited.insert(n).second || stopAt.count(n) || !f.hasId(n))
      continue;
    auto def = f.id(n).definition;
    if (def && found.insert(*def).second)
      work.insert(work.end(), f.transforms[*def].inputs.begin(), f.transforms[*def].inputs.end());
  }
  // Emit a transform once every transform producing one of its inputs has
  // been emitted; among the ready ones, the earliest read comes first.
  std::vector<size_t> ordered;
  std::set<size_t> pending = found;
  while (!pending.empty()) {
    size_t before = ordered.size();
    for (size_t t : pending) {
      bool ready = true;
      for (IdNum in : f.transforms[t].inputs) {
        if (!f.hasId(in))
          continue;
        const std::optional<size_t> &def = f.id(in).definition;
        ready = ready && !(def && pending.count(*def) && *def != t);
      }
      if (ready) {
        ordered.push_back(t);
        pending.erase(t);
        break;
      }
    }
    if (ordered.size() == before) { // a cycle: print the rest as read
      ordered.insert(ordered.end(), pending.begin(), pending.end());
      break;
    }
  }
  return ordered;
}

std::string contiguityStr(const std::vector<Contiguity> &contiguity) {
  std::string s;
  for (size_t i = 0; i < contiguity.size(); ++i)
    s += std::string(i ? " " : "") + (contiguity[i] == Contiguity::True    ? "t"
                                      : contiguity[i] == Contiguity::False ? "f"
                                                                           : "n");
  return s;
}

/// Tensors in the order a reader meets them: inputs, then each expr's
/// operands and outputs, then outputs, then the rest by number.
std::vector<TensorNum> tensorsInPrintOrder(const Fusion &f) {
  std::vector<TensorNum> order;
  std::set<TensorNum> seen;
  auto add = [&](TensorNum t) {
    if (f.hasTensor(t) && seen.insert(t).second)
      order.push_back(t);
  };
  for (TensorNum t : f.inputs)
    add(t);
  for (const auto &e : f.exprs) {
    for (const auto &o : e.inputs)
      if (o.tensor)
        add(*o.tensor);
    for (TensorNum t : e.outputs)
      add(t);
  }
  for (TensorNum t : f.outputs)
    add(t);
  for (const auto &[number, tv] : f.tensors)
    add(number);
  return order;
}

/// TransformPrinter entries of every tensor whose domains were printed.
std::string transformEntries(const Fusion &f) {
  std::string s;
  for (TensorNum t : tensorsInPrintOrder(f))
    if (f.tensor(t).hasTransformInfo)
      s += printTransforms(f, f.tensor(t));
  return s;
}

bool anyTransformInfo(const Fusion &f) {
  return std::any_of(f.tensors.begin(), f.tensors.end(),
                     [](const auto &kv) { return kv.second.hasTransformInfo; });
}

std::string tensorListLines(const Fusion &f, const char *label,
                            const std::vector<TensorNum> &tensors) {
  std::string s = std::string(label) + "\n";
  for (TensorNum t : tensors)
    s += "  " + f.tensorStr(t) + "\n";
  return s;
}

/// Every line of a printed statement indented (host IR nests statements).
std::string indented(const std::string &text, const std::string &indent) {
  std::string s;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    s += indent + text.substr(start, end - start + 1);
    start = end + 1;
  }
  return s;
}

std::string exprStatements(const Fusion &f, const std::string &indent) {
  std::string s;
  for (const auto &e : f.exprs)
    s += indented(printExpr(f, e), indent);
  return s;
}

std::string tensorCommaList(const Fusion &f, const std::vector<TensorNum> &tensors) {
  std::string s;
  for (size_t i = 0; i < tensors.size(); ++i)
    s += (i ? ", " : "") + f.tensorStr(tensors[i]);
  return s;
}

// --- Blocks. ---

std::string kernelBlock(const Fusion &f) {
  std::string s = tensorListLines(f, "Inputs:", f.inputs) +
                  tensorListLines(f, "Outputs:", f.outputs) + "\n%kernel {\n" +
                  exprStatements(f, "");
  if (anyTransformInfo(f))
    s += "\nTransformPrinter : \n" + transformEntries(f);
  return s + "} // %kernel\n";
}

/// `%kernel_math` has no TransformPrinter; domains that were printed follow
/// as a transforms-only section, which the reader attaches to the block.
std::string kernelMathBlock(const Fusion &f) {
  return tensorListLines(f, "Inputs:", f.inputs) + tensorListLines(f, "Outputs:", f.outputs) +
         "\n%kernel_math {\n" + exprStatements(f, "") + "} // %kernel_math \n" +
         (anyTransformInfo(f) ? "\n" + transformEntries(f) : "");
}

/// The `FOR`/`IF` headers around a host IR statement, outermost first, each
/// with what tells two loops of one header apart.
std::vector<std::pair<std::string, std::string>> hostScopesOf(const Expr &e) {
  std::vector<std::pair<std::string, std::string>> scopes;
  std::string outer = e.attr(kHostLoopOuterAttr);
  for (size_t start = 0; !outer.empty() && start <= outer.size();) {
    size_t end = std::min(outer.find(" ; ", start), outer.size());
    scopes.emplace_back(outer.substr(start, end - start), "");
    start = end + 3;
  }
  if (isInHostLoop(e))
    scopes.emplace_back(e.attr(kHostLoopAttr), e.attr(kHostLoopIdAttr));
  if (!e.attr(kHostBranchAttr).empty())
    scopes.emplace_back(e.attr(kHostBranchAttr), "");
  return scopes;
}

/// Host IR statements inside the loops and branches they were read in
/// (ir/HostLoops.h): a statement's scopes are printed around it, and the
/// reader gives them back to it.
std::string hostStatements(const Fusion &f) {
  std::string s;
  std::vector<std::pair<std::string, std::string>> open;
  for (const auto &e : f.exprs) {
    // A slice view records no scope (it is no statement of the loop): it
    // is printed where it stands, in the scopes still open.
    auto scopes = isSliceView(e) ? open : hostScopesOf(e);
    size_t common = 0;
    while (common < open.size() && common < scopes.size() && open[common] == scopes[common])
      ++common;
    open.resize(common);
    for (; common < scopes.size(); ++common) {
      s += std::string(2 + 2 * common, ' ') + scopes[common].first + ":\n";
      open.push_back(scopes[common]);
    }
    s += indented(printExpr(f, e), std::string(2 + 2 * open.size(), ' '));
  }
  return s;
}

std::string hostIrBlock(const Fusion &f) {
  return "%HostIrContainer { (" + tensorCommaList(f, f.inputs) + ") -> (" +
         tensorCommaList(f, f.outputs) + ") :\n" + hostStatements(f) + "} // %HostIrContainer\n" +
         (anyTransformInfo(f) ? "\n" + transformEntries(f) : "");
}

} // namespace

namespace {

std::string printStatement(const Fusion &f, const Expr &e) {
  if (!hasExpectedArity(e))
    return callStatement(f, e, e.op);
  switch (e.kind) {
  case OpKind::Set:
  case OpKind::Permute:
  case OpKind::SegmenterSet:
  case OpKind::LoadStore:
    return callStatement(f, e, loadStoreName(e), "=");
  case OpKind::Unary:
  case OpKind::Cast:
    return unaryStatement(f, e);
  case OpKind::Binary:
    return binaryStatement(f, e);
  case OpKind::Ternary:
  case OpKind::Where:
    return ternaryStatement(f, e);
  case OpKind::Broadcast:
    return callStatement(f, e, "broadcast");
  case OpKind::Squeeze:
    return callStatement(f, e, "squeeze");
  case OpKind::Expand:
    return callStatement(f, e, "expand");
  case OpKind::Reduction:
    return callStatement(f, e, "reduction");
  case OpKind::Reshape: // nvFuser's only one-line tensor statement
    return outputsStr(f, e) + " = reshape( " + callArgs(f, e, " = ") + " )\n";
  case OpKind::Matmul:
    return matmulStatement(f, e);
  case OpKind::Linear:
    return linearStatement(f, e);
  case OpKind::Communication:
    return communicationLine(f, e);
  case OpKind::Other:
    return callStatement(f, e, e.op);
  }
  return callStatement(f, e, e.op);
}

} // namespace

std::string printExpr(const Fusion &f, const Expr &e) {
  // The write view naming where it writes, as nvFuser prints it first.
  if (auto view = outputViewStatement(f, e))
    return printStatement(f, *view) + printStatement(f, e);
  return printStatement(f, e);
}

std::string printTransforms(const Fusion &f, const TensorView &tv) {
  std::string s = f.tensorStr(tv.number) + "\n";
  std::set<IdNum> rootIds(tv.root.begin(), tv.root.end());
  std::set<size_t> rootToLogical;
  if (tv.hasRoot()) {
    s += "  root domain: (" + domainStr(f, tv.root) + ")\n";
    for (size_t t : transformsBetween(f, tv.logical, rootIds)) {
      s += "    " + transformLine(f, f.transforms[t]) + "\n";
      rootToLogical.insert(t);
    }
  }
  s += "  logical domain: (" + domainStr(f, tv.logical) + ")\n";
  if (tv.hasAllocation())
    s += "  allocation domain: (" + domainStr(f, tv.allocation) + ")\n";
  // An entry printed without a contiguity line (old dumps) is read with an
  // empty contiguity; print none for it so that reading it back agrees.
  if (!tv.contiguity.empty() || tv.allocationOrLogical().empty())
    s += "  contiguity: " + contiguityStr(tv.contiguity) + "\n";
  // Logical -> loop and logical -> allocation transforms, each once.
  std::vector<IdNum> targets = tv.loop;
  targets.insert(targets.end(), tv.allocation.begin(), tv.allocation.end());
  std::set<IdNum> logicalIds(tv.logical.begin(), tv.logical.end());
  for (size_t t : transformsBetween(f, targets, logicalIds))
    if (!rootToLogical.count(t))
      s += "    " + transformLine(f, f.transforms[t]) + "\n";
  s += "  loop domain: (" + domainStr(f, tv.loop) + ")\n";
  return s;
}

std::string printFusion(const Fusion &f) {
  switch (f.kind) {
  case BlockKind::HostIr:
    return hostIrBlock(f);
  case BlockKind::TransformsOnly:
    return transformEntries(f);
  case BlockKind::KernelMath:
    return kernelMathBlock(f);
  default:
    return kernelBlock(f);
  }
}

} // namespace shardcheck
