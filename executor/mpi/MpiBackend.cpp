// The mpi backend; see MpiBackend.h.
#include "executor/mpi/MpiBackend.h"

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace shardcheck {

struct MpiBackend::Comms {
  std::map<std::vector<int>, MPI_Comm> byRanks;
};

namespace {

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

} // namespace

MpiBackend::MpiBackend() : comms_(std::make_unique<Comms>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    ownsMpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiBackend::~MpiBackend() {
  for (auto &[ranks, comm] : comms_->byRanks)
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  if (ownsMpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }
}

std::vector<int64_t> MpiBackend::localDevices(const std::vector<int64_t> &planDevices) {
  if (static_cast<int>(planDevices.size()) != size_)
    throwInputError("mpi-processes",
                    "the plan has " + std::to_string(planDevices.size()) +
                        " device(s) and the mpi backend runs one process per device; run it "
                        "with mpirun -np " +
                        std::to_string(planDevices.size()) + " (got " + std::to_string(size_) +
                        ")",
                    SourceLoc{});
  rankOfDevice_.clear();
  for (size_t r = 0; r < planDevices.size(); ++r)
    rankOfDevice_[planDevices[r]] = static_cast<int>(r);
  return {planDevices[rank_]};
}

int MpiBackend::rankOf(int64_t device) const {
  auto it = rankOfDevice_.find(device);
  SC_ASSERT(it != rankOfDevice_.end(), "device " + std::to_string(device) + " has no process");
  return it->second;
}

void *MpiBackend::commOf(const std::vector<int64_t> &members) {
  std::vector<int> ranks;
  for (int64_t d : members)
    ranks.push_back(rankOf(d));
  if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end())
    return nullptr;
  auto it = comms_->byRanks.find(ranks);
  if (it == comms_->byRanks.end()) {
    MPI_Group world, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &group);
    MPI_Comm comm;
    // Only the members call this; the tag keeps concurrent creations apart.
    MPI_Comm_create_group(MPI_COMM_WORLD, group, 1000 + ranks.front(), &comm);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    it = comms_->byRanks.emplace(ranks, comm).first;
  }
  return &it->second;
}

void MpiBackend::collective(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &inSizes,
                            const std::map<int64_t, int64_t> &outSizes,
                            const std::map<int64_t, const SimBuffer *> &in,
                            const std::map<int64_t, SimBuffer *> &out) {
  auto myIn = [&](int64_t d) -> const SimBuffer * {
    auto it = in.find(d);
    return it == in.end() ? nullptr : it->second;
  };
  auto myOut = [&](int64_t d) -> SimBuffer * {
    auto it = out.find(d);
    return it == out.end() ? nullptr : it->second;
  };
  int64_t me = -1;
  for (const auto &[d, r] : rankOfDevice_)
    if (r == rank_)
      me = d;

  if (call.kind == SimCollective::SendRecv) {
    std::vector<MPI_Request> requests;
    int tag = ++tag_ % 30000;
    for (const auto &[src, dst] : call.pairs) {
      if (src == me && dst == me) {
        *myOut(dst) = *myIn(src);
        continue;
      }
      if (src == me)
        requests.emplace_back(), MPI_Isend(myIn(src)->data(), count(inSizes.at(src)), MPI_DOUBLE,
                                           rankOf(dst), tag, MPI_COMM_WORLD, &requests.back());
      if (dst == me)
        requests.emplace_back(), MPI_Irecv(myOut(dst)->data(), count(outSizes.at(dst)), MPI_DOUBLE,
                                           rankOf(src), tag, MPI_COMM_WORLD, &requests.back());
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    return;
  }

  // The communicator: the team in rank order, a root outside it last.
  std::vector<int64_t> members = call.team;
  bool rootOutside = call.root && std::find(members.begin(), members.end(), *call.root) ==
                                      members.end();
  if (rootOutside)
    members.push_back(*call.root);
  void *handle = commOf(members);
  if (!handle)
    return; // Not a participant.
  MPI_Comm comm = *static_cast<MPI_Comm *>(handle);
  int n = static_cast<int>(call.team.size());
  int rootRank = call.root ? static_cast<int>(std::find(members.begin(), members.end(),
                                                        *call.root) -
                                              members.begin())
                           : 0;
  bool member = std::find(call.team.begin(), call.team.end(), me) != call.team.end();
  const SimBuffer *src = myIn(me);
  SimBuffer *dst = myOut(me);
  int64_t k;
  switch (call.kind) {
  case SimCollective::Allgather:
    k = inSizes.at(call.team[0]);
    MPI_Allgather(src->data(), count(k), MPI_DOUBLE, dst->data(), count(k), MPI_DOUBLE, comm);
    return;
  case SimCollective::Gather: {
    k = inSizes.at(call.team[0]);
    std::vector<int> counts(members.size(), count(k)), displs(members.size(), 0);
    for (size_t i = 0; i < members.size(); ++i)
      displs[i] = count(static_cast<int64_t>(i) * k);
    if (rootOutside)
      counts.back() = 0, displs.back() = 0;
    bool isRoot = me == *call.root;
    MPI_Gatherv(member ? src->data() : nullptr, member ? count(k) : 0, MPI_DOUBLE,
                isRoot ? dst->data() : nullptr, counts.data(), displs.data(), MPI_DOUBLE, rootRank,
                comm);
    return;
  }
  case SimCollective::Scatter: {
    k = outSizes.at(call.team[0]);
    std::vector<int> counts(members.size(), count(k)), displs(members.size(), 0);
    for (size_t i = 0; i < members.size(); ++i)
      displs[i] = count(static_cast<int64_t>(i) * k);
    if (rootOutside)
      counts.back() = 0, displs.back() = 0;
    bool isRoot = me == *call.root;
    MPI_Scatterv(isRoot ? src->data() : nullptr, counts.data(), displs.data(), MPI_DOUBLE,
                 member ? dst->data() : nullptr, member ? count(k) : 0, MPI_DOUBLE, rootRank,
                 comm);
    return;
  }
  case SimCollective::Broadcast: {
    k = inSizes.at(*call.root);
    SimBuffer staging;
    double *buffer = nullptr;
    if (me == *call.root) {
      staging = *src;
      buffer = staging.data();
    } else {
      buffer = dst->data();
    }
    MPI_Bcast(buffer, count(k), MPI_DOUBLE, rootRank, comm);
    if (me == *call.root && member)
      *dst = staging;
    return;
  }
  case SimCollective::AllToAll:
    k = inSizes.at(call.team[0]) / n;
    MPI_Alltoall(src->data(), count(k), MPI_DOUBLE, dst->data(), count(k), MPI_DOUBLE, comm);
    return;
  case SimCollective::Allreduce:
    k = inSizes.at(call.team[0]);
    MPI_Allreduce(src->data(), dst->data(), count(k), MPI_DOUBLE, mpiOp(call.op), comm);
    return;
  case SimCollective::Reduce: {
    k = inSizes.at(call.team[0]);
    SimBuffer neutral;
    const double *send = nullptr;
    if (member) {
      send = src->data();
    } else {
      neutral.assign(static_cast<size_t>(k), reduceIdentity(call.op)); // A root outside the team.
      send = neutral.data();
    }
    bool isRoot = me == *call.root;
    MPI_Reduce(send, isRoot ? dst->data() : nullptr, count(k), MPI_DOUBLE, mpiOp(call.op),
               rootRank, comm);
    return;
  }
  case SimCollective::ReduceScatter:
    k = inSizes.at(call.team[0]) / n;
    MPI_Reduce_scatter_block(src->data(), dst->data(), count(k), MPI_DOUBLE, mpiOp(call.op), comm);
    return;
  case SimCollective::SendRecv:
    return;
  }
}

void MpiBackend::allToAllv(const std::vector<int64_t> &team,
                           const std::vector<std::vector<int64_t>> &counts,
                           const std::map<int64_t, const SimBuffer *> &in,
                           const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                           const std::string &outputName) {
  void *handle = commOf(team);
  if (!handle)
    return;
  MPI_Comm comm = *static_cast<MPI_Comm *>(handle);
  size_t n = team.size();
  size_t meRank = 0;
  for (size_t i = 0; i < n; ++i)
    if (rankOf(team[i]) == rank_)
      meRank = i;
  std::vector<int> sendCounts(n), sendDispls(n), recvCounts(n), recvDispls(n);
  int sendAt = 0, recvAt = 0;
  for (size_t j = 0; j < n; ++j) {
    sendCounts[j] = count(counts[meRank][j]);
    sendDispls[j] = sendAt;
    sendAt += sendCounts[j];
    recvCounts[j] = count(counts[j][meRank]);
    recvDispls[j] = recvAt;
    recvAt += recvCounts[j];
  }
  int64_t me = team[meRank];
  const SimBuffer *src = in.count(me) ? in.at(me) : nullptr;
  SimBuffer *dst = out.count(me) ? out.at(me) : nullptr;
  if ((sendAt > 0 && (!src || static_cast<int>(src->size()) != sendAt)) ||
      (recvAt > 0 && (!dst || static_cast<int>(dst->size()) != recvAt)))
    throw CollectiveError("AllToAllv: the buffers of " + inputName + " and " + outputName +
                          " on device " + std::to_string(me) + " do not hold the chunks");
  MPI_Alltoallv(src ? src->data() : nullptr, sendCounts.data(), sendDispls.data(), MPI_DOUBLE,
                dst ? dst->data() : nullptr, recvCounts.data(), recvDispls.data(), MPI_DOUBLE,
                comm);
}

namespace {

/// Broadcasts a string from `root` of the world.
std::string broadcastString(const std::string &s, int root, int rank) {
  int length = static_cast<int>(s.size());
  MPI_Bcast(&length, 1, MPI_INT, root, MPI_COMM_WORLD);
  std::string out = rank == root ? s : std::string(static_cast<size_t>(length), '\0');
  MPI_Bcast(out.data(), length, MPI_CHAR, root, MPI_COMM_WORLD);
  return out;
}

nlohmann::json checkToJson(const TensorCheck &t) {
  const OutputComparison &c = t.comparison;
  nlohmann::json j = {{"tensor", c.tensor},       {"name", c.name},
                      {"dtype", static_cast<int>(c.dtype)},
                      {"rtol", c.tolerance.rtol}, {"atol", c.tolerance.atol},
                      {"compared", c.compared},   {"mismatched", c.mismatched},
                      {"max_abs", c.maxAbsError}, {"max_rel", c.maxRelError},
                      {"role", t.role}};
  if (c.firstMismatch)
    j["first"] = {{"device", c.firstMismatch->device},
                  {"slot", c.firstMismatch->slot},
                  {"index", c.firstMismatch->index},
                  {"got", c.firstMismatch->got},
                  {"expected", c.firstMismatch->expected}};
  return j;
}

/// JSON has no infinities or NaN: nlohmann writes null for them.
double number(const nlohmann::json &v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::infinity();
}

TensorCheck checkFromJson(const nlohmann::json &j) {
  TensorCheck t;
  OutputComparison &c = t.comparison;
  c.tensor = j["tensor"].get<TensorNum>();
  c.name = j["name"].get<std::string>();
  c.dtype = static_cast<DataType>(j["dtype"].get<int>());
  c.tolerance = {number(j["rtol"]), number(j["atol"])};
  c.compared = j["compared"].get<int64_t>();
  c.mismatched = j["mismatched"].get<int64_t>();
  c.maxAbsError = number(j["max_abs"]);
  c.maxRelError = number(j["max_rel"]);
  t.role = j["role"].get<std::string>();
  if (j.contains("first")) {
    const auto &f = j["first"];
    c.firstMismatch = Mismatch{f["device"].get<int64_t>(), f["slot"].get<int64_t>(),
                               f["index"].get<std::vector<int64_t>>(),
                               f["got"].is_number() ? f["got"].get<double>()
                                                    : std::numeric_limits<double>::quiet_NaN(),
                               f["expected"].is_number()
                                   ? f["expected"].get<double>()
                                   : std::numeric_limits<double>::quiet_NaN()};
  }
  return t;
}

} // namespace

std::optional<RunFailure> MpiBackend::agreeOnFailure(const std::optional<RunFailure> &local) {
  int mine = local ? rank_ : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX)
    return std::nullopt;
  nlohmann::json j;
  if (rank_ == first)
    j = {{"step", local->step}, {"kind", local->kind}, {"message", local->message}};
  nlohmann::json shared = nlohmann::json::parse(broadcastString(j.dump(), first, rank_));
  return RunFailure{shared["step"].get<size_t>(), shared["kind"].get<std::string>(),
                    shared["message"].get<std::string>()};
}

std::vector<TensorCheck> MpiBackend::gatherChecks(const std::vector<TensorCheck> &local) {
  nlohmann::json mine = nlohmann::json::array();
  for (const TensorCheck &t : local)
    mine.push_back(checkToJson(t));
  std::string text = mine.dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs(static_cast<size_t>(size_), 0);
  int total = 0;
  for (int r = 0; r < size_; ++r)
    displs[r] = total, total += lengths[r];
  std::string all(static_cast<size_t>(rank_ == 0 ? total : 0), '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank_ != 0)
    return local;
  // Every process checked the same tensors in the same order.
  std::vector<std::vector<OutputComparison>> parts(local.size());
  for (int r = 0; r < size_; ++r) {
    auto checks = nlohmann::json::parse(all.substr(displs[r], lengths[r]));
    for (size_t i = 0; i < checks.size() && i < parts.size(); ++i)
      parts[i].push_back(checkFromJson(checks[i]).comparison);
  }
  std::vector<TensorCheck> merged = local;
  for (size_t i = 0; i < merged.size(); ++i)
    merged[i].comparison = mergeComparisons(parts[i]);
  return merged;
}

void MpiBackend::broadcastBytes(void *data, size_t bytes) {
  MPI_Bcast(data, count(static_cast<int64_t>(bytes)), MPI_BYTE, 0, MPI_COMM_WORLD);
}

int MpiBackend::agreeOnStatus(int status) {
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

} // namespace shardcheck
