// The SMT layer's own term graph (private to checker/smt/).
//
// Terms are nodes of a hash-consed DAG: building the same term twice in one
// Context yields the same node. A query's cache key is a canonical
// serialization of the part of the DAG its assertions reach (post-order,
// nodes numbered by first visit), so identical queries get identical keys
// however their terms were built, and no Z3 object exists until a query
// misses the cache. That is what makes the cold path cheap: most queries of a
// fusion are answered from the cache, and for them shardcheck never builds a
// Z3 term, a solver or SMT-LIB text.
//
// This file does not include Z3 and does not solve; Z3Solve.cpp translates a
// query's nodes into Z3 when it must be solved.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardcheck::smt {

enum class Op : uint8_t {
  Var,       ///< value: index into names
  IntConst,  ///< value: the integer
  BoolConst, ///< value: 0 or 1
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Ite,
  Eq,
  Ne,
  Lt,
  Le,
  And,
  Or,
  Not,
  Implies,
};

struct Node {
  Op op;
  int64_t value = 0;
  uint32_t firstKid = 0, kidCount = 0; ///< Range in TermDag::kids.
};

class TermDag {
public:
  uint32_t var(const std::string &name);
  uint32_t constant(Op op, int64_t value);
  uint32_t apply(Op op, const std::vector<uint32_t> &kids);

  const Node &node(uint32_t i) const { return nodes_[i]; }
  size_t size() const { return nodes_.size(); }
  const uint32_t *kidsOf(const Node &n) const { return kids_.data() + n.firstKid; }
  const std::string &nameOf(const Node &n) const { return names_[static_cast<size_t>(n.value)]; }
  /// The node of a variable created before, or -1.
  int64_t findVar(const std::string &name) const;

  /// Calls `visit(i)` for every node below `root` (and the root last) whose
  /// `seen(i)` is false, each after its kids: an iterative post-order walk
  /// (terms can be deep). `visit` must make `seen` true.
  template <typename Seen, typename Visit>
  void postOrder(uint32_t root, Seen seen, Visit visit) const {
    std::vector<std::pair<uint32_t, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [i, expanded] = stack.back();
      stack.pop_back();
      if (seen(i))
        continue;
      if (expanded) {
        visit(i);
        continue;
      }
      stack.push_back({i, true});
      const Node &n = nodes_[i];
      for (uint32_t k = n.kidCount; k-- > 0;)
        stack.push_back({kidsOf(n)[k], false});
    }
  }

  /// The canonical text of the DAG part reachable from `roots`, in order,
  /// followed by `modelVars`. Equal iff the queries are structurally equal.
  std::string canonicalKey(const std::vector<uint32_t> &roots,
                           const std::vector<std::string> &modelVars) const;

private:
  struct Key {
    Op op;
    int64_t value;
    std::vector<uint32_t> kids;
    bool operator==(const Key &o) const { return op == o.op && value == o.value && kids == o.kids; }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const;
  };
  uint32_t intern(Key key);

  std::vector<Node> nodes_;
  std::vector<uint32_t> kids_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> varNodes_;
  std::unordered_map<Key, uint32_t, KeyHash> interned_;
};

} // namespace shardcheck::smt
