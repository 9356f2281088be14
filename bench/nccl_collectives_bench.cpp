// nccl_collectives_bench: the executor's collective path against direct NCCL.
//
// For Allgather, ReduceScatter, Allreduce, Broadcast, AllToAll, Reduce, Gather
// and Scatter over the whole world, and sizes from --min-bytes to --max-bytes
// (x4 steps), it measures
//   (a) direct NCCL: the ncclXxx call of every local rank inside one group, on
//       the same world communicators and streams, back to back (nccl-tests
//       style: no host wait between iterations), and
//   (b) the executor's path: shardcheck::gpu::runCollective + waitAll per
//       iteration (what the nccl backend does per plan step),
// each after --warmup untimed iterations, over --iters iterations (the
// synchronized direct call and the executor alternately, --rounds times,
// medians reported), timed with
// CUDA events on every local stream (the slowest rank counts), and prints
// nccl-tests style columns: size, count, type, time, algbw, busbw (nccl-tests'
// bus factors: allreduce 2(n-1)/n; allgather, reducescatter, alltoall, gather,
// scatter (n-1)/n; broadcast, reduce 1) for both, the ratio of the times
// executor/direct, and "check": whether (a) and (b) leave the same bytes in
// every defined receive buffer (sizes up to 64 MiB). Then an "alias" row: the
// alias lowering reuses the input buffer, so it moves 0 bytes and calls no
// copy; the row shows the bytes counted and the time of that no-op.
//
// Sizes follow nccl-tests: "size" is the larger buffer of a rank (Allgather
// and Gather: the output, n*k elements; ReduceScatter and Scatter: the input;
// the others: either) and "count" its elements.
//
// Modes: one process driving all visible GPUs (default; --gpus N takes the
// first N), or, when built with -DHAVE_MPI and launched under mpirun (or with
// --mpi), one GPU per process (the local rank from the launcher's
// environment, modulo the visible devices).
//
// Extra modes: --selftest checks runCollective against the table of DESIGN
// section 3 on small f64 buffers (every kind, teams in and out of order, roots
// inside and outside the team, SendRecv, AllToAllv; teams made up front by
// prepareTeams), in either mode; --fault-test (2 GPUs, either mode) checks
// that a hung collective (an unmatched send; under MPI a peer that does not
// take part) becomes an NcclError within the deadline, that the
// communicators are aborted, and that teardown does not hang.
//
// Without a CUDA device it says so and exits with status 2.
#include "executor/gpu/NcclTeams.h"

#include <cuda_runtime.h>
#include <nccl.h>
#ifdef HAVE_MPI
#define OMPI_SKIP_MPICXX 1 // the C API only
#include <mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sg = shardcheck::gpu;
using shardcheck::ReduceOp;
using shardcheck::reduceOpName;

namespace {

// ---------------------------------------------------------------- checks --

[[noreturn]] void fail(const std::string &m) {
  throw std::runtime_error(m);
}

void ckCuda(cudaError_t e, const char *expr, int line) {
  if (e != cudaSuccess)
    fail(std::string("line ") + std::to_string(line) + ": " + expr + ": " + cudaGetErrorName(e) +
         ": " + cudaGetErrorString(e));
}
ncclResult_t ckNccl(ncclResult_t r, const char *expr, int line) {
  if (r != ncclSuccess && r != ncclInProgress) {
    const char *last = ncclGetLastError(nullptr);
    fail(std::string("line ") + std::to_string(line) + ": " + expr + ": " + ncclGetErrorString(r) +
         (last && *last ? std::string(" (") + last + ")" : std::string()));
  }
  return r;
}
#define CK_CUDA(x) ckCuda((x), #x, __LINE__)
#define CK_NCCL(x) ckNccl((x), #x, __LINE__)

bool g_mpi = false;
int g_rank = 0;
[[maybe_unused]] int g_size = 1;

/// Printing: the first process only.
bool leader() {
  return g_rank == 0;
}

double maxOverProcesses(double v) {
#ifdef HAVE_MPI
  if (g_mpi) {
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
#endif
  return v;
}

bool allProcesses(bool v) {
#ifdef HAVE_MPI
  if (g_mpi) {
    int mine = v ? 1 : 0, all = 1;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
  }
#endif
  return v;
}

// ------------------------------------------------------------- arguments --

struct Args {
  size_t minBytes = size_t(1) << 20;
  size_t maxBytes = size_t(1) << 30;
  int iters = 20;
  int warmup = 5;
  int rounds = 1; // alternating (direct+sync, executor) measurements; medians
  shardcheck::ElementType dtype = shardcheck::ElementType::BF16;
  int gpus = -1; // all visible
  std::vector<std::string> ops = {"allgather", "reducescatter", "allreduce", "broadcast",
                                  "alltoall",  "reduce",        "gather",    "scatter"};
  double timeout = 30;
  bool blocking = false;
  bool selftest = false;
  bool faultTest = false;
  bool mpi = false;
};

void usage(FILE *to) {
  std::fprintf(
      to,
      "usage: nccl_collectives_bench [--min-bytes N] [--max-bytes N] [--iters N] [--warmup N]\n"
      "         [--rounds N] [--dtype bf16|f32] [--gpus N] [--ops a,b,...] [--timeout S] "
      "[--blocking]\n"
      "         [--selftest] [--fault-test] [--mpi]\n"
      "  sizes accept K, M, G suffixes (powers of 1024); defaults 1M..1G, 20 iters, 5 warmup,\n"
      "  bf16, all visible GPUs; --rounds: measure direct+sync and the executor alternately N\n"
      "  times (each --iters iterations) and report the medians, so that drift over the run\n"
      "  does not favour one side (default 1); ops: allgather reducescatter allreduce broadcast "
      "alltoall\n"
      "  reduce gather scatter; --timeout: waitAll deadline in seconds (30);\n"
      "  --blocking: blocking communicators (default non-blocking);\n"
      "  --selftest: check runCollective's results against DESIGN section 3, then exit;\n"
      "  --fault-test: check that a hung collective is aborted within the deadline, then exit;\n"
      "  --mpi: one GPU per process under mpirun (automatic when mpirun starts >1 process;\n"
      "  needs a build with -DHAVE_MPI)\n");
}

size_t parseBytes(const std::string &s) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string unit = end ? end : "";
  double m = 1;
  if (unit == "K" || unit == "k" || unit == "KiB")
    m = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    m = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    m = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    fail("bad size '" + s + "'");
  if (!(v > 0))
    fail("bad size '" + s + "'");
  return static_cast<size_t>(v * m);
}

int parseInt(const std::string &s, int lo) {
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (!end || *end || v < lo || v > 1000000000)
    fail("bad number '" + s + "'");
  return static_cast<int>(v);
}

Args parseArgs(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail(f + " needs a value");
      return argv[++i];
    };
    if (f == "--min-bytes")
      a.minBytes = parseBytes(value());
    else if (f == "--max-bytes")
      a.maxBytes = parseBytes(value());
    else if (f == "--iters")
      a.iters = parseInt(value(), 1);
    else if (f == "--warmup")
      a.warmup = parseInt(value(), 0);
    else if (f == "--rounds")
      a.rounds = parseInt(value(), 1);
    else if (f == "--dtype") {
      std::string t = value();
      if (t == "bf16")
        a.dtype = shardcheck::ElementType::BF16;
      else if (t == "f32")
        a.dtype = shardcheck::ElementType::F32;
      else
        fail("--dtype takes bf16 or f32");
    } else if (f == "--gpus")
      a.gpus = parseInt(value(), 1);
    else if (f == "--ops") {
      a.ops.clear();
      std::stringstream ss(value());
      std::string op;
      while (std::getline(ss, op, ','))
        if (!op.empty())
          a.ops.push_back(op);
    } else if (f == "--timeout")
      a.timeout = parseInt(value(), 1);
    else if (f == "--blocking")
      a.blocking = true;
    else if (f == "--selftest")
      a.selftest = true;
    else if (f == "--fault-test")
      a.faultTest = true;
    else if (f == "--mpi")
      a.mpi = true;
    else if (f == "-h" || f == "--help") {
      usage(stdout);
      std::exit(0);
    } else
      fail("unknown argument '" + f + "'");
  }
  if (a.minBytes > a.maxBytes)
    fail("--min-bytes is larger than --max-bytes");
  static const std::vector<std::string> known = {"allgather", "reducescatter", "allreduce",
                                                 "broadcast", "alltoall",      "reduce",
                                                 "gather",    "scatter"};
  for (const auto &op : a.ops)
    if (std::find(known.begin(), known.end(), op) == known.end())
      fail("unknown op '" + op + "'");
  return a;
}

std::string versionText(int code) {
  int major, minor, patch;
  if (code >= 10000)
    major = code / 10000, minor = (code % 10000) / 100, patch = code % 100;
  else
    major = code / 1000, minor = (code % 1000) / 100, patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string cudaVersionText(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// ----------------------------------------------------------------- world --

struct Bench {
  Args args;
  std::unique_ptr<sg::NcclWorld> world;
  std::vector<int> ranks;
  std::vector<void *> sendBuf, recvBuf; // per local index, maxBytes each
  std::vector<cudaEvent_t> start, stop; // per local index
  size_t bufferBytes = 0;

  int n() const { return world->worldSize(); }
  cudaStream_t stream(int li) const {
    return static_cast<cudaStream_t>(world->streamOf(ranks[li]));
  }
  ncclComm_t comm(int li) const { return static_cast<ncclComm_t>(world->worldComm(ranks[li])); }
  void setDevice(int li) const { CK_CUDA(cudaSetDevice(world->gpuOf(ranks[li]))); }

  ~Bench() {
    for (size_t li = 0; li < ranks.size(); ++li) {
      if (world)
        (void)cudaSetDevice(world->gpuOf(ranks[li]));
      if (li < sendBuf.size() && sendBuf[li])
        (void)cudaFree(sendBuf[li]);
      if (li < recvBuf.size() && recvBuf[li])
        (void)cudaFree(recvBuf[li]);
      if (li < start.size() && start[li])
        (void)cudaEventDestroy(start[li]);
      if (li < stop.size() && stop[li])
        (void)cudaEventDestroy(stop[li]);
    }
  }

  void allocate(size_t bytes) {
    bufferBytes = bytes;
    sendBuf.assign(ranks.size(), nullptr);
    recvBuf.assign(ranks.size(), nullptr);
    start.assign(ranks.size(), nullptr);
    stop.assign(ranks.size(), nullptr);
    for (size_t li = 0; li < ranks.size(); ++li) {
      setDevice(static_cast<int>(li));
      CK_CUDA(cudaMalloc(&sendBuf[li], bytes));
      CK_CUDA(cudaMalloc(&recvBuf[li], bytes));
      // A finite pattern per rank (no NaN or inf in bf16/f32).
      CK_CUDA(cudaMemset(sendBuf[li], 0x11 * ((ranks[li] % 7) + 1), bytes));
      CK_CUDA(cudaMemset(recvBuf[li], 0, bytes));
      CK_CUDA(cudaDeviceSynchronize()); // as in clearRecv: the fill must land first
      CK_CUDA(cudaEventCreate(&start[li]));
      CK_CUDA(cudaEventCreate(&stop[li]));
    }
  }

  /// Waits for every local stream (bounded, through the layer under test).
  void sync() { sg::waitAll(*world, args.timeout); }
  /// Plain cudaStreamSynchronize of every local stream (the direct path's
  /// per-call synchronization).
  void syncStreams() {
    for (size_t li = 0; li < ranks.size(); ++li) {
      setDevice(static_cast<int>(li));
      CK_CUDA(cudaStreamSynchronize(stream(static_cast<int>(li))));
    }
  }

  /// Runs `body` `iters` times between events on every local stream; the
  /// slowest rank's time per iteration, in microseconds.
  double timeLoop(int iters, const std::function<void()> &body) {
    for (size_t li = 0; li < ranks.size(); ++li) {
      setDevice(static_cast<int>(li));
      CK_CUDA(cudaEventRecord(start[li], stream(static_cast<int>(li))));
    }
    for (int i = 0; i < iters; ++i)
      body();
    for (size_t li = 0; li < ranks.size(); ++li) {
      setDevice(static_cast<int>(li));
      CK_CUDA(cudaEventRecord(stop[li], stream(static_cast<int>(li))));
    }
    sync();
    double worst = 0;
    for (size_t li = 0; li < ranks.size(); ++li) {
      float ms = 0;
      CK_CUDA(cudaEventElapsedTime(&ms, start[li], stop[li]));
      worst = std::max(worst, static_cast<double>(ms));
    }
    return maxOverProcesses(worst) * 1e3 / iters;
  }
};

// ------------------------------------------------------------ collectives --

/// The median of the values (the upper middle one for an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Shape {
  int64_t count = 0; // elements of the "size" buffer (nccl-tests' count)
  int64_t k = 0;     // the per-rank chunk of NcclCall
  double busFactor = 0;
};

Shape shapeOf(const std::string &op, size_t bytes, int n, size_t esz) {
  Shape s;
  int64_t elems = static_cast<int64_t>(bytes / esz);
  double nn = n;
  if (op == "allreduce") {
    s.count = elems, s.k = elems, s.busFactor = 2 * (nn - 1) / nn;
  } else if (op == "broadcast" || op == "reduce") {
    s.count = elems, s.k = elems, s.busFactor = 1;
  } else { // allgather, reducescatter, alltoall, gather, scatter
    s.count = elems / n * n, s.k = elems / n, s.busFactor = (nn - 1) / nn;
  }
  return s;
}

/// (a): the NCCL calls themselves, every local rank in one group.
void enqueueDirect(Bench &b, const std::string &op, const Shape &s, ncclDataType_t dt) {
  const int root = 0;
  CK_NCCL(ncclGroupStart());
  for (size_t li = 0; li < b.ranks.size(); ++li) {
    int l = static_cast<int>(li);
    ncclComm_t c = b.comm(l);
    cudaStream_t st = b.stream(l);
    const void *sb = b.sendBuf[li];
    void *rb = b.recvBuf[li];
    size_t k = static_cast<size_t>(s.k);
    if (op == "allgather")
      CK_NCCL(ncclAllGather(sb, rb, k, dt, c, st));
    else if (op == "reducescatter")
      CK_NCCL(ncclReduceScatter(sb, rb, k, dt, ncclSum, c, st));
    else if (op == "allreduce")
      CK_NCCL(ncclAllReduce(sb, rb, k, dt, ncclSum, c, st));
    else if (op == "broadcast")
      CK_NCCL(ncclBroadcast(sb, rb, k, dt, root, c, st));
    else if (op == "reduce")
      CK_NCCL(ncclReduce(sb, rb, k, dt, ncclSum, root, c, st));
    else if (op == "alltoall")
      CK_NCCL(ncclAlltoAll(sb, rb, k, dt, c, st));
    else if (op == "gather")
      CK_NCCL(ncclGather(sb, rb, k, dt, root, c, st));
    else if (op == "scatter")
      CK_NCCL(ncclScatter(sb, rb, k, dt, root, c, st));
  }
  ncclResult_t r = CK_NCCL(ncclGroupEnd());
  if (r == ncclInProgress) { // Non-blocking: wait until NCCL has enqueued.
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(b.args.timeout);
    for (size_t li = 0; li < b.ranks.size(); ++li) {
      for (;;) {
        ncclResult_t state = ncclSuccess;
        CK_NCCL(ncclCommGetAsyncError(b.comm(static_cast<int>(li)), &state));
        if (state == ncclSuccess)
          break;
        if (state != ncclInProgress)
          fail(std::string("direct ") + op + ": " + ncclGetErrorString(state));
        if (std::chrono::steady_clock::now() > deadline)
          fail("direct " + op + ": enqueue did not complete");
        std::this_thread::yield();
      }
    }
  }
}

sg::NcclCall executorCall(const std::string &op, const Shape &s, int n,
                          shardcheck::ElementType dt) {
  sg::NcclCall c;
  static const std::map<std::string, shardcheck::CollectiveType> kinds = {
      {"allgather", shardcheck::CollectiveType::Allgather},
      {"reducescatter", shardcheck::CollectiveType::ReduceScatter},
      {"allreduce", shardcheck::CollectiveType::Allreduce},
      {"broadcast", shardcheck::CollectiveType::Broadcast},
      {"reduce", shardcheck::CollectiveType::Reduce},
      {"alltoall", shardcheck::CollectiveType::AllToAll},
      {"gather", shardcheck::CollectiveType::Gather},
      {"scatter", shardcheck::CollectiveType::Scatter}};
  c.kind = kinds.at(op);
  for (int r = 0; r < n; ++r)
    c.team.push_back(r);
  if (op == "broadcast" || op == "reduce" || op == "gather" || op == "scatter")
    c.root = 0;
  c.dataType = dt;
  c.reduceOp = ReduceOp::Sum;
  c.count = s.k;
  return c;
}

/// Bytes of the receive buffer of world rank `rank` that the collective
/// defines (0: it receives nothing).
size_t definedRecvBytes(const std::string &op, const Shape &s, int rank, size_t esz) {
  bool root = rank == 0;
  if (op == "reducescatter" || op == "scatter")
    return static_cast<size_t>(s.k) * esz;
  if (op == "reduce" || op == "gather")
    return root ? static_cast<size_t>(s.count) * esz : 0;
  return static_cast<size_t>(s.count) * esz;
}

/// (b): the executor's path for one step.
void runExecutor(Bench &b, const sg::NcclCall &call) {
  std::map<int, const void *> send;
  std::map<int, void *> recv;
  for (size_t li = 0; li < b.ranks.size(); ++li) {
    send[b.ranks[li]] = b.sendBuf[li];
    recv[b.ranks[li]] = b.recvBuf[li];
  }
  sg::runCollective(*b.world, call, send, recv);
  sg::waitAll(*b.world, b.args.timeout);
}

std::vector<std::vector<unsigned char>> snapshot(Bench &b, const std::string &op, const Shape &s,
                                                 size_t esz) {
  std::vector<std::vector<unsigned char>> out(b.ranks.size());
  for (size_t li = 0; li < b.ranks.size(); ++li) {
    size_t bytes = definedRecvBytes(op, s, b.ranks[li], esz);
    out[li].resize(bytes);
    if (bytes) {
      b.setDevice(static_cast<int>(li));
      CK_CUDA(cudaMemcpy(out[li].data(), b.recvBuf[li], bytes, cudaMemcpyDeviceToHost));
    }
  }
  return out;
}

void clearRecv(Bench &b) {
  for (size_t li = 0; li < b.ranks.size(); ++li) {
    b.setDevice(static_cast<int>(li));
    CK_CUDA(cudaMemset(b.recvBuf[li], 0xEE, b.bufferBytes));
    // cudaMemset runs on the legacy stream and may return before it is done;
    // the communicators' streams are non-blocking and do not wait for it.
    CK_CUDA(cudaDeviceSynchronize());
  }
}

// ----------------------------------------------------------------- alias --

/// The alias lowering as the executor does it: the consumer's buffer is the
/// producer's. Any copy would go through `copy`, which counts.
struct CopyCounter {
  size_t calls = 0, bytes = 0;
};
void *lowerAlias(void *producerBuffer, size_t /*bytes*/, CopyCounter & /*copy*/) {
  return producerBuffer; // reuse: no cudaMemcpy, nothing moves
}

void aliasRow(Bench &b, size_t bytes) {
  CopyCounter counter;
  bool same = true;
  auto t0 = std::chrono::steady_clock::now();
  double gpuUs = b.timeLoop(b.args.iters, [&] {
    for (size_t li = 0; li < b.ranks.size(); ++li)
      same = same && lowerAlias(b.sendBuf[li], bytes, counter) == b.sendBuf[li];
  });
  double hostUs =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      b.args.iters;
  same = allProcesses(same && counter.calls == 0 && counter.bytes == 0);
  if (leader())
    std::printf("  %-13s %12zu %12s %5s   bytes moved %zu, copies %zu, output %s input; no-op "
                "%.2f us (events), %.3f us (host)\n",
                "alias", bytes, "-", "-", counter.bytes, counter.calls, same ? "is" : "IS NOT",
                gpuUs, hostUs);
  if (!same)
    fail("the alias path moved data");
}

// ------------------------------------------------------------- benchmark --

int runBench(Bench &b) {
  const size_t esz = shardcheck::elementSize(b.args.dtype);
  const ncclDataType_t dt =
      b.args.dtype == shardcheck::ElementType::BF16 ? ncclBfloat16 : ncclFloat32;
  const int n = b.n();
  b.allocate(b.args.maxBytes);
  if (leader()) {
    std::printf(
        "# direct: the NCCL call enqueued back to back (nccl-tests style); direct+sync:\n"
        "# the same call, the stream synchronized after each (what a plan step does);\n"
        "# executor: runCollective + waitAll, the executor's path for one step.\n"
        "# ratio = executor busbw / direct+sync busbw (the target: >= 0.95 at >= 64 MiB).\n");
    std::printf("#\n# %-13s %12s %12s %5s | %10s %8s %8s | %10s %8s | %10s %8s %8s | %6s %5s\n", "",
                "", "", "", "direct", "", "", "dir+sync", "", "executor", "", "", "", "");
    std::printf("# %-13s %12s %12s %5s | %10s %8s %8s | %10s %8s | %10s %8s %8s | %6s %5s\n",
                "collective", "size(B)", "count", "type", "time(us)", "algbw", "busbw", "time(us)",
                "busbw", "time(us)", "algbw", "busbw", "ratio", "check");
  }
  int mismatches = 0;
  for (const std::string &op : b.args.ops) {
    for (size_t bytes = b.args.minBytes; bytes <= b.args.maxBytes; bytes *= 4) {
      Shape s = shapeOf(op, bytes, n, esz);
      if (s.k == 0)
        continue;
      sg::NcclCall call = executorCall(op, s, n, b.args.dtype);
      size_t size = static_cast<size_t>(s.count) * esz;

      // Do (a) and (b) leave the same bytes? (Same NCCL calls underneath.)
      std::string check = "-";
      if (size <= (size_t(64) << 20)) {
        clearRecv(b);
        enqueueDirect(b, op, s, dt);
        b.sync();
        auto direct = snapshot(b, op, s, esz);
        clearRecv(b);
        runExecutor(b, call);
        auto executor = snapshot(b, op, s, esz);
        bool same = allProcesses(direct == executor);
        check = same ? "ok" : "DIFF";
        mismatches += same ? 0 : 1;
      }

      for (int i = 0; i < b.args.warmup; ++i)
        enqueueDirect(b, op, s, dt);
      b.sync();
      double tDirect = b.timeLoop(b.args.iters, [&] { enqueueDirect(b, op, s, dt); });
      for (int i = 0; i < b.args.warmup; ++i)
        runExecutor(b, call);
      // direct+sync and the executor alternate, round by round: a drift of
      // the machine over the run then shows up on both sides.
      std::vector<double> directSync, executor;
      for (int r = 0; r < b.args.rounds; ++r) {
        directSync.push_back(b.timeLoop(b.args.iters, [&] {
          enqueueDirect(b, op, s, dt);
          b.syncStreams();
        }));
        executor.push_back(b.timeLoop(b.args.iters, [&] { runExecutor(b, call); }));
      }
      double tDirectSync = median(directSync), tExec = median(executor);

      if (leader()) {
        double algD = size / (tDirect * 1e-6) / 1e9, algE = size / (tExec * 1e-6) / 1e9;
        double algS = size / (tDirectSync * 1e-6) / 1e9;
        std::printf("  %-13s %12zu %12" PRId64 " %5s | %10.1f %8.2f %8.2f | %10.1f %8.2f | %10.1f "
                    "%8.2f %8.2f | %6.3f %5s\n",
                    op.c_str(), size, s.count, shardcheck::elementTypeName(b.args.dtype), tDirect,
                    algD, algD * s.busFactor, tDirectSync, algS * s.busFactor, tExec, algE,
                    algE * s.busFactor, tDirectSync / tExec, check.c_str());
        std::fflush(stdout);
      }
      if (bytes > b.args.maxBytes / 4)
        break; // No overflow on the last step.
    }
  }
  aliasRow(b, b.args.minBytes);
  if (mismatches && leader())
    std::printf("# %d size(s) where direct NCCL and the executor's path disagree\n", mismatches);
  return mismatches ? 1 : 0;
}

// -------------------------------------------------------------- selftest --

/// One self-test case: a call, its inputs, and the reference results from
/// DESIGN section 3's table (written here from the table, like the sim).
struct Case {
  std::string name;
  sg::NcclCall call;
};

double reduceValues(ReduceOp op, const std::vector<double> &v) {
  double acc = v.at(0);
  for (size_t i = 1; i < v.size(); ++i) {
    switch (op) {
    case ReduceOp::Sum:
      acc += v[i];
      break;
    case ReduceOp::Prod:
      acc *= v[i];
      break;
    case ReduceOp::Max:
      acc = std::max(acc, v[i]);
      break;
    case ReduceOp::Min:
      acc = std::min(acc, v[i]);
      break;
    }
  }
  return acc;
}

/// Input and output element counts of every world rank for `c`.
void bufferSizes(const sg::NcclCall &c, int world, std::vector<int64_t> &in,
                 std::vector<int64_t> &out) {
  in.assign(world, 0);
  out.assign(world, 0);
  int64_t n = static_cast<int64_t>(c.team.size()), k = c.count;
  auto member = [&](int d) { return std::find(c.team.begin(), c.team.end(), d) != c.team.end(); };
  for (int d = 0; d < world; ++d) {
    bool m = member(d), root = c.root && *c.root == d;
    switch (c.kind) {
    case shardcheck::CollectiveType::Allgather:
      in[d] = m ? k : 0, out[d] = m ? n * k : 0;
      break;
    case shardcheck::CollectiveType::Gather:
      in[d] = m ? k : 0, out[d] = root ? n * k : 0;
      break;
    case shardcheck::CollectiveType::Scatter:
      in[d] = root ? n * k : 0, out[d] = m ? k : 0;
      break;
    case shardcheck::CollectiveType::Broadcast:
      in[d] = root ? k : 0, out[d] = m ? k : 0;
      break;
    case shardcheck::CollectiveType::AllToAll:
      in[d] = out[d] = m ? n * k : 0;
      break;
    case shardcheck::CollectiveType::Allreduce:
      in[d] = out[d] = m ? k : 0;
      break;
    case shardcheck::CollectiveType::Reduce:
      in[d] = m ? k : 0, out[d] = root ? k : 0;
      break;
    case shardcheck::CollectiveType::ReduceScatter:
      in[d] = m ? n * k : 0, out[d] = m ? k : 0;
      break;
    case shardcheck::CollectiveType::SendRecv:
      for (size_t i = 0; i < c.pairs.size(); ++i) {
        int64_t cnt = c.pairCounts.empty() ? k : c.pairCounts[i];
        if (c.pairs[i].first == d)
          in[d] = std::max(in[d], cnt);
        if (c.pairs[i].second == d)
          out[d] = std::max(out[d], cnt);
      }
      break;
    case shardcheck::CollectiveType::AllToAllv: {
      auto it = std::find(c.team.begin(), c.team.end(), d);
      if (it == c.team.end())
        break;
      size_t r = static_cast<size_t>(it - c.team.begin());
      for (size_t j = 0; j < c.team.size(); ++j)
        in[d] += c.counts[r][j], out[d] += c.counts[j][r];
      break;
    }
    case shardcheck::CollectiveType::CollectivePermute: // No NcclCall runs one.
      break;
    }
  }
}

/// The reference: what every output buffer must hold afterwards (untouched
/// buffers keep their sentinel).
std::vector<std::vector<double>> reference(const sg::NcclCall &c,
                                           const std::vector<std::vector<double>> &in,
                                           std::vector<std::vector<double>> out) {
  int64_t n = static_cast<int64_t>(c.team.size()), k = c.count;
  auto r = [&](int d) {
    return static_cast<int64_t>(std::find(c.team.begin(), c.team.end(), d) - c.team.begin());
  };
  auto over = [&](auto at) {
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i)
      v.push_back(at(i));
    return reduceValues(c.reduceOp, v);
  };
  switch (c.kind) {
  case shardcheck::CollectiveType::Allgather:
  case shardcheck::CollectiveType::Gather:
    for (int d : c.team)
      if (c.kind == shardcheck::CollectiveType::Allgather || d == *c.root)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t t = 0; t < k; ++t)
            out[d][i * k + t] = in[c.team[i]][t];
    if (c.kind == shardcheck::CollectiveType::Gather &&
        std::find(c.team.begin(), c.team.end(), *c.root) == c.team.end())
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < k; ++t)
          out[*c.root][i * k + t] = in[c.team[i]][t];
    break;
  case shardcheck::CollectiveType::Scatter:
    for (int d : c.team)
      for (int64_t t = 0; t < k; ++t)
        out[d][t] = in[*c.root][r(d) * k + t];
    break;
  case shardcheck::CollectiveType::Broadcast:
    for (int d : c.team)
      for (int64_t t = 0; t < k; ++t)
        out[d][t] = in[*c.root][t];
    break;
  case shardcheck::CollectiveType::AllToAll:
    for (int d : c.team)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < k; ++t)
          out[d][i * k + t] = in[c.team[i]][r(d) * k + t];
    break;
  case shardcheck::CollectiveType::Allreduce:
    for (int d : c.team)
      for (int64_t t = 0; t < k; ++t)
        out[d][t] = over([&](int64_t i) { return in[c.team[i]][t]; });
    break;
  case shardcheck::CollectiveType::Reduce:
    for (int64_t t = 0; t < k; ++t)
      out[*c.root][t] = over([&](int64_t i) { return in[c.team[i]][t]; });
    break;
  case shardcheck::CollectiveType::ReduceScatter:
    for (int d : c.team)
      for (int64_t t = 0; t < k; ++t)
        out[d][t] = over([&](int64_t i) { return in[c.team[i]][r(d) * k + t]; });
    break;
  case shardcheck::CollectiveType::SendRecv:
    for (size_t p = 0; p < c.pairs.size(); ++p) {
      int64_t cnt = c.pairCounts.empty() ? k : c.pairCounts[p];
      for (int64_t t = 0; t < cnt; ++t)
        out[c.pairs[p].second][t] = in[c.pairs[p].first][t];
    }
    break;
  case shardcheck::CollectiveType::AllToAllv:
    for (size_t dr = 0; dr < c.team.size(); ++dr) {
      int64_t at = 0;
      for (size_t sr = 0; sr < c.team.size(); ++sr) {
        int64_t from = 0;
        for (size_t j = 0; j < dr; ++j)
          from += c.counts[sr][j];
        for (int64_t t = 0; t < c.counts[sr][dr]; ++t)
          out[c.team[dr]][at + t] = in[c.team[sr]][from + t];
        at += c.counts[sr][dr];
      }
    }
    break;
  case shardcheck::CollectiveType::CollectivePermute: // No NcclCall runs one.
    break;
  }
  return out;
}

std::vector<Case> selftestCases(int world) {
  std::vector<Case> cases;
  std::vector<int> all(world);
  for (int r = 0; r < world; ++r)
    all[r] = r;
  std::vector<int> reversed(all.rbegin(), all.rend());
  std::vector<std::pair<std::string, std::vector<int>>> teams = {{"world", all}};
  if (world >= 2) {
    teams.push_back({"reversed", reversed});
    teams.push_back({"first", {0}});
    teams.push_back({"tail", std::vector<int>(all.begin() + 1, all.end())});
  }
  const shardcheck::CollectiveType kinds[] = {
      shardcheck::CollectiveType::Allgather, shardcheck::CollectiveType::Gather,
      shardcheck::CollectiveType::Scatter,   shardcheck::CollectiveType::Broadcast,
      shardcheck::CollectiveType::AllToAll,  shardcheck::CollectiveType::Allreduce,
      shardcheck::CollectiveType::Reduce,    shardcheck::CollectiveType::ReduceScatter};
  for (int64_t k : {int64_t(3), int64_t(40001)}) {
    for (const auto &[teamName, team] : teams) {
      for (shardcheck::CollectiveType kind : kinds) {
        bool rooted = kind == shardcheck::CollectiveType::Gather ||
                      kind == shardcheck::CollectiveType::Scatter ||
                      kind == shardcheck::CollectiveType::Broadcast ||
                      kind == shardcheck::CollectiveType::Reduce;
        bool reduces = kind == shardcheck::CollectiveType::Allreduce ||
                       kind == shardcheck::CollectiveType::Reduce ||
                       kind == shardcheck::CollectiveType::ReduceScatter;
        std::vector<std::optional<int>> roots = {std::nullopt};
        if (rooted) {
          roots = {team.front(), team.back()};
          for (int r = 0; r < world; ++r) // A root outside the team.
            if (std::find(team.begin(), team.end(), r) == team.end()) {
              roots.push_back(r);
              break;
            }
        }
        std::vector<ReduceOp> ops = {ReduceOp::Sum};
        if (reduces && k == 3)
          ops = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min};
        for (auto root : roots)
          for (auto op : ops) {
            Case c;
            c.call.kind = kind;
            c.call.team = team;
            c.call.root = root;
            c.call.reduceOp = op;
            c.call.dataType = shardcheck::ElementType::F64;
            c.call.count = k;
            c.name = std::string(shardcheck::collectiveTypeName(kind)) + " team " + teamName +
                     (root ? " root " + std::to_string(*root) : "") +
                     (reduces ? std::string(" ") + reduceOpName(op) : "") + " k " +
                     std::to_string(k);
            cases.push_back(c);
          }
      }
    }
  }
  if (world >= 2) {
    Case sr;
    sr.name = "SendRecv 0->last, last->0, 0->0 with per-pair counts";
    sr.call.kind = shardcheck::CollectiveType::SendRecv;
    sr.call.dataType = shardcheck::ElementType::F64;
    sr.call.pairs = {{0, world - 1}, {world - 1, 0}};
    sr.call.pairCounts = {5, 7};
    cases.push_back(sr);
    Case self;
    self.name = "SendRecv self copies";
    self.call.kind = shardcheck::CollectiveType::SendRecv;
    self.call.dataType = shardcheck::ElementType::F64;
    self.call.count = 9;
    for (int r = 0; r < world; ++r)
      self.call.pairs.push_back({r, r});
    cases.push_back(self);
  }
  for (const auto &[teamName, team] : teams) {
    Case v;
    v.name = "AllToAllv team " + teamName;
    v.call.kind = shardcheck::CollectiveType::AllToAllv;
    v.call.dataType = shardcheck::ElementType::F64;
    v.call.team = team;
    size_t n = team.size();
    v.call.counts.assign(n, std::vector<int64_t>(n, 0));
    for (size_t s = 0; s < n; ++s)
      for (size_t d = 0; d < n; ++d)
        v.call.counts[s][d] = static_cast<int64_t>((s * 3 + d * 5) % 4); // some zero chunks
    cases.push_back(v);
  }
  return cases;
}

int runSelftest(Bench &b) {
  const int world = b.n();
  const double sentinel = -7777.0;
  int failures = 0, cases = 0;
  std::vector<Case> all = selftestCases(world);
  // Every communicator up front, the same list on every process (what the
  // nccl backend does for a plan).
  std::vector<std::vector<int>> teams;
  for (const Case &c : all)
    teams.push_back(sg::communicatorMembers(c.call, world));
  b.world->prepareTeams(teams);
  for (const Case &c : all) {
    ++cases;
    std::vector<int64_t> inSize, outSize;
    bufferSizes(c.call, world, inSize, outSize);
    // Every rank's inputs and expected outputs (cheap; each process checks
    // only its own ranks).
    std::vector<std::vector<double>> in(world), outInit(world);
    for (int d = 0; d < world; ++d) {
      // Small integers: sums, products (<= 3^8) and extremes are exact in any order.
      in[d].resize(static_cast<size_t>(std::max<int64_t>(inSize[d], 1)));
      for (size_t j = 0; j < in[d].size(); ++j)
        in[d][j] = 1.0 + static_cast<double>((d * 7 + j * 3) % 3);
      outInit[d].assign(static_cast<size_t>(std::max<int64_t>(outSize[d], 1)), sentinel);
    }
    std::vector<std::vector<double>> expected = reference(c.call, in, outInit);
    size_t local = b.ranks.size();
    std::vector<void *> dIn(local, nullptr), dOut(local, nullptr);
    std::map<int, const void *> send;
    std::map<int, void *> recv;
    for (size_t li = 0; li < local; ++li) {
      int d = b.ranks[li];
      b.setDevice(static_cast<int>(li));
      CK_CUDA(cudaMalloc(&dIn[li], in[d].size() * sizeof(double)));
      CK_CUDA(cudaMalloc(&dOut[li], outInit[d].size() * sizeof(double)));
      CK_CUDA(
          cudaMemcpy(dIn[li], in[d].data(), in[d].size() * sizeof(double), cudaMemcpyHostToDevice));
      CK_CUDA(cudaMemcpy(dOut[li], outInit[d].data(), outInit[d].size() * sizeof(double),
                         cudaMemcpyHostToDevice));
      send[d] = dIn[li];
      recv[d] = dOut[li];
    }
    std::string problem;
    try {
      sg::runCollective(*b.world, c.call, send, recv);
      sg::waitAll(*b.world, b.args.timeout);
      for (size_t li = 0; li < local && problem.empty(); ++li) {
        int d = b.ranks[li];
        std::vector<double> got(outInit[d].size()), gotIn(in[d].size());
        b.setDevice(static_cast<int>(li));
        CK_CUDA(
            cudaMemcpy(got.data(), dOut[li], got.size() * sizeof(double), cudaMemcpyDeviceToHost));
        CK_CUDA(cudaMemcpy(gotIn.data(), dIn[li], gotIn.size() * sizeof(double),
                           cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < got.size(); ++j)
          if (got[j] != expected[d][j]) {
            problem = "rank " + std::to_string(d) + " output[" + std::to_string(j) +
                      "] = " + std::to_string(got[j]) + ", expected " +
                      std::to_string(expected[d][j]);
            break;
          }
        if (problem.empty() && gotIn != in[d])
          problem = "rank " + std::to_string(d) + "'s input buffer was modified";
      }
    } catch (const std::exception &e) {
      problem = std::string("threw: ") + e.what();
    }
    for (size_t li = 0; li < local; ++li) {
      b.setDevice(static_cast<int>(li));
      CK_CUDA(cudaFree(dIn[li]));
      CK_CUDA(cudaFree(dOut[li]));
    }
    bool ok = allProcesses(problem.empty());
    if (!problem.empty() && !leader())
      std::fprintf(stderr, "process %d: %s: %s\n", g_rank, c.name.c_str(), problem.c_str());
    if (!ok)
      ++failures;
    if (leader()) {
      std::printf("%s  %s%s%s\n", ok ? "ok  " : "FAIL", c.name.c_str(), problem.empty() ? "" : ": ",
                  problem.c_str());
      std::fflush(stdout);
    }
    if (b.world->aborted()) {
      if (leader())
        std::printf("the world was aborted; stopping\n");
      return 1;
    }
  }
  if (leader())
    std::printf("# selftest: %d case(s), %d failure(s)\n", cases, failures);
  return failures ? 1 : 0;
}

// ------------------------------------------------------------ fault test --

/// Exits the process if a stage does not finish in time (a hung abort must
/// not hang the test).
class Watchdog {
public:
  Watchdog(double seconds, std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      while (!done_.load()) {
        if (std::chrono::steady_clock::now() > end) {
          std::fprintf(stderr, "FAIL  fault test: %s did not finish; exiting\n", what_.c_str());
          std::_Exit(3);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~Watchdog() {
    done_ = true;
    thread_.join();
  }

private:
  std::string what_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// A collective that cannot complete: the executor's waitAll must give up
/// after its deadline, abort, and say so; the world must refuse further work
/// and be destroyed without hanging. `kernelsHang`: ranks 0 and 1 each send
/// 64 MiB to the other and nobody receives (too large for NCCL's buffers, so
/// both kernels spin). Otherwise: rank 0 alone sends on a fresh world, so the
/// connection setup waits for a peer that never comes. (A send on one rank
/// only, after the connection exists, is never launched in single-process
/// mode: NCCL apparently holds it until the clique's other ranks join a launch,
/// so the streams stay idle; seen with NCCL 2.28.3. That case cannot arise
/// from runCollective, which issues every local rank's part in one group.)
bool faultCase(const std::vector<int> &gpus, const sg::NcclOptions &options, bool kernelsHang,
               const char *name) {
  const double deadline = 3;
  const size_t elems = size_t(16) << 20; // 64 MiB of f32
  Watchdog dog(120, name);
  auto world = sg::NcclWorld::singleProcess(gpus, options);
  void *buf[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) {
    CK_CUDA(cudaSetDevice(world->gpuOf(r)));
    CK_CUDA(cudaMalloc(&buf[r], elems * sizeof(float)));
  }
  auto comm = [&](int r) { return static_cast<ncclComm_t>(world->worldComm(r)); };
  auto stream = [&](int r) { return static_cast<cudaStream_t>(world->streamOf(r)); };
  if (kernelsHang) { // A matched pair first: the connections exist.
    sg::NcclCall ok;
    ok.kind = shardcheck::CollectiveType::SendRecv;
    ok.dataType = shardcheck::ElementType::F32;
    ok.count = static_cast<int64_t>(elems);
    ok.pairs = {{0, 1}};
    sg::runCollective(*world, ok, {{0, buf[0]}}, {{1, buf[1]}});
    sg::waitAll(*world, 30);
  }
  std::fprintf(stderr, "  [%s] enqueuing the collective that cannot complete\n", name);
  CK_NCCL(ncclGroupStart());
  CK_NCCL(ncclSend(buf[0], elems, ncclFloat32, 1, comm(0), stream(0)));
  if (kernelsHang)
    CK_NCCL(ncclSend(buf[1], elems, ncclFloat32, 0, comm(1), stream(1)));
  CK_NCCL(ncclGroupEnd());
  std::fprintf(stderr, "  [%s] enqueued; waitAll with a %g s deadline\n", name, deadline);
  auto t0 = std::chrono::steady_clock::now();
  std::string message;
  try {
    sg::waitAll(*world, deadline);
  } catch (const sg::NcclError &e) {
    message = e.what();
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "  [%s] waitAll returned after %.1f s; tearing down\n", name, took);
  bool good = !message.empty() && world->aborted() &&
              message.find("did not complete within") != std::string::npos && took < deadline + 30;
  bool rejected = false;
  try {
    sg::waitAll(*world, 1);
  } catch (const sg::NcclError &) {
    rejected = true;
  }
  good = good && rejected;
  auto t1 = std::chrono::steady_clock::now();
  world.reset(); // Streams destroyed; communicators already aborted.
  for (int r = 0; r < 2; ++r) {
    CK_CUDA(cudaSetDevice(gpus[r]));
    CK_CUDA(cudaFree(buf[r]));
  }
  double teardown = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("%s  %s: error after %.1f s, teardown %.1f s, \"%s\"\n", good ? "ok  " : "FAIL", name,
              took, teardown, message.c_str());
  std::fflush(stdout);
  return good;
}

#ifdef HAVE_MPI
/// Multi-process: rank 1 does not take part in an Allreduce (a missing
/// peer); rank 0's waitAll must fail within the deadline and abort. The
/// processes then agree over MPI and rank 1 aborts too (as the nccl backend
/// would after agreeing on the failure), and both tear down without hanging.
int runFaultTestMpi(int devices, const sg::NcclOptions &options) {
  const double deadline = 3;
  Watchdog dog(120, "missing peer");
  int gpu = sg::NcclWorld::localGpuFromEnvironment() % devices;
  auto world = sg::NcclWorld::multiProcess(
      g_rank, g_size, gpu,
      [](void *data, size_t bytes) {
        MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
      },
      options);
  const size_t elems = size_t(16) << 20;
  void *buf = nullptr;
  CK_CUDA(cudaSetDevice(gpu));
  CK_CUDA(cudaMalloc(&buf, elems * sizeof(float)));
  CK_CUDA(cudaMemset(buf, 0, elems * sizeof(float)));
  sg::NcclCall all;
  all.kind = shardcheck::CollectiveType::Allreduce;
  for (int r = 0; r < g_size; ++r)
    all.team.push_back(r);
  all.dataType = shardcheck::ElementType::F32;
  all.count = static_cast<int64_t>(elems);
  sg::runCollective(*world, all, {{g_rank, buf}}, {{g_rank, buf}}); // warm: both take part
  sg::waitAll(*world, 30);
  std::string message;
  auto t0 = std::chrono::steady_clock::now();
  if (g_rank == 0) {
    try {
      sg::runCollective(*world, all, {{0, buf}}, {{0, buf}});
      sg::waitAll(*world, deadline);
    } catch (const sg::NcclError &e) {
      message = e.what();
    }
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(deadline + 2));
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int failed = message.empty() ? 0 : 1, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyFailed)
    world->abort(); // Everyone: the orderly finalize would wait for aborted peers.
  bool good = g_rank != 0 ||
              (world->aborted() && message.find("did not complete within") != std::string::npos &&
               took < deadline + 30);
  good = good && anyFailed && world->aborted();
  auto t1 = std::chrono::steady_clock::now();
  world.reset();
  CK_CUDA(cudaFree(buf));
  double teardown = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("%s  process %d, missing peer: %.1f s, teardown %.1f s%s%s%s\n",
              good ? "ok  " : "FAIL", g_rank, took, teardown, message.empty() ? "" : ", \"",
              message.c_str(), message.empty() ? "" : "\"");
  std::fflush(stdout);
  bool allOk = allProcesses(good);
  if (leader())
    std::printf("# fault test: %s\n", allOk ? "ok" : "FAILED");
  return allOk ? 0 : 1;
}
#endif

int runFaultTest(const std::vector<int> &gpus, const sg::NcclOptions &options) {
  if (gpus.size() < 2) {
    std::printf("# fault test needs 2 GPUs\n");
    return 1;
  }
  if (!options.nonBlocking) {
    // Seen on 2 H200s with NCCL 2.28.3: with blocking communicators the
    // host stays inside ncclGroupEnd for both cases, so nothing can time out.
    std::printf("# fault test skipped: blocking communicators hold the host inside "
                "ncclGroupEnd when a collective cannot complete; run it without --blocking\n");
    return 0;
  }
  std::vector<int> two = {gpus[0], gpus[1]};
  bool a = faultCase(two, options, true, "sends nobody receives, kernels hang");
  bool b = faultCase(two, options, false, "unmatched send, connection setup hangs");
  std::printf("# fault test: %s\n", a && b ? "ok" : "FAILED");
  return a && b ? 0 : 1;
}

// ------------------------------------------------------------------ main --

void printHeader(const Bench &b) {
  int ncclRuntime = 0, cudaRuntime = 0, cudaDriver = 0;
  CK_NCCL(ncclGetVersion(&ncclRuntime));
  CK_CUDA(cudaRuntimeGetVersion(&cudaRuntime));
  CK_CUDA(cudaDriverGetVersion(&cudaDriver));
  std::vector<std::string> lines;
  for (int r : b.ranks) {
    int gpu = b.world->gpuOf(r);
    cudaDeviceProp p;
    CK_CUDA(cudaGetDeviceProperties(&p, gpu));
    char bus[64];
    CK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), gpu));
    char line[512];
    std::snprintf(line, sizeof(line), "#   rank %d: GPU %d %s (sm_%d%d, %.1f GiB, %s)", r, gpu,
                  p.name, p.major, p.minor, p.totalGlobalMem / double(1 << 30), bus);
    lines.push_back(line);
  }
#ifdef HAVE_MPI
  if (g_mpi) { // Every process's GPU, printed by the first.
    char mine[512] = {0};
    std::snprintf(mine, sizeof(mine), "%s", lines.empty() ? "" : lines[0].c_str());
    std::vector<char> all(leader() ? 512 * g_size : 1);
    MPI_Gather(mine, 512, MPI_CHAR, all.data(), 512, MPI_CHAR, 0, MPI_COMM_WORLD);
    lines.clear();
    if (leader())
      for (int i = 0; i < g_size; ++i)
        lines.emplace_back(all.data() + 512 * i);
  }
#endif
  if (!leader())
    return;
  std::printf("# nccl_collectives_bench: direct NCCL vs shardcheck's runCollective + waitAll\n");
  std::printf("# NCCL %s (library), built against %s\n", versionText(ncclRuntime).c_str(),
              versionText(NCCL_VERSION_CODE).c_str());
  std::printf("# CUDA runtime %s, driver %s\n", cudaVersionText(cudaRuntime).c_str(),
              cudaVersionText(cudaDriver).c_str());
  std::printf("# mode: %s, %d rank(s), %s communicators; iters %d, warmup %d, rounds %d "
              "(medians), dtype %s, waitAll deadline %g s\n",
              g_mpi ? "one process per GPU (MPI)" : "single process", b.n(),
              b.args.blocking ? "blocking" : "non-blocking", b.args.iters, b.args.warmup,
              b.args.rounds, shardcheck::elementTypeName(b.args.dtype), b.args.timeout);
  for (const auto &l : lines)
    std::printf("%s\n", l.c_str());
  std::fflush(stdout);
}

int realMain(int argc, char **argv) {
  Args args;
  try {
    args = parseArgs(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nccl_collectives_bench: %s\n", e.what());
    usage(stderr);
    return 2;
  }

  bool wantMpi = args.mpi;
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *s = std::getenv(v); s && std::atoi(s) > 1)
      wantMpi = true;
#ifdef HAVE_MPI
  if (wantMpi) {
    MPI_Init(&argc, &argv);
    g_mpi = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  }
#else
  if (wantMpi) {
    std::fprintf(stderr, "nccl_collectives_bench: started as several processes (or with --mpi), "
                         "but this build has no MPI support (build with -DHAVE_MPI)\n");
    return 2;
  }
#endif

  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    if (leader())
      std::fprintf(stderr, "nccl_collectives_bench: no CUDA device: %s\n",
                   e != cudaSuccess
                       ? (std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)).c_str()
                       : "cudaGetDeviceCount reports 0 devices");
    return 2;
  }

  sg::NcclOptions options;
  options.nonBlocking = !args.blocking;
  std::vector<int> gpus;
  int use = args.gpus > 0 ? args.gpus : devices;
  if (!g_mpi && use > devices) {
    std::fprintf(stderr, "nccl_collectives_bench: --gpus %d but only %d visible\n", use, devices);
    return 2;
  }
  for (int g = 0; g < use; ++g)
    gpus.push_back(g);

  if (args.faultTest) {
#ifdef HAVE_MPI
    if (g_mpi)
      return runFaultTestMpi(devices, options);
#endif
    return runFaultTest(gpus, options);
  }

  Bench b;
  b.args = args;
  if (g_mpi) {
#ifdef HAVE_MPI
    int gpu = sg::NcclWorld::localGpuFromEnvironment() % devices;
    b.world = sg::NcclWorld::multiProcess(
        g_rank, g_size, gpu,
        [](void *data, size_t bytes) {
          MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
        },
        options);
#endif
  } else {
    b.world = sg::NcclWorld::singleProcess(gpus, options);
  }
  b.ranks = b.world->localRanks();
  printHeader(b);
  if (args.selftest)
    return runSelftest(b);
  return runBench(b);
}

} // namespace

int main(int argc, char **argv) {
  int status = 0;
  try {
    status = realMain(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nccl_collectives_bench: error: %s\n", e.what());
    status = 1;
#ifdef HAVE_MPI
    if (g_mpi)
      MPI_Abort(MPI_COMM_WORLD, status);
#endif
  }
#ifdef HAVE_MPI
  if (g_mpi) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }
#endif
  return status;
}
