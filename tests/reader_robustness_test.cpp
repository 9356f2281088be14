// Mutation robustness of the nvFuser dump reader: every file of corpus/ and
// a few built-in dumps (one per block kind and print style) are mutated with
// a seeded, deterministic random generator (byte deletions, insertions and
// replacements, duplicated, dropped and truncated lines, swapped tokens,
// inserted braces, brackets, digits and huge numbers). readDocument must then
// either succeed or throw an InputError with a known location inside the
// text; any other exception, a crash or a hang fails the test. Pathological
// inputs (deep nesting, long operator chains, very long lines and names, huge
// numbers, bytes that are not UTF-8) are checked too, with the exact error
// where the reader has a limit.
//
// SHARDCHECK_READER_MUTANTS=N and SHARDCHECK_READER_SEED=S in the
// environment run N mutants from another seed, for longer fuzzing sessions.
//
// What a well-formed dump must yield is tested in reader_test.cpp.
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace shardcheck {
namespace {

struct BaseInput {
  std::string name;
  std::string text;
};

/// Built-in dumps so the test covers every block kind even without a corpus.
std::vector<BaseInput> builtinInputs() {
  return {
      {"builtin_kernel_transforms", R"(%kernel {
T3_l_float[ iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128} ] ca_pos( 2 ) (DeviceMesh{0 1})
   = Set( T0_g_float[ iS30{1}, iS31{1}, iS29{128} ] (DeviceMesh{0 1}), cache_op=Streaming )
T5_l_float[ iS14{2} ] (DeviceMesh{0 1})
   = T3_l_float[ iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128} ] ca_pos( 2 ) (DeviceMesh{0 1})
   + T4_l_float[ bS6{1} ] (DeviceMesh{0 1});

TransformPrinter :
T0_g_float[ iS30{1}, iS31{1}, iS29{128} ] (DeviceMesh{0 1})
 logical domain : (iS0{2})
 contiguity: t
  Split: iS0{2} by factor 128 -> iS28{1}, iS29{128}
  Split: iS28{1} by factor 1 -> iS30{1}, iS31{1}
 loop domain : (iS30{1}, iS31{1}, iS29{128})
T3_l_float[ iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128} ] ca_pos( 2 ) (DeviceMesh{0 1})
 root domain : (iS4{2})
 logical domain : (iS5{2})
 allocation domain : (iS5{2})
 contiguity: t
  Split: iS5{2} by factor 128 -> iS24{1}, ithreadIdx.x25{128}
  Outer split: iS24{1} by factor 1 -> iblockIdx.x26{1}, iUS27{1}
 loop domain : (iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128})
} // %kernel
)"},
      {"builtin_math_ops", R"(Inputs:
  T0_g_float[ideviceIdx.x0{2}, iS1{( ceilDiv(i3, 2) )}] (DeviceMesh{{0 1}{2 3}})
  d2, double
Outputs:
  T6_g_float[iS12{2}, rS13{8}]

%kernel_math {
i23 = 0 + 768;
T1_l_float[bS2{1}, ideviceIdx.x3{2}, iS4{( ceilDiv(i3, 2) )}]
   = broadcast( T0_g_float[ideviceIdx.x0{2}, iS1{( ceilDiv(i3, 2) )}] (DeviceMesh{{0 1}{2 3}}), flags = {true, false, false} )
T2_l_float[iS5{2}, iS6{8}]
   = where(T7_g_bool[iS7{2}, iS8{8}]
  , T8_g_float[iS9{2}, iS10{8}]
  , float(0));
T3_l_float[iS11{2}, iS14{8}]
   = max(T2_l_float[iS5{2}, iS6{8}]
  , double(2));
T6_g_float[iS12{2}, rS13{8}]
   = reduction( T3_l_float[iS11{2}, iS14{8}], op = add, initial value = float(0), allreduce = false )
T9_g_float[iS15{2}, iS16{4}, rS17{8}]
   = linear(T3_l_float[iS11{2}, iS14{8}],
            T10_g_float[iS18{4}, iS19{8}]  ,
          T11_g_float[iS20{4}]  )
T12_g_float[iS21{16}rf] = reshape( T3_l_float[iS11{2}, iS14{8}] )
T13_l_float[iS22{2}]
   = (float)(T14_g_double[iS23{2}]);
} // %kernel_math 
)"},
      {"builtin_host_ir",
       R"(%HostIrContainer { (T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1})) -> (T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1})) :
  T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1}) = ALLOCATE(buffer=T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1}), mem_type=global, size=16, zero_init=false)
  FOR i535 from 0 to 3:
    Communication 7 (type=Allgather, team=(0 1), input=T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), output=T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1}), backend=NCCL)
    Wait(Communication 7)
  Communication 9 (type=Reduce, team=(1 0), root=1, Input=T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), Output=T4_g_float[iS4{2}, iS5{8}] (DeviceMesh{1}))
  P2PCommunication 11 (type=send, buffer=T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), peer=1, backend=NCCL)
  PostOnStream (HostUnit0, Inputs:{T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), }, Outputs:{T5_g_float[iS6{2}, iS7{8}] (DeviceMesh{0 1}), })

HostUnit0: Inputs={T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), } -> Outputs={T5_g_float[iS6{2}, iS7{8}] (DeviceMesh{0 1}), }
%kernel {
T5_g_float[iS6{2}, iS7{8}] (DeviceMesh{0 1})
   = relu(T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}));
} // %kernel

} // %HostIrContainer
)"},
      {"builtin_segmented", R"(Segmented_Fusion Dump: -- Re-written complete fusion:{
Inputs:
  T0_g_float[iS0{8}]
Outputs:
  T2_g_float[iS2{8}]

%kernel_math {
T1_g_float[iS1{8}]
   = relu(T0_g_float[iS0{8}]);
T2_g_float[iS2{8}]
   = Set( T1_g_float[iS1{8}], cache_op=Streaming )
} // %kernel_math 

} // {Re-written complete fusion}
Segmented_Fusion Dump: -- fusion segments:
Segmented_Fusion{ 
groups: 
g{0}

edges: 
e{ g{0}
 -> g{1}
(T1_g_float[iS1{8}]) }

group details:
g{(pointwise)
inputs: 
T0_g_float[iS0{8}] float
outputs: 
T1_g_float[iS1{8}] float


T1_g_float[iS1{8}]
   = relu(T0_g_float[iS0{8}]);
(0)
}

} //Segmented_Fusion
)"},
      {"builtin_transforms_only_old", R"(log line before
T1_g[ iS4{i0}, iS5{4} ] (DeviceMesh{0, 1, })
 root domain : (iS2{i0},iS3{i1})
  Merge: iS2{i0} and iS3{i1} -> iS6{( i0 * i1 )}rf
  Resize: iS6{( i0 * i1 )}rf by -1 and 2 -> iS7{( ( i0 * i1 ) + 1 )}rf
 rfactor domain : (iS7{( ( i0 * i1 ) + 1 )}rf)
 contiguity: 1
    Split: iS7{( ( i0 * i1 ) + 1 )}rf by factor 4 -> iS4{i0}, iS5{4}, start offset: 0, stop offset: 0
 leaf domain : (iS4{i0}, iS5{4})
T9_g_float[iS10{4}, iS11{4}, bS12{1 ex 8}]
  logical domain: (iS8{4}, iS9{4}, bS12{1 ex 8})
  contiguity: t t n
    Xor(2D): iS8{4} , iS9{4} -> iS10{4} , iS11{4}
  loop domain: (iS10{4}, iS11{4}, bS12{1 ex 8})
)"},
  };
}

std::vector<BaseInput> corpusInputs() {
  namespace fs = std::filesystem;
  std::vector<BaseInput> inputs;
  fs::path dir = fs::path(SHARDCHECK_SOURCE_DIR) / "corpus";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return inputs;
  for (const auto &entry : fs::recursive_directory_iterator(dir, ec)) {
    // Large files would dominate the time budget without adding syntax.
    if (!entry.is_regular_file() || entry.file_size() > (1u << 20))
      continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    inputs.push_back({entry.path().filename().string(), text.str()});
  }
  std::sort(inputs.begin(), inputs.end(),
            [](const BaseInput &a, const BaseInput &b) { return a.name < b.name; });
  return inputs;
}

/// Deterministic mutations of dump text.
class Mutator {
public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutate(std::string text) {
    size_t count = 1 + pick(3);
    for (size_t i = 0; i < count; ++i)
      mutateOnce(text);
    return text;
  }

private:
  size_t pick(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }

  /// Characters that matter to the grammar, weighted over random bytes.
  char interestingChar() {
    static const std::string kChars = "{}[]()<>,:;=-+*/% \n\t_.0123456789TiSbrx?DeviceMsh";
    if (pick(8) == 0)
      return static_cast<char>(pick(256));
    return kChars[pick(kChars.size())];
  }

  std::vector<std::pair<size_t, size_t>> lineSpans(const std::string &t) {
    std::vector<std::pair<size_t, size_t>> spans;
    size_t start = 0;
    for (size_t i = 0; i <= t.size(); ++i)
      if (i == t.size() || t[i] == '\n') {
        spans.emplace_back(start, i + (i < t.size() ? 1 : 0));
        start = i + 1;
      }
    return spans;
  }

  std::vector<std::pair<size_t, size_t>> tokenSpans(const std::string &t) {
    std::vector<std::pair<size_t, size_t>> spans;
    size_t i = 0;
    while (i < t.size()) {
      while (i < t.size() && (t[i] == ' ' || t[i] == '\n'))
        ++i;
      size_t start = i;
      while (i < t.size() && t[i] != ' ' && t[i] != '\n')
        ++i;
      if (i > start)
        spans.emplace_back(start, i);
    }
    return spans;
  }

  void mutateOnce(std::string &t) {
    if (t.empty()) {
      t.push_back(interestingChar());
      return;
    }
    size_t at = pick(t.size());
    switch (pick(12)) {
    case 0: // delete a few bytes
      t.erase(at, 1 + pick(8));
      break;
    case 1: // insert a few bytes
      for (size_t n = 1 + pick(4); n > 0; --n)
        t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), interestingChar());
      break;
    case 2: // replace a byte
      t[at] = interestingChar();
      break;
    case 3: { // duplicate a line
      auto lines = lineSpans(t);
      auto [b, e] = lines[pick(lines.size())];
      t.insert(e, t.substr(b, e - b) + (e == t.size() ? "\n" : ""));
      break;
    }
    case 4: { // delete a line
      auto lines = lineSpans(t);
      auto [b, e] = lines[pick(lines.size())];
      t.erase(b, e - b);
      break;
    }
    case 5: // truncate
      t.resize(at);
      break;
    case 6: { // swap two tokens
      auto tokens = tokenSpans(t);
      if (tokens.size() < 2)
        break;
      auto a = tokens[pick(tokens.size())], b = tokens[pick(tokens.size())];
      if (a.first > b.first)
        std::swap(a, b);
      if (a.second > b.first)
        break;
      std::string ta = t.substr(a.first, a.second - a.first);
      std::string tb = t.substr(b.first, b.second - b.first);
      t.replace(b.first, tb.size(), ta);
      t.replace(a.first, ta.size(), tb);
      break;
    }
    case 7: { // insert a brace, bracket or parenthesis
      static const char kOpen[] = "{}[]()";
      t.insert(t.begin() + static_cast<std::ptrdiff_t>(at), kOpen[pick(6)]);
      break;
    }
    case 8: // insert digits, sometimes a huge number
      t.insert(at, pick(3) == 0 ? "99999999999999999999999" : std::to_string(pick(1000)));
      break;
    case 9: { // repeat a chunk (deepens nesting, lengthens lines)
      size_t len = 1 + pick(40);
      std::string chunk = t.substr(at, len);
      for (size_t n = 1 + pick(6); n > 0; --n)
        t.insert(at, chunk);
      break;
    }
    case 10: // change a digit, to perturb IDs and extents
      for (size_t i = at; i < t.size(); ++i)
        if (t[i] >= '0' && t[i] <= '9') {
          t[i] = static_cast<char>('0' + pick(10));
          break;
        }
      break;
    default: { // drop a line's indentation or indent it
      auto lines = lineSpans(t);
      auto [b, e] = lines[pick(lines.size())];
      if (pick(2) == 0 && b < e && t[b] == ' ')
        t.erase(b, 1);
      else
        t.insert(b, "  ");
      break;
    }
    }
  }

  std::mt19937_64 rng_;
};

int lineCount(const std::string &t) {
  return 1 + static_cast<int>(std::count(t.begin(), t.end(), '\n'));
}

/// Reads `text`; returns "" on success or a located InputError, else a
/// description of the failure.
std::string checkOne(const std::string &text, bool *parsed) {
  *parsed = false;
  try {
    readDocument(text, "m.txt");
    *parsed = true;
    return "";
  } catch (const InputError &e) {
    const SourceLoc &loc = e.diagnostic().loc;
    if (!loc.known() || loc.column < 1 || loc.line > lineCount(text) + 1 || loc.file != "m.txt")
      return std::string("InputError without a valid location: ") + e.what();
    return "";
  } catch (const std::exception &e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected non-standard exception";
  }
}

uint64_t envNumber(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string excerptForFailure(const std::string &text) {
  return text.size() <= 600 ? text : text.substr(0, 600) + "...";
}

TEST(ReaderRobustness, MutatedDumpsFailOnlyWithLocatedInputErrors) {
  std::vector<BaseInput> bases = builtinInputs();
  for (auto &c : corpusInputs())
    bases.push_back(std::move(c));
  // At least 10,000 mutants in all, spread over the inputs.
  const size_t total = envNumber("SHARDCHECK_READER_MUTANTS", 30000);
  const uint64_t seedBase = envNumber("SHARDCHECK_READER_SEED", 0x5eed0000u);
  const size_t perBase = (total + bases.size() - 1) / bases.size();
  size_t mutants = 0, parsedCount = 0, failures = 0;
  auto begin = std::chrono::steady_clock::now();
  for (size_t b = 0; b < bases.size(); ++b) {
    // The seed depends only on the input's position and name: reruns and
    // failures reproduce exactly.
    uint64_t seed = seedBase + b * 7919u + std::hash<std::string>{}(bases[b].name) % 1000u;
    Mutator mutator(seed);
    for (size_t i = 0; i < perBase; ++i) {
      std::string text = mutator.mutate(bases[b].text);
      bool parsed = false;
      std::string problem = checkOne(text, &parsed);
      ++mutants;
      parsedCount += parsed;
      if (!problem.empty() && ++failures <= 5)
        ADD_FAILURE() << problem << "\nbase: " << bases[b].name << ", mutant #" << i << ", seed "
                      << seed << "\n--- mutant ---\n"
                      << excerptForFailure(text);
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_GE(mutants, std::min<size_t>(total, 10000u));
  EXPECT_EQ(failures, 0u);
  // Mutants that still parse show the mutations reach past the first error.
  EXPECT_GT(parsedCount, mutants / 50);
  std::cout << "[ reader ] " << mutants << " mutants of " << bases.size() << " inputs, "
            << parsedCount << " still read, in " << seconds << " s\n";
}

TEST(ReaderRobustness, PathologicalInputs) {
  std::string deepExtent = "%kernel {\nT1_g_float[iS1{" + std::string(100000, '(') + "}]\n";
  std::string deepMesh =
      "%kernel {\nT1_g_float[iS1{8}] (DeviceMesh" + std::string(100000, '{') + "\n";
  // Followed by the closer: malformed, not a paste cut after the output.
  std::string longLine = "%kernel {\nT1_g_float[" + std::string(1 << 20, ' ') + "]\n} // %kernel\n";
  std::string manyIds = "%kernel {\nT1_g_float[";
  for (int i = 0; i < 20000; ++i) // extent 1: 8^20000 elements would overflow int64
    manyIds += "iS" + std::to_string(i + 10) + "{1}, ";
  manyIds += "iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n} // %kernel\n";
  // A chain of splits within ir/Limits.h's transform depth, and one past it.
  auto chainOf = [](int n) {
    std::string chain = "T0_g_float[iS" + std::to_string(n) + "{8}]\n logical domain : (iS0{8})\n";
    for (int i = 0; i < n; ++i)
      chain += "  Split: iS" + std::to_string(i) + "{8} by factor 1 -> iS" + std::to_string(i + 1) +
               "{8}, iS" + std::to_string(i + 100000) + "{1}\n";
    return chain;
  };
  std::string longChain = chainOf(900), tooLongChain = chainOf(20000);
  std::string flatExtent = "%kernel {\nT1_g_float[iS1{( i0";
  for (int i = 0; i < 200000; ++i)
    flatExtent += " * i" + std::to_string(i + 1);
  flatExtent += " )}]\n";
  std::string manyArgs = "%kernel {\nT1_g_float[iS1{max(i0";
  for (int i = 0; i < 200000; ++i)
    manyArgs += ", i0";
  manyArgs += ")}]\n";
  std::string hugeCallName = "%kernel {\nT1_g_float[iS1{" + std::string(1 << 22, 'f') + "(i0";
  for (int i = 0; i < 100000; ++i)
    hugeCallName += ", i0";
  hugeCallName += ")}]\n";
  std::string hugeNumbers = "%kernel {\nT1_g_float[iS1{" + std::string(5000, '9') + "}]\n";
  std::string manyBlocks;
  for (int i = 0; i < 2000; ++i)
    manyBlocks += "%kernel {\nT1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n} // %kernel\n";
  std::string binary(4096, '\0');
  for (size_t i = 0; i < binary.size(); ++i)
    binary[i] = static_cast<char>(i * 37 % 256);

  struct Case {
    const char *name;
    const std::string *text;
    bool shouldParse;
  };
  const Case cases[] = {
      {"deepExtent", &deepExtent, false},     {"deepMesh", &deepMesh, false},
      {"longLine", &longLine, false},         {"manyIds", &manyIds, true},
      {"longChain", &longChain, true},        {"tooLongChain", &tooLongChain, false},
      {"flatExtent", &flatExtent, false},     {"manyArgs", &manyArgs, false},
      {"hugeCallName", &hugeCallName, false}, {"hugeNumbers", &hugeNumbers, false},
      {"manyBlocks", &manyBlocks, true},      {"binary", &binary, false}};
  for (const Case &c : cases) {
    auto begin = std::chrono::steady_clock::now();
    bool parsed = false;
    std::string problem = checkOne(*c.text, &parsed);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    EXPECT_EQ(problem, "") << c.name;
    EXPECT_EQ(parsed, c.shouldParse) << c.name;
    EXPECT_LT(seconds, 5.0) << c.name << " took too long";
  }
}

/// The diagnostic reading `text` gives (a failure if it reads).
Diagnostic errorOf(const std::string &text) {
  try {
    readDocument(text, "m.txt");
  } catch (const InputError &e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "read without error: " << excerptForFailure(text);
  return {};
}

/// `line` (1-based) and the 1-based column of `needle` in it, of `text`.
std::pair<int, int> lineAndColumn(const std::string &text, const std::string &needle,
                                  size_t from = 0) {
  size_t at = text.find(needle, from);
  EXPECT_NE(at, std::string::npos) << needle;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  size_t lineStart = text.rfind('\n', at);
  return {line, static_cast<int>(at - (lineStart == std::string::npos ? 0 : lineStart + 1)) + 1};
}

const char *kSetKernel = "%kernel {\nT1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n} // "
                         "%kernel\n";

std::string withIdExtent(const std::string &extent) {
  std::string text = kSetKernel;
  return text.replace(text.find("iS1{8}"), 6, "iS1{" + extent + "}");
}

TEST(ReaderRobustness, ExtentArithmeticMustStayASize) {
  // `( 3 - 5 )` folded to the extent -2, which a JSON IR file could not say.
  std::string negative = withIdExtent("( 3 - 5 )");
  Diagnostic d = errorOf(negative);
  EXPECT_EQ(d.code, "parse");
  EXPECT_EQ(d.message, "extent arithmetic gives -2, and a size is never negative");
  EXPECT_EQ(std::make_pair(d.loc.line, d.loc.column), lineAndColumn(negative, "- 5"));
  std::string byZero = withIdExtent("( i0 / 0 )");
  d = errorOf(byZero);
  EXPECT_EQ(d.message, "division by zero in an extent");
  EXPECT_EQ(std::make_pair(d.loc.line, d.loc.column), lineAndColumn(byZero, "/ 0"));
  // A resize may still shrink by a literal.
  EXPECT_NO_THROW(readDocument("T1_g_float[iS2{7}]\n logical domain : (iS0{8})\n"
                               "  Resize: iS0{8} by -1 and 0 -> iS2{7}\n loop domain : (iS2{7})\n",
                               "m.txt"));
}

TEST(ReaderRobustness, ExtentOperatorsAreBoundedWhereNoParenthesisNests) {
  // 200 operators without parentheses once built a tree 200 levels deep
  // (200,000 overflowed the stack); the 129th is refused.
  std::string chain = "( i0";
  for (int i = 0; i < 200; ++i)
    chain += " * i" + std::to_string(i + 1);
  std::string text = withIdExtent(chain + " )");
  Diagnostic d = errorOf(text);
  EXPECT_EQ(d.code, "parse");
  EXPECT_EQ(d.message, "extent has more than 128 operators and call arguments");
  EXPECT_EQ(std::make_pair(d.loc.line, d.loc.column), lineAndColumn(text, "* i129 "));
  std::string ok = "( i0";
  for (int i = 0; i < 128; ++i)
    ok += " + i" + std::to_string(i + 1);
  EXPECT_NO_THROW(readDocument(withIdExtent(ok + " )"), "m.txt"));
}

TEST(ReaderRobustness, InvalidUtf8IsLocatedAtTheByte) {
  std::string text = kSetKernel;
  text.insert(text.find("] )"), " \xE9t\xE9");
  Diagnostic d = errorOf(text);
  EXPECT_EQ(d.code, "parse");
  EXPECT_EQ(d.message, "byte 0xE9 is not valid UTF-8 (inputs must be UTF-8)");
  EXPECT_EQ(std::make_pair(d.loc.line, d.loc.column), lineAndColumn(text, "\xE9"));
  // Even in a log line the IR does not keep: inputs are UTF-8 throughout.
  d = errorOf("log \xFF\n" + std::string(kSetKernel));
  EXPECT_EQ(std::make_pair(d.loc.line, d.loc.column), std::make_pair(1, 5));
  EXPECT_NO_THROW(readDocument("log é 流\n" + std::string(kSetKernel), "m.txt"));
}

TEST(ReaderRobustness, MessagesQuoteBoundedTokens) {
  std::string huge(1 << 20, 'a');
  std::string permute = kSetKernel;
  permute.replace(permute.find("Set( T0_g_float[iS0{8}] )"), 25,
                  huge + ".Permute( T0_g_float[iS0{8}], T2_g_float[iS2{8}] )");
  std::string key = kSetKernel;
  key.replace(key.find("] )"), 3, "], " + huge + "= )");
  std::string conflict = kSetKernel;
  conflict.replace(conflict.find("iS0{8}"), 6, "iS0{" + huge + "}");
  conflict.insert(conflict.find("} // %kernel"),
                  "T2_g_float[iS3{8}]\n   = Set( T0_g_float[iS0{8}] )\n");
  for (const std::string *text : {&permute, &key, &conflict}) {
    Diagnostic d = errorOf(*text);
    EXPECT_TRUE(d.loc.known());
    EXPECT_LT(d.message.size(), 400u) << d.message.substr(0, 300);
    EXPECT_NE(d.message.find(" bytes)"), std::string::npos) << d.message.substr(0, 300);
  }
}

} // namespace
} // namespace shardcheck
