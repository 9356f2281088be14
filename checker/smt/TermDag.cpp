// The hash-consed term DAG and canonical query keys; see TermDag.h.
#include "checker/smt/TermDag.h"

#include <charconv>

namespace shardcheck::smt {

size_t TermDag::KeyHash::operator()(const Key &k) const {
  // FNV-1a over the fields; collisions only cost a comparison.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  mix(static_cast<uint64_t>(k.op));
  mix(static_cast<uint64_t>(k.value));
  for (uint32_t kid : k.kids)
    mix(kid);
  return static_cast<size_t>(h);
}

uint32_t TermDag::intern(Key key) {
  auto it = interned_.find(key);
  if (it != interned_.end())
    return it->second;
  Node n{key.op, key.value, static_cast<uint32_t>(kids_.size()),
         static_cast<uint32_t>(key.kids.size())};
  kids_.insert(kids_.end(), key.kids.begin(), key.kids.end());
  auto index = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(n);
  interned_.emplace(std::move(key), index);
  return index;
}

uint32_t TermDag::var(const std::string &name) {
  auto it = varNodes_.find(name);
  if (it != varNodes_.end())
    return it->second;
  names_.push_back(name);
  uint32_t i = intern(Key{Op::Var, static_cast<int64_t>(names_.size() - 1), {}});
  varNodes_.emplace(name, i);
  return i;
}

int64_t TermDag::findVar(const std::string &name) const {
  auto it = varNodes_.find(name);
  return it == varNodes_.end() ? -1 : static_cast<int64_t>(it->second);
}

uint32_t TermDag::constant(Op op, int64_t value) {
  return intern(Key{op, value, {}});
}

uint32_t TermDag::apply(Op op, const std::vector<uint32_t> &kids) {
  return intern(Key{op, 0, kids});
}

namespace {

void appendNumber(std::string &out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

} // namespace

std::string TermDag::canonicalKey(const std::vector<uint32_t> &roots,
                                  const std::vector<std::string> &modelVars) const {
  // Post-order: a node is written once all its kids have local numbers, so
  // the text is a topological listing of the query.
  constexpr uint32_t unnumbered = UINT32_MAX;
  std::vector<uint32_t> local(nodes_.size(), unnumbered); // node -> local number
  uint32_t numbered = 0;
  std::string out;
  auto emit = [&](uint32_t i) {
    const Node &n = nodes_[i];
    out += static_cast<char>('A' + static_cast<int>(n.op));
    if (n.op == Op::Var)
      out += nameOf(n);
    else if (n.kidCount == 0)
      appendNumber(out, n.value);
    for (uint32_t k = 0; k < n.kidCount; ++k) {
      out += ' ';
      appendNumber(out, local[kidsOf(n)[k]]);
    }
    out += '\n';
    local[i] = numbered++;
  };
  for (uint32_t root : roots) {
    postOrder(
        root, [&](uint32_t i) { return local[i] != unnumbered; }, emit);
    out += "!";
    appendNumber(out, local[root]);
    out += '\n';
  }
  for (const auto &v : modelVars)
    out += "?" + v + "\n";
  return out;
}

} // namespace shardcheck::smt
