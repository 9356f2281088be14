// The collectives of the GPU backend on an NcclWorld: checking a call,
// enqueuing it inside one NCCL group, and waiting for the streams; see
// NcclTeams.h.
#include "executor/gpu/NcclWorldImpl.h"

#include "executor/core/CollectiveRules.h"

namespace shardcheck::gpu {

namespace {

// ----------------------------------------------------------------- types --

ncclDataType_t ncclType(ElementType t) {
  switch (t) {
  case ElementType::F64:
    return ncclFloat64;
  case ElementType::F32:
    return ncclFloat32;
  case ElementType::F16:
    return ncclFloat16;
  case ElementType::BF16:
    return ncclBfloat16;
  case ElementType::I64:
    return ncclInt64;
  case ElementType::I32:
    return ncclInt32;
  case ElementType::I8:
    return ncclInt8;
  case ElementType::U8:
    return ncclUint8;
  }
  throw NcclError("unknown ElementType " + std::to_string(static_cast<int>(t)));
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Prod:
    return ncclProd;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  }
  throw NcclError("unknown ReduceOp " + std::to_string(static_cast<int>(op)));
}

} // namespace

// ---------------------------------------------------------- collectives --

std::vector<int> communicatorMembers(const NcclCall &call, int worldSize) {
  if (movesByPairs(call.kind)) {
    std::vector<int> all(static_cast<size_t>(std::max(worldSize, 0)));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  std::vector<int> members = call.team;
  if (isRootedCollective(call.kind) && call.root &&
      std::find(members.begin(), members.end(), *call.root) == members.end())
    members.push_back(*call.root);
  return members;
}

namespace {

std::string callText(const NcclCall &call) {
  std::string s = collectiveTypeName(call.kind);
  if (movesByPairs(call.kind)) {
    s += " of";
    for (const auto &[src, dst] : call.pairs)
      s += " " + std::to_string(src) + "->" + std::to_string(dst);
    return s;
  }
  s += " over team " + ranksText(call.team);
  if (isRootedCollective(call.kind) && call.root)
    s += " with root " + std::to_string(*call.root);
  return s;
}

/// Checks the call's shape (not its buffers). Throws NcclError.
void validateCall(const NcclCall &call, int worldSize) {
  std::string what = callText(call);
  const int64_t limit = int64_t(1) << 56;
  if (!collectiveInfo(call.kind).plan)
    throw NcclError(what + ": not a collective a plan runs");
  if (call.count < 0 || call.count > limit)
    throw NcclError(what + ": bad element count " + std::to_string(call.count));
  if (movesByPairs(call.kind)) {
    if (!call.pairCounts.empty() && call.pairCounts.size() != call.pairs.size())
      throw NcclError(what + ": " + std::to_string(call.pairCounts.size()) + " pair counts for " +
                      std::to_string(call.pairs.size()) + " pairs");
    for (size_t i = 0; i < call.pairs.size(); ++i) {
      auto [src, dst] = call.pairs[i];
      if (src < 0 || src >= worldSize || dst < 0 || dst >= worldSize)
        throw NcclError(what + ": pair " + std::to_string(src) + "->" + std::to_string(dst) +
                        " is outside the world of " + std::to_string(worldSize) + " rank(s)");
      if (!call.pairCounts.empty() && (call.pairCounts[i] < 0 || call.pairCounts[i] > limit))
        throw NcclError(what + ": bad element count " + std::to_string(call.pairCounts[i]));
    }
    return;
  }
  validateMembers(call.team, worldSize, what);
  size_t n = call.team.size();
  if (isRootedCollective(call.kind)) {
    if (!call.root)
      throw NcclError(what + ": the collective needs a root");
    if (*call.root < 0 || *call.root >= worldSize)
      throw NcclError(what + ": root " + std::to_string(*call.root) + " is outside the world of " +
                      std::to_string(worldSize) + " rank(s)");
  }
  if (call.count * static_cast<int64_t>(n) > limit)
    throw NcclError(what + ": buffers too large");
  if (call.kind == CollectiveType::AllToAllv) {
    if (call.counts.size() != n)
      throw NcclError(what + ": counts has " + std::to_string(call.counts.size()) +
                      " rows, the team " + std::to_string(n));
    for (const auto &row : call.counts) {
      if (row.size() != n)
        throw NcclError(what + ": a counts row has " + std::to_string(row.size()) +
                        " entries, the team " + std::to_string(n));
      for (int64_t c : row)
        if (c < 0 || c > limit)
          throw NcclError(what + ": bad chunk count " + std::to_string(c));
    }
  }
}

int64_t pairCount(const NcclCall &call, size_t i) {
  return call.pairCounts.empty() ? call.count : call.pairCounts[i];
}

/// Frees stream-ordered temporaries when the call is over, however it ends.
struct Temporaries {
  struct Entry {
    int gpu;
    cudaStream_t stream;
    void *ptr;
  };
  std::vector<Entry> entries;
  ~Temporaries() {
    for (const Entry &e : entries) {
      warnCuda(cudaSetDevice(e.gpu), "cudaSetDevice");
      warnCuda(cudaFreeAsync(e.ptr, e.stream), "cudaFreeAsync");
    }
  }
};

} // namespace

namespace {

/// One call's run on this process: its checks, its local work, and its
/// part of the NCCL group, one method each.
class CollectiveRun {
public:
  CollectiveRun(NcclWorld::Impl &w, const NcclCall &call, const std::map<int, const void *> &send,
                const std::map<int, void *> &recv)
      : w_(w), call_(call), send_(send), recv_(recv), what_(callText(call)),
        esz_(elementSize(call.dataType)), dt_(ncclType(call.dataType)), op_(ncclOp(call.reduceOp)),
        k_(call.count), n_(static_cast<int>(call.team.size())),
        members_(communicatorMembers(call, w.worldSize)) {
    rootInTeam_ = isRootedCollective(call.kind) &&
                  std::find(call.team.begin(), call.team.end(), *call.root) != call.team.end();
  }

  /// Buffers first: a missing one is an argument error (nothing aborted).
  void checkBuffers() const;
  /// Whether nothing moves: every process sees the same counts and skips
  /// alike.
  bool movesNothing() const {
    return !movesByPairs(call_.kind) && call_.kind != CollectiveType::AllToAllv && k_ == 0;
  }
  /// A team must be prepared in multi-process mode (its creation is
  /// collective); every process fails here alike, participant or not.
  void checkPrepared() const;
  /// Enqueues the call; an NcclError from here on aborts the world.
  void enqueue();

private:
  const void *sendOf(int rank) const {
    auto it = send_.find(rank);
    return it == send_.end() ? nullptr : it->second;
  }
  void *recvOf(int rank) const {
    auto it = recv_.find(rank);
    return it == recv_.end() ? nullptr : it->second;
  }
  void need(bool present, int rank, const char *buffer) const {
    if (!present)
      throw NcclError(what_ + ": world rank " + std::to_string(rank) + " has no " + buffer +
                      " buffer");
  }
  int position(int rank) const {
    auto it = std::find(members_.begin(), members_.end(), rank);
    return it == members_.end() ? -1 : static_cast<int>(it - members_.begin());
  }
  void checkSendRecvBuffers(int me) const;
  std::vector<ncclComm_t> communicators();
  /// Local work before the group: copies to self, identity buffers.
  void localWork(size_t li, Temporaries &temps);
  void copyToSelf(size_t li, size_t to, size_t from, int64_t count);
  /// Every local rank's part of the group.
  void enqueueGroup(const std::vector<ncclComm_t> &comms);
  /// One local rank's part of the call.
  struct Part {
    ncclComm_t comm;
    cudaStream_t s;
    const void *sb; ///< Its send buffer.
    void *rb;       ///< Its receive buffer.
    int pos;        ///< Its rank in the communicator.
    bool member, isRoot;
    int root; ///< The root's rank in the communicator.
    const void *identity;
  };
  void enqueueSendRecv(ncclComm_t comm, int me, cudaStream_t s);
  void enqueuePart(const Part &p);
  void enqueueGather(const Part &p);
  void enqueueScatter(const Part &p);
  void enqueueAllToAllv(const Part &p);

  NcclWorld::Impl &w_;
  const NcclCall &call_;
  const std::map<int, const void *> &send_;
  const std::map<int, void *> &recv_;
  const std::string what_;
  const size_t esz_;
  const ncclDataType_t dt_;
  const ncclRedOp_t op_;
  const int64_t k_;
  const int n_;
  const std::vector<int> members_;
  bool rootInTeam_ = false;
  std::vector<void *> identity_; ///< Per local index: a Reduce root's identity buffer.
  std::vector<ncclComm_t> used_;
};

void CollectiveRun::checkSendRecvBuffers(int me) const {
  for (size_t i = 0; i < call_.pairs.size(); ++i) {
    if (pairCount(call_, i) == 0)
      continue;
    if (call_.pairs[i].first == me)
      need(sendOf(me), me, "send");
    if (call_.pairs[i].second == me)
      need(recvOf(me), me, "recv");
  }
}

void CollectiveRun::checkBuffers() const {
  for (int me : w_.ranks) {
    if (movesByPairs(call_.kind)) {
      checkSendRecvBuffers(me);
      continue;
    }
    int pos = position(me);
    if (pos < 0)
      continue;
    CollectiveRole role;
    if (call_.kind == CollectiveType::AllToAllv) {
      int64_t out = 0, in = 0;
      for (int j = 0; j < n_; ++j)
        out += call_.counts[pos][j], in += call_.counts[j][pos];
      role = {out > 0, in > 0};
    } else if (k_ > 0) { // The rules' roles (executor/core/CollectiveRules.h).
      role = collectiveRole(call_.kind, pos < n_, call_.root && *call_.root == me);
    }
    if (role.sends)
      need(sendOf(me), me, "send");
    if (role.receives)
      need(recvOf(me), me, "recv");
  }
}

void CollectiveRun::checkPrepared() const {
  if (!w_.singleProcess && !movesByPairs(call_.kind) && !isWorldInOrder(members_, w_.worldSize) &&
      !w_.teamByMembers.count(members_))
    throw NcclError(what_ + ": its communicator " + ranksText(members_) +
                    " was not prepared: in multi-process mode every process must call "
                    "NcclWorld::prepareTeams with it (communicatorMembers) before running steps");
}

/// Communicators of the local participants (may create a team in
/// single-process mode).
std::vector<ncclComm_t> CollectiveRun::communicators() {
  std::vector<ncclComm_t> comms(w_.ranks.size(), nullptr);
  for (size_t li = 0; li < w_.ranks.size(); ++li) {
    if (movesByPairs(call_.kind))
      comms[li] = w_.world[li];
    else if (position(w_.ranks[li]) >= 0) {
      comms[li] = w_.commOf(static_cast<int>(li), members_);
      if (!comms[li])
        throw NcclError(what_ + ": no communicator for " + w_.rankText(static_cast<int>(li)));
    }
  }
  return comms;
}

/// Copies `count` elements on local index `li` from element `from` of its
/// send buffer to element `to` of its receive buffer.
void CollectiveRun::copyToSelf(size_t li, size_t to, size_t from, int64_t count) {
  int me = w_.ranks[li];
  SC_CUDA(cudaSetDevice(w_.gpus[li]));
  SC_CUDA(cudaMemcpyAsync(static_cast<char *>(recvOf(me)) + to * esz_,
                          static_cast<const char *>(sendOf(me)) + from * esz_,
                          static_cast<size_t>(count) * esz_, cudaMemcpyDeviceToDevice,
                          w_.streams[li]));
}

void CollectiveRun::localWork(size_t li, Temporaries &temps) {
  int me = w_.ranks[li];
  if (movesByPairs(call_.kind)) {
    for (size_t i = 0; i < call_.pairs.size(); ++i) {
      int64_t c = pairCount(call_, i);
      if (c > 0 && call_.pairs[i].first == me && call_.pairs[i].second == me)
        copyToSelf(li, 0, 0, c);
    }
  } else if (call_.kind == CollectiveType::AllToAllv) {
    int r = position(me);
    if (r >= 0 && call_.counts[r][r] > 0) {
      int64_t sendAt = 0, recvAt = 0;
      for (int j = 0; j < r; ++j)
        sendAt += call_.counts[r][j], recvAt += call_.counts[j][r];
      copyToSelf(li, static_cast<size_t>(recvAt), static_cast<size_t>(sendAt), call_.counts[r][r]);
    }
  } else if (isReductionCollective(call_.kind) && isRootedCollective(call_.kind) && !rootInTeam_ &&
             *call_.root == me) { // A Reduce root outside the team contributes the identity.
    identity_[li] = w_.identityBuffer(static_cast<int>(li), call_.dataType, call_.reduceOp, k_);
    temps.entries.push_back({w_.gpus[li], w_.streams[li], identity_[li]});
  }
}

void CollectiveRun::enqueueSendRecv(ncclComm_t comm, int me, cudaStream_t s) {
  for (size_t i = 0; i < call_.pairs.size(); ++i) {
    auto [src, dst] = call_.pairs[i];
    size_t c = static_cast<size_t>(pairCount(call_, i));
    if (c == 0 || src == dst)
      continue;
    if (src == me)
      SC_NCCL_C(ncclSend(sendOf(me), c, dt_, dst, comm, s), comm);
    if (dst == me)
      SC_NCCL_C(ncclRecv(recvOf(me), c, dt_, src, comm, s), comm);
  }
}

void CollectiveRun::enqueueGather(const Part &p) {
  size_t kk = static_cast<size_t>(k_);
  if (rootInTeam_) {
    SC_NCCL_C(ncclGather(p.sb, p.rb, kk, dt_, p.root, p.comm, p.s), p.comm);
    return;
  }
  // The root (last) only receives.
  if (p.member)
    SC_NCCL_C(ncclSend(p.sb, kk, dt_, p.root, p.comm, p.s), p.comm);
  if (p.isRoot)
    for (int i = 0; i < n_; ++i)
      SC_NCCL_C(ncclRecv(static_cast<char *>(p.rb) + i * kk * esz_, kk, dt_, i, p.comm, p.s),
                p.comm);
}

void CollectiveRun::enqueueScatter(const Part &p) {
  size_t kk = static_cast<size_t>(k_);
  if (rootInTeam_) {
    SC_NCCL_C(ncclScatter(p.sb, p.rb, kk, dt_, p.root, p.comm, p.s), p.comm);
    return;
  }
  // The root (last) only sends.
  if (p.isRoot)
    for (int i = 0; i < n_; ++i)
      SC_NCCL_C(ncclSend(static_cast<const char *>(p.sb) + i * kk * esz_, kk, dt_, i, p.comm, p.s),
                p.comm);
  if (p.member)
    SC_NCCL_C(ncclRecv(p.rb, kk, dt_, p.root, p.comm, p.s), p.comm);
}

void CollectiveRun::enqueueAllToAllv(const Part &p) {
  int64_t sendAt = 0, recvAt = 0;
  for (int j = 0; j < n_; ++j) {
    int64_t out = call_.counts[p.pos][j], in = call_.counts[j][p.pos];
    if (j != p.pos && out > 0)
      SC_NCCL_C(ncclSend(static_cast<const char *>(p.sb) + sendAt * esz_, static_cast<size_t>(out),
                         dt_, j, p.comm, p.s),
                p.comm);
    if (j != p.pos && in > 0)
      SC_NCCL_C(ncclRecv(static_cast<char *>(p.rb) + recvAt * esz_, static_cast<size_t>(in), dt_, j,
                         p.comm, p.s),
                p.comm);
    sendAt += out;
    recvAt += in;
  }
}

void CollectiveRun::enqueuePart(const Part &p) {
  size_t kk = static_cast<size_t>(k_);
  switch (call_.kind) {
  case CollectiveType::Allgather:
    SC_NCCL_C(ncclAllGather(p.sb, p.rb, kk, dt_, p.comm, p.s), p.comm);
    break;
  case CollectiveType::AllToAll:
    SC_NCCL_C(ncclAlltoAll(p.sb, p.rb, kk, dt_, p.comm, p.s), p.comm);
    break;
  case CollectiveType::Allreduce:
    SC_NCCL_C(ncclAllReduce(p.sb, p.rb, kk, dt_, op_, p.comm, p.s), p.comm);
    break;
  case CollectiveType::ReduceScatter:
    SC_NCCL_C(ncclReduceScatter(p.sb, p.rb, kk, dt_, op_, p.comm, p.s), p.comm);
    break;
  case CollectiveType::Broadcast: {
    // Non-roots receive in place; a root outside the team broadcasts in
    // place from its send buffer (NCCL writes nothing there).
    const void *from = p.isRoot ? p.sb : p.rb;
    void *to = p.member ? p.rb : const_cast<void *>(p.sb);
    SC_NCCL_C(ncclBroadcast(from, to, kk, dt_, p.root, p.comm, p.s), p.comm);
    break;
  }
  case CollectiveType::Reduce: {
    const void *from = p.member ? p.sb : p.identity;
    SC_NCCL_C(ncclReduce(from, p.isRoot ? p.rb : nullptr, kk, dt_, op_, p.root, p.comm, p.s),
              p.comm);
    break;
  }
  case CollectiveType::Gather:
    return enqueueGather(p);
  case CollectiveType::Scatter:
    return enqueueScatter(p);
  case CollectiveType::AllToAllv:
    return enqueueAllToAllv(p);
  case CollectiveType::SendRecv:
  case CollectiveType::CollectivePermute: // Per pair: enqueueSendRecv.
    break;
  }
}

void CollectiveRun::enqueueGroup(const std::vector<ncclComm_t> &comms) {
  SC_NCCL(ncclGroupStart());
  try {
    for (size_t li = 0; li < w_.ranks.size(); ++li) {
      ncclComm_t comm = comms[li];
      if (!comm)
        continue;
      int me = w_.ranks[li];
      used_.push_back(comm);
      if (movesByPairs(call_.kind)) {
        enqueueSendRecv(comm, me, w_.streams[li]);
        continue;
      }
      int pos = position(me);
      enqueuePart(Part{comm, w_.streams[li], sendOf(me), recvOf(me), pos, pos < n_,
                       call_.root && *call_.root == me, call_.root ? position(*call_.root) : 0,
                       identity_[li]});
    }
  } catch (...) {
    (void)ncclGroupEnd();
    throw;
  }
  ncclResult_t r = SC_NCCL(ncclGroupEnd());
  if (r == ncclInProgress) {
    std::vector<ncclComm_t *> slots;
    for (ncclComm_t &c : used_)
      slots.push_back(&c);
    w_.waitReady(slots, w_.options.timeoutSeconds, "enqueuing " + what_);
  }
}

void CollectiveRun::enqueue() {
  try {
    DeviceGuard guard;
    std::vector<ncclComm_t> comms = communicators();
    Temporaries temps;
    identity_.assign(w_.ranks.size(), nullptr);
    for (size_t li = 0; li < w_.ranks.size(); ++li)
      localWork(li, temps);
    enqueueGroup(comms);
  } catch (const NcclError &e) {
    w_.abortAll();
    throw NcclError(std::string(e.what()) + "; communicators aborted");
  }
}

} // namespace

void runCollective(NcclWorld &world, const NcclCall &call, const std::map<int, const void *> &send,
                   const std::map<int, void *> &recv) {
  NcclWorld::Impl &w = NcclWorldAccess::of(world);
  w.requireUsable();
  validateCall(call, w.worldSize);
  CollectiveRun run(w, call, send, recv);
  run.checkBuffers();
  if (run.movesNothing())
    return;
  run.checkPrepared();
  run.enqueue();
}

void waitAll(NcclWorld &world, double timeoutSeconds) {
  NcclWorld::Impl &w = NcclWorldAccess::of(world);
  w.requireUsable();
  std::vector<bool> idle(w.streams.size(), false);
  Poller poller(timeoutSeconds);
  try {
    for (;;) {
      bool done = true;
      // Communicators first: one leaves ncclInProgress only once its kernels
      // are on the streams, so streams read afterwards cannot look idle
      // before a pending launch.
      for (ncclComm_t *slot : w.liveSlots()) {
        ncclResult_t state = ncclSuccess;
        SC_NCCL_C(ncclCommGetAsyncError(*slot, &state), *slot);
        if (state == ncclInProgress)
          done = false;
        else if (state != ncclSuccess)
          throw NcclError("NCCL reported an asynchronous error on " + w.describe(*slot) + ": " +
                          ncclMessage(state, *slot));
      }
      for (size_t i = 0; i < w.streams.size(); ++i) {
        if (idle[i])
          continue;
        cudaError_t q = cudaStreamQuery(w.streams[i]);
        if (q == cudaSuccess)
          idle[i] = true;
        else if (q == cudaErrorNotReady)
          done = false;
        else
          throw NcclError("CUDA error on the stream of " + w.rankText(static_cast<int>(i)) + ": " +
                          cudaMessage(q));
      }
      if (done)
        return;
      if (poller.expired())
        throw NcclError("collective did not complete within " + secondsText(timeoutSeconds) +
                        " s: a peer is missing or hung");
      poller.pause();
    }
  } catch (const NcclError &e) {
    w.abortAll();
    throw NcclError(std::string(e.what()) + "; communicators aborted");
  }
}
} // namespace shardcheck::gpu
