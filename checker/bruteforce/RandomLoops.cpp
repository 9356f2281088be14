// Random looped Communications as host IR text; see RandomLoops.h.
#include "checker/bruteforce/RandomLoops.h"

#include "util/RandomDraw.h"

#include <map>
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

/// A ring with random devices and slot sizes: mostly dispatchSwizzle1D's
/// own peers, with one thing changed a third of the time.
RandomLoopCase randomRing(uint64_t seed, DrawFrom &draw) {
  RingCase r;
  r.devices = draw.between(1, 4);
  int64_t n = r.devices;
  r.slot.assign(static_cast<size_t>(draw.between(1, 2)), 0);
  for (int64_t &extent : r.slot)
    extent = draw.between(1, 4);
  r.recvIndex = r.sendIndex = draw.between(0, n - 1);
  r.recvModulus = r.sendModulus = r.sendAddend = n;
  r.lo = 0;
  r.hi = n;
  switch (draw.between(0, 8)) {
  case 0:
    r.recvIndex = draw.between(0, n);
    break;
  case 1:
    r.sendIndex = draw.between(0, n);
    break;
  case 2:
    r.recvModulus = draw.between(1, n + 1);
    break;
  case 3:
    r.sendModulus = draw.between(1, n + 1);
    r.sendAddend = draw.between(n, n + 1);
    break;
  case 4:
    r.hi = draw.between(n - 1, n + 1);
    r.lo = draw.between(0, 1);
    break;
  default:
    break; // right
  }
  RandomLoopCase c;
  c.text = ringProgram(r);
  c.ringRight = r.recvIndex == r.sendIndex && r.recvIndex < n && ringRuns(r, r.recvIndex);
  c.description = "seed " + std::to_string(seed) + ": ring of " + std::to_string(n) +
                  " devices, recv index " + std::to_string(r.recvIndex) + " % " +
                  std::to_string(r.recvModulus) + ", send " + std::to_string(r.sendAddend) +
                  " + index " + std::to_string(r.sendIndex) + " % " +
                  std::to_string(r.sendModulus) + ", loop " + std::to_string(r.lo) + " to " +
                  std::to_string(r.hi);
  return c;
}

} // namespace

std::string ringProgram(const RingCase &c) {
  std::string d = std::to_string(c.devices), mesh = " (" + meshOf(0, c.devices) + ")";
  std::string team = meshOf(0, c.devices).substr(11);
  team = "(" + team.substr(0, team.size() - 1) + ")";
  int next = 30; // IterDomain numbers of the slot axes
  auto slotAxes = [&] {
    std::string s;
    for (int64_t e : c.slot)
      s += ", iS" + std::to_string(next++) + "{" + std::to_string(e) + "}";
    return s;
  };
  std::string t0 = "T0_g_float[ideviceIdx.x1{" + d + "}" + slotAxes() + "]" + mesh;
  std::string t3 = "T3_g_float[istreamIdx12{" + d + "}" + slotAxes() + "]" + mesh;
  std::string t4 = "T4_l_float[" + slotAxes().substr(2) + "]" + mesh;
  std::string t2 = "T2_g_float[istreamIdx20{" + d + "}" + slotAxes() + "]" + mesh;
  std::string t5 = "T5_l_float[" + slotAxes().substr(2) + "]" + mesh;
  // A statement computed from the ring's slot writes T2's slot too.
  std::string consumer = "    " + t5 + " = ShardByStream(" + t2 + ", stream_index = i100)\n    " +
                         t5 + "\n       = Set( " + t4 + ", cache_op=Streaming )\n";
  return "%HostIrContainer { (" + t0 + ") -> (" + t2 + ") :\n" + "  " + t3 +
         " = ALLOCATE(buffer=" + t3 + ", mem_type=global, size=6, zero_init=false, " +
         "resets_to_zero=false)\n" + "  FOR i100 from " + std::to_string(c.lo) + " to " +
         std::to_string(c.hi) + ":\n" + "    " + t4 + " = ShardByStream(" + t3 +
         ", stream_index = i100)\n" + "    CollectivePermute 30 (team=" + team +
         ", send_peer=( ( " + std::to_string(c.sendAddend) + " + ( " + std::to_string(c.sendIndex) +
         " - i100 ) ) % " + std::to_string(c.sendModulus) + " ), recv_peer=( ( i100 + " +
         std::to_string(c.recvIndex) + " ) % " + std::to_string(c.recvModulus) + " ), input=" + t0 +
         ", output=" + t4 + ", backend=NCCL)\n" + "    Wait(Communication 30)\n" + consumer +
         "} // %HostIrContainer\n";
}

bool ringRuns(const RingCase &c, int64_t printer) {
  int64_t n = c.devices;
  // C++'s truncated remainder, as nvFuser evaluates the printed peers.
  auto recv = [&](int64_t t, int64_t v) { return (v + c.recvIndex - printer + t) % c.recvModulus; };
  auto send = [&](int64_t t, int64_t v) {
    return (c.sendAddend + (c.sendIndex - printer + t) - v) % c.sendModulus;
  };
  std::vector<std::map<int64_t, int64_t>> slots(static_cast<size_t>(n)); // slot -> shard received
  for (int64_t v = c.lo; v < c.hi; ++v)
    for (int64_t t = 0; t < n; ++t) {
      int64_t from = recv(t, v);
      if (from < 0 || from >= n || send(from, v) != t)
        return false; // no matching send: a hang or a mixed-up pair
      int64_t slot = (v + t) % n;
      if (slot < 0 || !slots[static_cast<size_t>(t)].emplace(slot, from).second)
        return false;
    }
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < n; ++j)
      if (!slots[static_cast<size_t>(t)].count(j) || slots[static_cast<size_t>(t)][j] != j)
        return false;
  return true;
}

RandomLoopCase randomLoop(uint64_t seed) {
  std::mt19937_64 rng(seed);
  DrawFrom draw(rng);
  if (seed % 4 == 0)
    return randomRing(seed, draw);
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
