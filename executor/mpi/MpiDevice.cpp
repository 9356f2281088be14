// The mpi backend's collectives on host buffers; see MpiBackend.h.
//
// Structure: MpiDevice is the host device whose runTeam hands each team's
// call to MpiCall, which holds this process's part of one call (its
// buffers, the communicator, the per-rank chunk) and has one method per
// MPI call that needs more than a line. Counts were checked on every
// process by the run loop, so every process calls MPI alike.
#include "executor/mpi/MpiBackend.h"

#include "executor/host/HostDevice.h"

#include <mpi.h>

#include <algorithm>
#include <climits>

namespace shardcheck {

namespace {

using Buffer = std::vector<double>;

/// MPI errors abort by default (MPI_ERRORS_ARE_FATAL), with MPI's message:
/// a failing MPI call cannot leave the other processes waiting.
MPI_Op mpiOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return MPI_SUM;
  case ReduceOp::Prod:
    return MPI_PROD;
  case ReduceOp::Max:
    return MPI_MAX;
  case ReduceOp::Min:
    return MPI_MIN;
  }
  return MPI_SUM;
}

int count(int64_t n) {
  SC_ASSERT(n >= 0 && n <= INT_MAX, "buffer too large for one MPI call");
  return static_cast<int>(n);
}

/// This process's part of one team's call.
class MpiCall {
public:
  MpiCall(MpiCoordinator &mpi, const TeamCall &t, const std::map<int64_t, const Buffer *> &in,
          const std::map<int64_t, Buffer *> &out)
      : mpi_(mpi), t_(t), call_(t.call), me_(mpi.localDevice()) {
    src_ = in.count(me_) ? in.at(me_) : nullptr;
    dst_ = out.count(me_) ? out.at(me_) : nullptr;
  }

  void run();

private:
  void sendRecv();
  void allToAllv();
  /// Counts and displacements of a Gather's or Scatter's k per member (a
  /// root outside the team, last, has none).
  void chunkLayout(std::vector<int> &counts, std::vector<int> &displs) const;
  void gatherv();
  void scatterv();
  void broadcast();
  void reduce();
  void finish() {
    mpi_.complete(&request_, 1, [this] { return mpi_.collectiveWait(call_, members_); });
  }

  MpiCoordinator &mpi_;
  const TeamCall &t_;
  const CollectiveCall &call_;
  int64_t me_;
  const Buffer *src_ = nullptr;
  Buffer *dst_ = nullptr;
  std::vector<int64_t> members_; ///< The communicator, in rank order.
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool member_ = false, isRoot_ = false, rootOutside_ = false;
  int rootRank_ = 0;
  int64_t k_ = 0; ///< The per-rank chunk, from sizes every process checked.
};

void MpiCall::sendRecv() {
  std::vector<MPI_Request> requests;
  std::vector<int64_t> peers;
  int tag = mpi_.nextTag();
  for (const auto &[src, dst] : call_.pairs) {
    if (src == me_ && dst == me_) {
      *dst_ = *src_;
      continue;
    }
    if (src == me_)
      requests.emplace_back(), peers.push_back(dst),
          MPI_Isend(src_->data(), count(t_.in.at(src)), MPI_DOUBLE, mpi_.rankOf(dst), tag,
                    MPI_COMM_WORLD, &requests.back());
    if (dst == me_)
      requests.emplace_back(), peers.push_back(src),
          MPI_Irecv(dst_->data(), count(t_.out.at(dst)), MPI_DOUBLE, mpi_.rankOf(src), tag,
                    MPI_COMM_WORLD, &requests.back());
  }
  mpi_.complete(requests.data(), static_cast<int>(requests.size()),
                [&] { return mpi_.collectiveWait(call_, peers); });
}

void MpiCall::allToAllv() {
  size_t n = call_.team.size();
  size_t meRank = std::find(call_.team.begin(), call_.team.end(), me_) - call_.team.begin();
  std::vector<int> sendCounts(n), sendDispls(n), recvCounts(n), recvDispls(n);
  int sendAt = 0, recvAt = 0;
  for (size_t j = 0; j < n; ++j) {
    sendCounts[j] = count(call_.counts[meRank][j]);
    sendDispls[j] = sendAt;
    sendAt += sendCounts[j];
    recvCounts[j] = count(call_.counts[j][meRank]);
    recvDispls[j] = recvAt;
    recvAt += recvCounts[j];
  }
  MPI_Ialltoallv(src_ ? src_->data() : nullptr, sendCounts.data(), sendDispls.data(), MPI_DOUBLE,
                 dst_ ? dst_->data() : nullptr, recvCounts.data(), recvDispls.data(), MPI_DOUBLE,
                 comm_, &request_);
  finish();
}

void MpiCall::chunkLayout(std::vector<int> &counts, std::vector<int> &displs) const {
  counts.assign(members_.size(), count(k_));
  displs.assign(members_.size(), 0);
  for (size_t i = 0; i < members_.size(); ++i)
    displs[i] = count(static_cast<int64_t>(i) * k_);
  if (rootOutside_)
    counts.back() = 0, displs.back() = 0;
}

void MpiCall::gatherv() {
  std::vector<int> counts, displs;
  chunkLayout(counts, displs);
  MPI_Igatherv(member_ ? src_->data() : nullptr, member_ ? count(k_) : 0, MPI_DOUBLE,
               isRoot_ ? dst_->data() : nullptr, counts.data(), displs.data(), MPI_DOUBLE,
               rootRank_, comm_, &request_);
  finish();
}

void MpiCall::scatterv() {
  std::vector<int> counts, displs;
  chunkLayout(counts, displs);
  MPI_Iscatterv(isRoot_ ? src_->data() : nullptr, counts.data(), displs.data(), MPI_DOUBLE,
                member_ ? dst_->data() : nullptr, member_ ? count(k_) : 0, MPI_DOUBLE, rootRank_,
                comm_, &request_);
  finish();
}

void MpiCall::broadcast() {
  Buffer staging;
  double *buffer = nullptr;
  if (isRoot_) {
    staging = *src_;
    buffer = staging.data();
  } else {
    buffer = dst_->data();
  }
  MPI_Ibcast(buffer, count(k_), MPI_DOUBLE, rootRank_, comm_, &request_);
  finish();
  if (isRoot_ && member_)
    *dst_ = staging;
}

void MpiCall::reduce() {
  Buffer neutral;
  const double *send = nullptr;
  if (member_) {
    send = src_->data();
  } else {
    neutral.assign(static_cast<size_t>(k_), reduceIdentity(call_.op)); // A root outside the team.
    send = neutral.data();
  }
  MPI_Ireduce(send, isRoot_ ? dst_->data() : nullptr, count(k_), MPI_DOUBLE, mpiOp(call_.op),
              rootRank_, comm_, &request_);
  finish();
}

void MpiCall::run() {
  if (movesByPairs(call_.kind)) // SendRecv, and a ring's pairs of this iteration
    return sendRecv();
  members_ = communicatorOrder(call_); // A root outside the team joins last.
  void *handle = mpi_.commOf(members_, call_.inputName, call_.outputName);
  if (!handle)
    return; // Not a participant.
  comm_ = *static_cast<MPI_Comm *>(handle);
  rootOutside_ = members_.size() > call_.team.size();
  rootRank_ = call_.root
                  ? static_cast<int>(std::find(members_.begin(), members_.end(), *call_.root) -
                                     members_.begin())
                  : 0;
  member_ = std::find(call_.team.begin(), call_.team.end(), me_) != call_.team.end();
  isRoot_ = call_.root && me_ == *call_.root;
  k_ = perRankChunk(call_, t_.in);
  MPI_Op op = mpiOp(call_.op);
  switch (call_.kind) {
  case CollectiveType::Allgather:
    MPI_Iallgather(src_->data(), count(k_), MPI_DOUBLE, dst_->data(), count(k_), MPI_DOUBLE, comm_,
                   &request_);
    return finish();
  case CollectiveType::Gather:
    return gatherv();
  case CollectiveType::Scatter:
    return scatterv();
  case CollectiveType::Broadcast:
    return broadcast();
  case CollectiveType::AllToAll:
    MPI_Ialltoall(src_->data(), count(k_), MPI_DOUBLE, dst_->data(), count(k_), MPI_DOUBLE, comm_,
                  &request_);
    return finish();
  case CollectiveType::AllToAllv:
    return allToAllv();
  case CollectiveType::Allreduce:
    MPI_Iallreduce(src_->data(), dst_->data(), count(k_), MPI_DOUBLE, op, comm_, &request_);
    return finish();
  case CollectiveType::Reduce:
    return reduce();
  case CollectiveType::ReduceScatter:
    MPI_Ireduce_scatter_block(src_->data(), dst_->data(), count(k_), MPI_DOUBLE, op, comm_,
                              &request_);
    return finish();
  default: // SendRecv and CollectivePermute were run above; no plan names another.
    return;
  }
}

/// Host buffers whose collectives go through MPI.
class MpiDevice : public HostDevice {
public:
  explicit MpiDevice(MpiCoordinator &mpi) : mpi_(mpi) {}

private:
  void runTeam(const TeamCall &team, const std::map<int64_t, const Buffer *> &in,
               const std::map<int64_t, Buffer *> &out) override {
    MpiCall(mpi_, team, in, out).run();
  }
  MpiCoordinator &mpi_;
};

} // namespace

std::unique_ptr<Device> MpiBackend::openDevice(const Plan &) {
  return std::make_unique<MpiDevice>(coordinator_);
}

} // namespace shardcheck
