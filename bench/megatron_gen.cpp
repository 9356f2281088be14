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
//   megatron-gen LAYERS DEVICES [HIDDEN] > dump.txt
#include "ir/FusionBuilder.h"
#include "ir/Printer.h"

#include <cstdlib>
#include <iostream>
#include <string>

using namespace shardcheck;

namespace {

struct Model {
  FusionBuilder b;
  DeviceMesh mesh;
  int64_t devices;
  int64_t hidden;

  TensorNum replicated(const std::vector<IdNum> &logical) { return b.tensor(logical, mesh); }

  /// [s, h] activation, replicated.
  TensorNum activation() { return replicated({b.iter("i0"), b.iter(hidden)}); }

  /// A weight [out, in] sharded on `shardOut ? out : in` by an outer split.
  TensorNum weight(int64_t out, int64_t in, bool shardOut) {
    IdNum o = b.iter(out), i = b.iter(in);
    IdNum sharded = shardOut ? o : i;
    auto [did, local] = b.split(sharded, Extent::constant(devices), false, ParallelType::DIDx);
    std::vector<IdNum> loop =
        shardOut ? std::vector<IdNum>{did, local, i} : std::vector<IdNum>{o, did, local};
    return b.tensor({o, i}, mesh, loop, DataType::BFloat16);
  }

  /// x - broadcast(sum(x)): the reduction and broadcast of a norm.
  TensorNum center(TensorNum x) {
    TensorNum m = replicated({b.iter("i0"), b.reduction(Extent::constant(hidden))});
    b.expr(OpKind::Reduction, "reduction", {x}, m, {},
           {{"op", "add"}, {"initial value", "float(0)"}, {"allreduce", "false"}});
    TensorNum mb = replicated({b.iter("i0"), b.broadcast()});
    b.expr(OpKind::Broadcast, "broadcast", {m}, mb, {false, true});
    TensorNum xc = activation();
    b.expr(OpKind::Binary, "-", {x, mb}, xc);
    return xc;
  }

  /// Column-parallel linear: out [s, N sharded, rK].
  TensorNum columnParallel(TensorNum x, int64_t n) {
    TensorNum w = weight(n, hidden, /*shardOut=*/true);
    IdNum s = b.iter("i0"), o = b.iter(n), k = b.reduction(Extent::constant(hidden));
    auto [did, local] = b.split(o, Extent::constant(devices), false, ParallelType::DIDx);
    TensorNum y = b.tensor({s, o, k}, mesh, {s, did, local, k}, DataType::BFloat16);
    b.expr(OpKind::Linear, "linear", {x, w}, y);
    return y;
  }

  /// Pointwise op keeping a [s, N sharded] sharding.
  TensorNum shardedPointwise(TensorNum x, int64_t n, const std::string &op) {
    IdNum s = b.iter("i0"), o = b.iter(n);
    auto [did, local] = b.split(o, Extent::constant(devices), false, ParallelType::DIDx);
    TensorNum y = b.tensor({s, o}, mesh, {s, did, local}, DataType::BFloat16);
    b.expr(OpKind::Unary, op, {x}, y);
    return y;
  }

  /// Row-parallel linear: K sharded, out [s, h, rK(DIDx)] = partial sums.
  TensorNum rowParallel(TensorNum x, int64_t k) {
    TensorNum w = weight(hidden, k, /*shardOut=*/false);
    IdNum s = b.iter("i0"), o = b.iter(hidden), r = b.reduction(Extent::constant(k));
    auto [did, local] = b.split(r, Extent::constant(devices), false, ParallelType::DIDx);
    TensorNum y = b.tensor({s, o, r}, mesh, {s, o, did, local}, DataType::BFloat16);
    b.expr(OpKind::Linear, "linear", {x, w}, y);
    return y;
  }

  TensorNum residual(TensorNum x, TensorNum y) {
    TensorNum z = activation();
    b.expr(OpKind::Binary, "+", {x, y}, z);
    return z;
  }

  TensorNum layer(TensorNum x) {
    TensorNum qkv = columnParallel(center(x), 3 * hidden);
    TensorNum attn = shardedPointwise(qkv, 3 * hidden, "expf");
    TensorNum x1 = residual(x, rowParallel(attn, 3 * hidden));
    TensorNum fc1 = columnParallel(center(x1), 4 * hidden);
    TensorNum act = shardedPointwise(fc1, 4 * hidden, "tanhf");
    return residual(x1, rowParallel(act, 4 * hidden));
  }
};

int64_t argOr(int argc, char **argv, int i, int64_t fallback) {
  return argc > i ? std::atoll(argv[i]) : fallback;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::cerr << "usage: megatron-gen LAYERS DEVICES [HIDDEN] > dump.txt\n";
    return 2;
  }
  int64_t layers = argOr(argc, argv, 1, 1), devices = argOr(argc, argv, 2, 8);
  int64_t hidden = argOr(argc, argv, 3, 1024);
  if (layers < 1 || devices < 1 || hidden % devices != 0) {
    std::cerr << "megatron-gen: LAYERS >= 1, DEVICES >= 1, DEVICES must divide HIDDEN\n";
    return 2;
  }
  std::vector<int64_t> ids(devices);
  for (int64_t i = 0; i < devices; ++i)
    ids[i] = i;
  Model m{FusionBuilder(), DeviceMesh::linear(ids), devices, hidden};
  TensorNum x = m.activation();
  for (int64_t l = 0; l < layers; ++l)
    x = m.layer(x);
  std::cout << "// Megatron-style tensor-parallel transformer, " << layers << " layer(s), "
            << devices << " devices, hidden " << hidden << " (bench/megatron_gen.cpp)\n";
  std::cout << printFusion(m.b.fusion());
  return 0;
}
