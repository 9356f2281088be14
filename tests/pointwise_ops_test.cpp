// Tests that ir/PointwiseOps.h is the one list of pointwise ops: the
// reference evaluator has a rule for exactly its spellings, and the dump
// reader gives a pointwise kind to exactly its call names.
//
// The evaluator side is also enforced at compile time (executor/Pointwise.cpp
// switches over the list's enums with -Wswitch as an error); these tests
// check the string lookups and the reader, which no compiler check covers.
// They do not test what each rule computes (reference_test.cpp does).
#include "executor/Pointwise.h"
#include "ir/PointwiseOps.h"
#include "ir/reader/DumpReader.h"

#include <gtest/gtest.h>

#include <string>

namespace shardcheck {
namespace {

bool hasRule(const std::string &name, PointwiseArity arity) {
  switch (arity) {
  case PointwiseArity::Unary:
    return unaryRule(name).has_value();
  case PointwiseArity::Binary:
    return binaryRule(name, false).has_value() && binaryRule(name, true).has_value();
  case PointwiseArity::Ternary:
    return ternaryRule(name).has_value();
  }
  return false;
}

TEST(PointwiseOps, EveryListedSpellingHasARule) {
  for (const PointwiseSpelling &op : kPointwiseOps) {
    std::string name(op.name);
    EXPECT_TRUE(hasRule(name, op.arity)) << name;
    EXPECT_TRUE(hasRule(name + "f", op.arity)) << name << "f";
  }
}

TEST(PointwiseOps, UnlistedNamesHaveNoRuleOfAnyArity) {
  for (const std::string name :
       {"cumsum", "cumsumf", "complex", "round", "sign", "where", "__to_float", "", "f", "expff"})
    for (PointwiseArity arity :
         {PointwiseArity::Unary, PointwiseArity::Binary, PointwiseArity::Ternary}) {
      EXPECT_FALSE(isPointwiseOp(name, arity)) << name;
      EXPECT_FALSE(hasRule(name, arity)) << name;
    }
}

TEST(PointwiseOps, OperatorSpellingsKeepTheirArity) {
  EXPECT_EQ((*unaryRule("-"))(2.0), -2.0);
  EXPECT_EQ((*binaryRule("-", false))(5.0, 2.0), 3.0);
  EXPECT_EQ((*binaryRule("/", true))(7.0, 2.0), 3.0);
  EXPECT_EQ((*binaryRule("/", false))(7.0, 2.0), 3.5);
  EXPECT_EQ((*binaryRule("fmodf", true))(7.0, 4.0), 3.0);
  EXPECT_EQ(callArity("max"), PointwiseArity::Binary);
  EXPECT_EQ(callArity("expf"), PointwiseArity::Unary);
  EXPECT_EQ(callArity("clampf"), PointwiseArity::Ternary);
  EXPECT_EQ(callArity("cumsum"), std::nullopt);
}

/// `T1 = NAME(T0, ...);` with the arity's operand count.
std::string callDump(std::string_view name, PointwiseArity arity) {
  std::string args = "T0_g_float[iS0{8}]";
  for (int i = 1; i < static_cast<int>(arity); ++i)
    args += ", float(1)";
  return "%kernel_math {\nT1_l_float[iS1{8}]\n   = " + std::string(name) + "(" + args +
         ");\n} // %kernel_math\n";
}

OpKind kindOf(PointwiseArity arity) {
  return arity == PointwiseArity::Unary    ? OpKind::Unary
         : arity == PointwiseArity::Binary ? OpKind::Binary
                                           : OpKind::Ternary;
}

TEST(PointwiseOps, ReaderGivesEveryListedCallNameItsKind) {
  for (const PointwiseSpelling &op : kPointwiseOps) {
    if (!(op.name[0] >= 'a' && op.name[0] <= 'z'))
      continue; // operator spellings are syntax, tested in reader_test.cpp
    for (const std::string &name : {std::string(op.name), std::string(op.name) + "f"}) {
      Document d = readDocument(callDump(name, op.arity), "t.txt");
      ASSERT_EQ(d.fusions.size(), 1u) << name;
      ASSERT_EQ(d.fusions[0].exprs.size(), 1u) << name;
      EXPECT_EQ(d.fusions[0].exprs[0].kind, kindOf(op.arity)) << name;
    }
  }
}

TEST(PointwiseOps, ReaderReadsUnlistedCallsAsOtherWhateverTheirOperandCount) {
  for (const std::string name : {"cumsum", "complex", "round", "frobnicate"})
    for (PointwiseArity arity :
         {PointwiseArity::Unary, PointwiseArity::Binary, PointwiseArity::Ternary}) {
      Document d = readDocument(callDump(name, arity), "t.txt");
      EXPECT_EQ(d.fusions.at(0).exprs.at(0).kind, OpKind::Other) << name;
    }
}

} // namespace
} // namespace shardcheck
