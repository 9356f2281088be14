// Random looped Communications as host IR text; see RandomLoops.h.
#include "checker/bruteforce/RandomLoops.h"

#include "util/RandomDraw.h"

#include <vector>

namespace shardcheck::bruteforce {

namespace {

struct Axis {
  std::string extent; ///< `3` or `i1`.
  bool did = false;
  bool stream = false;
};

/// Prints tensors with IterDomain numbers unique across the program.
class Printer {
public:
  std::string tensor(int number, const std::vector<Axis> &axes, const std::string &mesh,
                     std::string *streamId = nullptr) {
    std::string s = "T" + std::to_string(number) + "_g_float[";
    for (size_t k = 0; k < axes.size(); ++k) {
      std::string id = std::string("i") +
                       (axes[k].did      ? "deviceIdx.x"
                        : axes[k].stream ? "StreamIdx"
                                         : "S") +
                       std::to_string(next_++) + "{" + axes[k].extent + "}";
      if ((axes[k].stream || k == streamPos_) && streamId)
        *streamId = id;
      s += (k ? ", " : "") + id;
    }
    return s + "] (" + mesh + ")";
  }
  /// Which axis of the next tensor is the sliced one (for its printed ID).
  void slicedAt(size_t pos) { streamPos_ = pos; }

private:
  int next_ = 0;
  size_t streamPos_ = 0;
};

std::string meshOf(int64_t first, int64_t n) {
  std::string s = "DeviceMesh{";
  for (int64_t d = 0; d < n; ++d)
    s += (d ? " " : "") + std::to_string(first + d);
  return s + "}";
}

/// `slice` with the stream axis of `extent` inserted at `pos`.
std::vector<Axis> withStream(std::vector<Axis> slice, size_t pos, const std::string &extent,
                             bool streamType) {
  slice.insert(slice.begin() + static_cast<std::ptrdiff_t>(pos), Axis{extent, false, streamType});
  return slice;
}

/// The slice's axes with its sharding moved to a random axis (or dropped).
std::vector<Axis> reshard(DrawFrom &draw, std::vector<Axis> axes, const std::string &devices) {
  int64_t target = draw.between(-1, static_cast<int64_t>(axes.size()) - 1);
  for (size_t k = 0; k < axes.size(); ++k) {
    axes[k].did = static_cast<int64_t>(k) == target;
    if (axes[k].did)
      axes[k].extent = devices;
  }
  return axes;
}

} // namespace

RandomLoopCase randomLoop(uint64_t seed) {
  std::mt19937_64 rng(seed);
  DrawFrom draw(rng);
  RandomLoopCase c;
  int64_t n = draw.between(1, 4);
  std::string devices = std::to_string(n), mesh = meshOf(0, n);
  std::vector<Axis> slice(static_cast<size_t>(draw.between(1, 2)));
  for (size_t k = 0; k < slice.size(); ++k) {
    bool symbolic = draw.percent(25);
    slice[k].extent = symbolic ? "i" + std::to_string(k + 1) : std::to_string(draw.between(1, 4));
    if (symbolic)
      c.bindings["i" + std::to_string(k + 1)] = draw.between(1, 4);
  }
  std::vector<Axis> in = reshard(draw, slice, devices), out = reshard(draw, slice, devices);
  bool symbolicStream = draw.percent(40);
  std::string stream = symbolicStream ? "i0" : std::to_string(draw.between(1, 4));
  if (symbolicStream)
    c.bindings["i0"] = draw.between(1, 4);
  size_t posP = static_cast<size_t>(draw.between(0, static_cast<int64_t>(slice.size())));
  size_t posC = static_cast<size_t>(draw.between(0, static_cast<int64_t>(slice.size())));
  std::vector<Axis> inView = draw.percent(15) ? reshard(draw, in, devices) : in;
  std::vector<Axis> outView = draw.percent(15) ? reshard(draw, out, devices) : out;
  std::string cMesh = draw.percent(10) ? meshOf(1, n) : mesh;
  // The input's stream axis may differ from the output's.
  std::string inStream = draw.percent(15) ? std::to_string(draw.between(1, 4)) : stream;

  Printer p;
  std::string pStream, cStream;
  p.slicedAt(posP);
  std::string P = p.tensor(0, withStream(in, posP, inStream, false), mesh, &pStream);
  p.slicedAt(posC);
  std::string C = p.tensor(1, withStream(out, posC, stream, true), cMesh, &cStream);
  std::string R = p.tensor(2, inView, mesh), W = p.tensor(3, outView, mesh);

  std::string header, var = "StreamIdx";
  int64_t kind = draw.between(0, 9);
  if (kind < 4) {
    header = "FOR StreamIdx in " + cStream;
  } else if (kind < 6) {
    header = "FOR StreamIdx in " + pStream;
  } else {
    var = "i18";
    std::string bound = stream;
    if (!symbolicStream && draw.percent(40))
      bound = std::to_string(std::stoll(stream) + draw.pick(std::vector<int64_t>{-1, 1}));
    else if (symbolicStream && draw.percent(30)) // a constant trip count, a symbolic axis
      bound = std::to_string(draw.between(1, 4));
    header = "FOR i18 from 0 to " + bound;
  }
  // The statement writing the slice: the Allgather, or (issue 16's write
  // views) a Set, whose loop claims are the same.
  std::string statement = draw.percent(35)
                              ? "    " + W + "\n       = Set( " + R + ", cache_op=Streaming )\n"
                              : "    Communication 1 (type=Allgather, team=(" +
                                    mesh.substr(11, mesh.size() - 12) + "), input=" + R +
                                    ", output=" + W + ", backend=NCCL)\n    Wait Communication 1\n";
  c.text = "%HostIrContainer { (" + P + ") -> (" + C + ") :\n  " + header + ":\n    " + R +
           "\n       = HirAliasSelect( " + P + ", axis = " + pStream + ", index = " + var +
           " )\n    " + W + "\n       = HirAliasSelect( " + C + ", axis = " + cStream +
           ", index = " + var + " )\n" + statement + "} // %HostIrContainer\n";
  c.description = "seed " + std::to_string(seed) + ": " + header + "; " + P + " -> " + C;
  return c;
}

} // namespace shardcheck::bruteforce
