// megatron-gen: writes an L-layer Megatron-style tensor-parallel transformer
// as an nvFuser dump (current `%kernel` + TransformPrinter style), for the
// checker benchmark (bench/README.md).
//
// Each layer: LayerNorm-like centering (sum, broadcast, sub), attention as a
// column-parallel QKV linear, a pointwise stand-in for the attention core and
// a row-parallel output linear (partial sums: Allreduce), a residual add; then
// the same pattern for the MLP (column-parallel fc1, tanh GeLU stand-in,
// row-parallel fc2, residual add). Weights are sharded by loop splits on DIDx
// (outer split by the device count), activations are [s, h] with a symbolic
// sequence length `i0`.
//
// --sequence-parallel: activations outside the tensor-parallel regions are
// sharded on the sequence axis (Megatron-SP): the norms run on sequence
// shards, a Set gathers them before each column-parallel linear (Allgather)
// and the row-parallel partial sums are reduce-scattered into the residual
// add (ReduceScatter).
// --backward: after the forward layers, their gradients in reverse order. Per
// linear y = x w^T: dx = matmul(dy, w) (partial sums for a column-parallel
// w, local for a row-parallel one) and dw = matmul(permute(dy), x) (local);
// a pointwise op's gradient is dy * its input; a norm's and a residual's
// gradients repeat the forward's centering and add. The gradient formulas of
// the stand-ins are stand-ins too: what is modelled faithfully is which
// tensors are sharded how, i.e. the communication.
//
// It does not write data-parallel gradient reductions or optimizer steps.
//
//   megatron-gen LAYERS DEVICES [HIDDEN] [--backward] [--sequence-parallel] > dump.txt
#include "ir/FusionBuilder.h"
#include "ir/Printer.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using namespace shardcheck;

namespace {

struct Options {
  int64_t layers = 1, devices = 8, hidden = 1024;
  bool backward = false, sequenceParallel = false;
};

/// What a layer's backward pass reads from its forward pass.
struct LinearSaved {
  TensorNum input, weight;
  int64_t out, in;
  bool columnParallel;
};
struct BlockSaved {
  LinearSaved first, second; ///< column-parallel, then row-parallel
  TensorNum preActivation;   ///< the first linear's output
};
struct LayerSaved {
  BlockSaved attention, mlp;
};

class Model {
public:
  explicit Model(const Options &o) : o_(o) {
    std::vector<int64_t> ids(o.devices);
    for (int64_t i = 0; i < o.devices; ++i)
      ids[i] = i;
    mesh_ = DeviceMesh::linear(ids);
  }

  Fusion &fusion() { return b_.fusion(); }

  /// The residual stream: [s, h], sequence-sharded under sequence parallelism.
  TensorNum stream() { return o_.sequenceParallel ? sequenceSharded(o_.hidden) : full(o_.hidden); }

  TensorNum forward(TensorNum x, LayerSaved &saved) {
    TensorNum x1 = block(x, 3 * o_.hidden, "expf", saved.attention);
    return block(x1, 4 * o_.hidden, "tanhf", saved.mlp);
  }

  TensorNum backward(TensorNum dy, const LayerSaved &saved) {
    TensorNum dx1 = blockBackward(dy, saved.mlp);
    return blockBackward(dx1, saved.attention);
  }

private:
  /// [s, n] replicated.
  TensorNum full(int64_t n) { return b_.tensor({b_.iter("i0"), b_.iter(n)}, mesh_); }

  /// [s, n] with s outer-split by the device count on DIDx.
  TensorNum sequenceSharded(int64_t n) {
    IdNum s = b_.iter("i0"), h = b_.iter(n);
    auto [did, local] = b_.split(s, Extent::constant(o_.devices), false, ParallelType::DIDx);
    return b_.tensor({s, h}, mesh_, {did, local, h});
  }

  /// [s, n] with n outer-split by the device count on DIDx.
  TensorNum featureSharded(int64_t n) {
    IdNum s = b_.iter("i0"), o = b_.iter(n);
    auto [did, local] = b_.split(o, Extent::constant(o_.devices), false, ParallelType::DIDx);
    return b_.tensor({s, o}, mesh_, {s, did, local}, DataType::BFloat16);
  }

  /// A weight [out, in] sharded on `shardOut ? out : in` by an outer split.
  TensorNum weight(int64_t out, int64_t in, bool shardOut) {
    IdNum o = b_.iter(out), i = b_.iter(in);
    auto [did, local] =
        b_.split(shardOut ? o : i, Extent::constant(o_.devices), false, ParallelType::DIDx);
    std::vector<IdNum> loop =
        shardOut ? std::vector<IdNum>{did, local, i} : std::vector<IdNum>{o, did, local};
    return b_.tensor({o, i}, mesh_, loop, DataType::BFloat16);
  }

  /// x - broadcast(sum(x)) over h: the reduction and broadcast of a norm, on
  /// the layout of the residual stream.
  TensorNum center(TensorNum x) {
    bool sp = o_.sequenceParallel;
    auto rowsLike = [&](IdNum last) {
      IdNum s = b_.iter("i0");
      if (!sp)
        return b_.tensor({s, last}, mesh_);
      auto [did, local] = b_.split(s, Extent::constant(o_.devices), false, ParallelType::DIDx);
      return b_.tensor({s, last}, mesh_, {did, local, last});
    };
    TensorNum m = rowsLike(b_.reduction(Extent::constant(o_.hidden)));
    b_.expr(OpKind::Reduction, "reduction", {x}, m, {},
            {{"op", "add"}, {"initial value", "float(0)"}, {"allreduce", "false"}});
    TensorNum mb = rowsLike(b_.broadcast());
    b_.expr(OpKind::Broadcast, "broadcast", {m}, mb, {false, true});
    TensorNum xc = stream();
    b_.expr(OpKind::Binary, "-", {x, mb}, xc);
    return xc;
  }

  /// The stream's layout made replicated: a Set (Allgather) under sequence
  /// parallelism, nothing otherwise.
  TensorNum gathered(TensorNum x) {
    if (!o_.sequenceParallel)
      return x;
    TensorNum y = full(o_.hidden);
    b_.set(x, y);
    return y;
  }

  /// Column-parallel linear: out [s, N sharded, rK].
  TensorNum columnParallel(TensorNum x, int64_t n, LinearSaved &saved) {
    TensorNum w = weight(n, o_.hidden, /*shardOut=*/true);
    IdNum s = b_.iter("i0"), o = b_.iter(n), k = b_.reduction(Extent::constant(o_.hidden));
    auto [did, local] = b_.split(o, Extent::constant(o_.devices), false, ParallelType::DIDx);
    TensorNum y = b_.tensor({s, o, k}, mesh_, {s, did, local, k}, DataType::BFloat16);
    b_.expr(OpKind::Linear, "linear", {x, w}, y);
    saved = LinearSaved{x, w, n, o_.hidden, true};
    return y;
  }

  /// Pointwise op keeping a [s, N sharded] sharding.
  TensorNum shardedPointwise(std::vector<TensorNum> ins, int64_t n, const std::string &op) {
    TensorNum y = featureSharded(n);
    b_.expr(ins.size() == 1 ? OpKind::Unary : OpKind::Binary, op, ins, y);
    return y;
  }

  /// Row-parallel linear: K sharded, out [s, h, rK(DIDx)] = partial sums.
  TensorNum rowParallel(TensorNum x, int64_t k, LinearSaved &saved) {
    TensorNum w = weight(o_.hidden, k, /*shardOut=*/false);
    saved = LinearSaved{x, w, o_.hidden, k, false};
    return partialSums(OpKind::Linear, "linear", {x, w}, o_.hidden, k);
  }

  /// out [s, n, rK(DIDx)]: the partial sums of a contraction over sharded K.
  TensorNum partialSums(OpKind kind, const char *op, std::vector<TensorNum> ins, int64_t n,
                        int64_t k) {
    IdNum s = b_.iter("i0"), o = b_.iter(n), r = b_.reduction(Extent::constant(k));
    auto [did, local] = b_.split(r, Extent::constant(o_.devices), false, ParallelType::DIDx);
    TensorNum y = b_.tensor({s, o, r}, mesh_, {s, o, did, local}, DataType::BFloat16);
    b_.expr(kind, op, std::move(ins), y);
    return y;
  }

  /// The residual add; partial sums in `y` are summed into the stream's
  /// layout (Allreduce, or ReduceScatter under sequence parallelism).
  TensorNum residual(TensorNum x, TensorNum y) {
    TensorNum z = stream();
    b_.expr(OpKind::Binary, "+", {x, y}, z);
    return z;
  }

  TensorNum block(TensorNum x, int64_t width, const char *activation, BlockSaved &saved) {
    saved.preActivation = columnParallel(gathered(center(x)), width, saved.first);
    TensorNum act = shardedPointwise({saved.preActivation}, width, activation);
    return residual(x, rowParallel(act, width, saved.second));
  }

  // --- Backward. ---

  /// [n, s] = permute of [s, n] (sharded on n when `sharded`).
  TensorNum transposed(TensorNum x, int64_t n, bool sharded) {
    IdNum s = b_.iter("i0"), o = b_.iter(n);
    FusionBuilder::TensorSpec spec;
    spec.root = {s, o};
    spec.logical = {o, s};
    spec.mesh = mesh_;
    spec.dtype = DataType::BFloat16;
    if (sharded) {
      auto [did, local] = b_.split(o, Extent::constant(o_.devices), false, ParallelType::DIDx);
      spec.loop = {did, local, s};
    }
    TensorNum t = b_.tensor(spec);
    b_.expr(OpKind::Permute, "Set.Permute", {x}, t, {}, {{"cache_op", "Streaming"}});
    return t;
  }

  /// dw [out, in] = matmul(dy^T [out, s], x [s, in]), sharded like w.
  void weightGradient(TensorNum dy, const LinearSaved &l) {
    TensorNum dyT = transposed(dy, l.out, l.columnParallel);
    IdNum o = b_.iter(l.out), i = b_.iter(l.in), r = b_.reduction(Extent::symbol("i0"));
    auto [did, local] =
        b_.split(l.columnParallel ? o : i, Extent::constant(o_.devices), false, ParallelType::DIDx);
    std::vector<IdNum> loop = l.columnParallel ? std::vector<IdNum>{did, local, i, r}
                                               : std::vector<IdNum>{o, did, local, r};
    TensorNum dw = b_.tensor({o, i, r}, mesh_, loop, DataType::BFloat16);
    b_.expr(OpKind::Matmul, "matmul", {dyT, l.input}, dw);
  }

  /// dx = matmul(dy [s, out], w [out, in]).
  TensorNum inputGradient(TensorNum dy, const LinearSaved &l) {
    if (l.columnParallel) // out is sharded: partial sums over it
      return partialSums(OpKind::Matmul, "matmul", {dy, l.weight}, l.in, l.out);
    IdNum s = b_.iter("i0"), i = b_.iter(l.in), r = b_.reduction(Extent::constant(l.out));
    auto [did, local] = b_.split(i, Extent::constant(o_.devices), false, ParallelType::DIDx);
    TensorNum dx = b_.tensor({s, i, r}, mesh_, {s, did, local, r}, DataType::BFloat16);
    b_.expr(OpKind::Matmul, "matmul", {dy, l.weight}, dx);
    return dx;
  }

  TensorNum blockBackward(TensorNum dy, const BlockSaved &saved) {
    TensorNum dyFull = gathered(dy);
    weightGradient(dyFull, saved.second);
    TensorNum dAct = inputGradient(dyFull, saved.second);
    TensorNum dPre = shardedPointwise({dAct, saved.preActivation}, saved.first.out, "*");
    weightGradient(dPre, saved.first);
    TensorNum dIn = inputGradient(dPre, saved.first);
    return center(residual(dy, dIn));
  }

  Options o_;
  FusionBuilder b_;
  DeviceMesh mesh_;
};

bool parse(int argc, char **argv, Options &o) {
  std::vector<int64_t> numbers;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backward"))
      o.backward = true;
    else if (!std::strcmp(argv[i], "--sequence-parallel"))
      o.sequenceParallel = true;
    else if (argv[i][0] == '-')
      return false;
    else
      numbers.push_back(std::atoll(argv[i]));
  }
  if (numbers.size() < 2 || numbers.size() > 3)
    return false;
  o.layers = numbers[0];
  o.devices = numbers[1];
  if (numbers.size() == 3)
    o.hidden = numbers[2];
  return o.layers >= 1 && o.layers <= 100000 && o.devices >= 1 && o.devices <= 4096 &&
         o.hidden >= 1 && o.hidden % o.devices == 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::cerr << "usage: megatron-gen LAYERS DEVICES [HIDDEN] [--backward] [--sequence-parallel]\n"
                 "  1 <= LAYERS <= 100000, 1 <= DEVICES <= 4096, DEVICES divides HIDDEN\n";
    return 2;
  }
  Model m(o);
  TensorNum x = m.stream();
  std::vector<LayerSaved> saved(static_cast<size_t>(o.layers));
  for (auto &s : saved)
    x = m.forward(x, s);
  if (o.backward) {
    TensorNum dy = m.stream();
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      dy = m.backward(dy, *it);
  }
  std::cout << "// Megatron-style tensor-parallel transformer, " << o.layers << " layer(s), "
            << o.devices << " devices, hidden " << o.hidden
            << (o.sequenceParallel ? ", sequence parallel" : "")
            << (o.backward ? ", forward and backward" : "") << " (bench/megatron_gen.cpp)\n";
  std::cout << printFusion(m.fusion());
  return 0;
}
