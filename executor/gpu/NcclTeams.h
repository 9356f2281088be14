// The NCCL layer of the GPU ("nccl") backend: the GPUs a process drives, their
// communicators (the world and one per team), the collectives of DESIGN
// section 3 on device buffers, and bounded waiting (DESIGN section 5).
//
// Plain C++: this header names no CUDA or NCCL type (streams and
// communicators are opaque `void *`: a cudaStream_t and an ncclComm_t), so the
// rest of the executor can include it without the toolkit's headers.
//
// Ranks. A "world rank" is a device's rank in the world communicator; the
// world has one rank per GPU of the run. A process drives the "local" ranks:
// all of them in single-process mode, its own one under mpirun. Every map and
// argument below that says "rank" means a world rank.
//
// Teams. A team communicator is the communicator whose rank i is members[i]
// (world ranks, team order). It is made by ncclCommSplit of the world
// communicator, which is collective over the whole world: every process must
// call prepareTeams with the same list in the same order before running any
// step that needs one (single-process mode also creates a missing team on
// first use). A members list equal to the world in order is the world
// communicator itself.
//
// Non-blocking. By default every communicator is created non-blocking
// (ncclConfig_t blocking = 0): no NCCL call can hold the host while a peer is
// missing; init, splits, enqueues and finalization are polled with
// ncclCommGetAsyncError against a deadline instead. When runCollective
// returns, the collective is enqueued on the local ranks' streams: work issued
// on those streams afterwards runs after it. waitAll waits for it to finish.
//
// Failure. Every failing CUDA or NCCL call throws NcclError naming the call,
// the file and line, and the library's message. An asynchronous NCCL error or
// an expired deadline aborts every communicator (ncclCommAbort) before the
// NcclError is thrown; the world is unusable afterwards (aborted() is true and
// every further call throws). Argument errors found before any NCCL call (a
// malformed NcclCall, a missing buffer) throw without aborting.
//
// Not thread-safe: one thread drives a world.
#pragma once

#include "executor/core/DeviceError.h"
#include "ir/Collectives.h"  // CollectiveType, ReduceOp
#include "ir/ElementTypes.h" // ElementType

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck::gpu {

/// A CUDA or NCCL call failed, an asynchronous NCCL error was seen, a
/// deadline expired, or a call was malformed. `what()` says which, e.g.
/// "executor/gpu/NcclCollectives.cpp:412: ncclAllGather failed: <ncclGetErrorString>
/// (<ncclGetLastError>); communicators aborted".
class NcclError : public DeviceError {
public:
  using DeviceError::DeviceError;
};

/// How communicators are made and how long the host waits for NCCL.
struct NcclOptions {
  /// Non-blocking communicators (recommended; see the file comment). false:
  /// blocking ones (single-process mode through ncclCommInitAll): cheaper
  /// per call (on 2 H200s, NCCL 2.28.3, single process: a 1 MiB bf16
  /// Allreduce took about 25 us direct with blocking communicators and
  /// 65-160 us with non-blocking ones, whose every group end hands the launch
  /// to a thread), but a collective that cannot complete can then hold the
  /// host inside ncclGroupEnd, where no deadline reaches it (seen there).
  bool nonBlocking = true;
  /// Deadline for creating the world and each team (ncclCommInitRank /
  /// ncclCommInitAll / ncclCommSplit), in seconds.
  double initTimeoutSeconds = 300;
  /// Deadline for enqueuing one collective (which in multi-process mode may
  /// wait for peers to connect) and for the orderly finalization at
  /// destruction, in seconds. waitAll takes its own deadline.
  double timeoutSeconds = 30;
};

/// The GPUs this process drives and their NCCL world ranks, one non-blocking
/// CUDA stream per local rank, and the world and team communicators.
class NcclWorld {
public:
  /// One process driving every GPU listed: world rank i is gpus[i] (CUDA
  /// device ordinals, distinct). Non-blocking: ncclGetUniqueId and one
  /// ncclCommInitRankConfig per GPU inside one group (what ncclCommInitAll
  /// does, which takes no config); blocking: ncclCommInitAll.
  static std::unique_ptr<NcclWorld> singleProcess(const std::vector<int> &gpus,
                                                  const NcclOptions &options = {});

  /// One GPU per process (mpirun): this process is world rank `worldRank` of
  /// `worldSize` and drives CUDA device `gpu`. Rank 0 calls ncclGetUniqueId;
  /// `broadcastFromRank0(data, bytes)` must copy rank 0's bytes into every
  /// process's `data` (MPI_Bcast(data, bytes, MPI_BYTE, 0, MPI_COMM_WORLD)).
  /// Every process calls it exactly once, in the same order as any other
  /// collective of the caller's.
  static std::unique_ptr<NcclWorld>
  multiProcess(int worldRank, int worldSize, int gpu,
               const std::function<void(void *data, size_t bytes)> &broadcastFromRank0,
               const NcclOptions &options = {});

  /// The node-local rank from the launcher's environment:
  /// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, LOCAL_RANK (torchrun), in
  /// that order; 0 when none is set. Map it to a device as the caller sees fit
  /// (usually the local rank modulo the visible device count).
  static int localGpuFromEnvironment();

  /// Finalizes and destroys every communicator (ncclCommFinalize, polled
  /// against options().timeoutSeconds, then ncclCommDestroy), or aborts them
  /// when that fails or the world had failed; destroys the streams and frees
  /// what this layer allocated. Never throws; problems go to stderr.
  ~NcclWorld();
  NcclWorld(const NcclWorld &) = delete;
  NcclWorld &operator=(const NcclWorld &) = delete;

  /// World ranks driven by this process, ascending.
  std::vector<int> localRanks() const;
  bool isLocal(int worldRank) const;
  /// CUDA device of a local rank.
  int gpuOf(int worldRank) const;
  /// The cudaStream_t of a local rank (non-blocking, created at init).
  void *streamOf(int worldRank) const;
  int worldSize() const;
  /// True in single-process mode.
  bool drivesAllRanks() const;
  const NcclOptions &options() const;

  /// Creates every team communicator of `allTeams` that does not exist yet,
  /// in list order, by ncclCommSplit of the world (color: a stable id of the
  /// members list; key: the position in it; non-members pass
  /// NCCL_SPLIT_NOCOLOR). Collective over the world: every process calls it
  /// with the same list in the same order. In single-process mode each
  /// team's splits of all local ranks are issued inside one
  /// ncclGroupStart/ncclGroupEnd. A list equal to the world in order, or one
  /// already made, is skipped. Throws NcclError for a malformed list (empty,
  /// a rank out of range, a repeated rank).
  void prepareTeams(const std::vector<std::vector<int>> &allTeams);

  /// The ncclComm_t of local rank `worldRank` in the communicator of
  /// `members` (team rank i = members[i]), or nullptr when worldRank is not a
  /// member. A team not prepared yet is created here in single-process mode;
  /// in multi-process mode that is an NcclError (creation is collective).
  void *teamComm(int worldRank, const std::vector<int> &members);
  /// The ncclComm_t of local rank `worldRank` in the world communicator.
  void *worldComm(int worldRank) const;

  /// Aborts every communicator now (ncclCommAbort). For callers that learn
  /// of a failure some other way (e.g. agreed over MPI) and must not run the
  /// orderly finalization, which waits for every peer. Idempotent.
  void abort();
  /// True once the communicators were aborted (after an error or abort()).
  bool aborted() const;

  struct Impl;

private:
  NcclWorld();
  std::unique_ptr<Impl> impl_;
  friend struct NcclWorldAccess;
};

/// One collective call. Semantics and element counts are those of
/// executor/sim/SimCollectives.h and executor/core/CollectiveRules.h, with k = `count`, the
/// per-rank chunk:
///   Allgather     send k, recv n*k on every member
///   Gather        send k on members, recv n*k on the root only
///   Scatter       send n*k on the root, recv k on members
///   Broadcast     send k on the root, recv k on members (the root too when
///                 it is a member)
///   AllToAll      send n*k, recv n*k (chunk i of send goes to member i)
///   Allreduce     send k, recv k
///   Reduce        send k on members, recv k on the root only
///   ReduceScatter send n*k, recv k
///   SendRecv      for each pair, `count` (or pairCounts[i]) elements from
///                 send[src] to recv[dst]; on the world communicator
///   CollectivePermute  as SendRecv, over one iteration's ring pairs (the
///                 run loop derives them, docs/plan-format.md "Rings")
///   AllToAllv     send sum_d counts[r][d], recv sum_s counts[s][r]
/// with n = team.size(). A root outside the team joins the communicator last
/// (as in MpiBackend): a Gather root only receives, a Scatter or Broadcast
/// root only sends, a Reduce root contributes the operator's identity.
struct NcclCall {
  /// DESIGN section 3's table, AllToAllv (as executor/sim/SimCollectives.h
  /// defines it) and CollectivePermute (by its pairs).
  CollectiveType kind = CollectiveType::Allgather;
  /// World ranks in team rank order (unused by SendRecv).
  std::vector<int> team;
  /// Gather, Scatter, Broadcast, Reduce: the root's world rank; it may be
  /// outside the team.
  std::optional<int> root;
  /// SendRecv, CollectivePermute: (source, destination) world ranks; source
  /// == destination is a local copy.
  std::vector<std::pair<int, int>> pairs;
  /// SendRecv: elements per pair, in `pairs` order; empty: `count` each.
  std::vector<int64_t> pairCounts;
  /// AllToAllv: counts[s][d] elements go from team rank s to team rank d.
  std::vector<std::vector<int64_t>> counts;
  /// The buffers' element type (mapped to ncclDataType_t); the reduction
  /// operator maps to ncclSum, ncclProd, ncclMax, ncclMin.
  ElementType dataType = ElementType::F32;
  ReduceOp reduceOp = ReduceOp::Sum;
  /// The per-rank chunk k (elements), as above.
  int64_t count = 0;
};

/// The communicator a call runs on, as world ranks in communicator rank
/// order: the team; the team and then a root outside it; the whole world for
/// SendRecv. What prepareTeams needs for a plan is this list for every call.
std::vector<int> communicatorMembers(const NcclCall &call, int worldSize);

/// Enqueues `call` on the streams of the local ranks that take part, inside
/// one ncclGroupStart/ncclGroupEnd (required when one process drives several
/// GPUs), and returns once NCCL has enqueued it. `send` and `recv` map LOCAL
/// world ranks to device pointers (on that rank's GPU); a rank that sends
/// needs a `send` entry and one that receives a `recv` entry (a missing one
/// is an NcclError naming it). `send` and `recv` may be the same pointer only
/// where NCCL allows in-place use (Allreduce, Broadcast, Reduce). Temporaries
/// (the identity buffer of a Reduce root outside the team) are
/// stream-ordered and freed by the stream.
void runCollective(NcclWorld &world, const NcclCall &call, const std::map<int, const void *> &send,
                   const std::map<int, void *> &recv);

/// Waits until every local stream is idle, polling cudaStreamQuery and
/// ncclCommGetAsyncError on every communicator (about every millisecond,
/// sooner at first). An asynchronous NCCL error, a CUDA error, or
/// `timeoutSeconds` expiring aborts every communicator and throws NcclError,
/// e.g. "collective did not complete within 30 s: a peer is missing or hung;
/// communicators aborted".
void waitAll(NcclWorld &world, double timeoutSeconds);

} // namespace shardcheck::gpu
