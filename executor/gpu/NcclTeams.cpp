// The NCCL layer of the GPU backend; see NcclTeams.h.
//
// Structure. NcclWorld::Impl owns the streams and communicators: the world
// (one ncclComm_t per local rank) and the teams (one slot per local rank, null
// where the rank is not a member), each in storage whose address does not
// change, because a non-blocking init or split writes the new communicator
// into it from NCCL's own thread. Every NCCL call goes through SC_NCCL (which
// lets ncclInProgress through: the caller then polls) and every CUDA call
// through SC_CUDA; both throw NcclError. Public entry points validate their
// arguments first (an error there aborts nothing), then catch any NcclError
// raised once NCCL is involved, abort every communicator and rethrow.
//
// Aborting. ncclCommAbort of one communicator sets its abort flag (which stops
// its kernels) and then frees it, and freeing can wait for the device; a
// kernel of another communicator still spinning on a missing peer would then
// hold it forever. So every communicator is aborted from its own thread at
// once: all flags are up within microseconds, whatever order the frees take.
// (In single-process mode NCCL frees the communicators of one clique only when
// the last of them is aborted, which the threads also satisfy.)
#include "executor/gpu/NcclTeams.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

namespace shardcheck::gpu {

namespace {

// ---------------------------------------------------------------- errors --

/// "ncclAllGather" from "ncclAllGather(sb, rb, ...)".
std::string callName(const char *expr) {
  std::string s(expr);
  size_t paren = s.find('(');
  return paren == std::string::npos ? s : s.substr(0, paren);
}

std::string where(const char *file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": ";
}

std::string cudaMessage(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/// NCCL's name for `r`, and its last error text when it has one.
std::string ncclMessage(ncclResult_t r, ncclComm_t comm) {
  std::string m = ncclGetErrorString(r);
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    m += std::string(" (") + last + ")";
  return m;
}

void checkCuda(cudaError_t e, const char *expr, const char *file, int line) {
  if (e != cudaSuccess)
    throw NcclError(where(file, line) + callName(expr) + " failed: " + cudaMessage(e));
}

/// Lets ncclSuccess and ncclInProgress (non-blocking communicators) through.
ncclResult_t checkNccl(ncclResult_t r, const char *expr, const char *file, int line,
                       ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress)
    return r;
  throw NcclError(where(file, line) + callName(expr) + " failed: " + ncclMessage(r, comm));
}

#define SC_CUDA(call) checkCuda((call), #call, __FILE__, __LINE__)
#define SC_NCCL(call) checkNccl((call), #call, __FILE__, __LINE__, nullptr)
#define SC_NCCL_C(call, comm) checkNccl((call), #call, __FILE__, __LINE__, (comm))

/// For destructors and abort paths, which must not throw.
void warnCuda(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::fprintf(stderr, "shardcheck: warning: %s failed: %s\n", what, cudaMessage(e).c_str());
}

/// Restores the calling thread's current CUDA device.
class DeviceGuard {
public:
  DeviceGuard() { SC_CUDA(cudaGetDevice(&device_)); }
  ~DeviceGuard() { warnCuda(cudaSetDevice(device_), "cudaSetDevice (restoring the device)"); }
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

private:
  int device_ = 0;
};

// ---------------------------------------------------------------- timing --

std::string secondsText(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

/// A deadline, and the pause between two polls (see pause()).
class Poller {
public:
  explicit Poller(double seconds) : start_(std::chrono::steady_clock::now()) {
    if (!(seconds >= 0))
      seconds = 0;
    if (seconds > 1e8)
      seconds = 1e8;
    deadline_ = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(seconds));
  }
  bool expired() const { return std::chrono::steady_clock::now() >= deadline_; }
  void pause() {
    ++polls_;
    // The waiting thread has nothing else to do: spin for the first 200 ms
    // (a step's end is seen within microseconds, which the benchmarks show
    // matters: 1 ms sleeps cost 13% on a 7 ms Allreduce), then sleep briefly,
    // then ~1 ms once a wait is long anyway.
    auto elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed < std::chrono::milliseconds(200))
      std::this_thread::yield();
    else if (elapsed < std::chrono::seconds(2))
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

private:
  std::chrono::steady_clock::time_point start_, deadline_;
  int polls_ = 0;
};

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

template <typename T> std::vector<unsigned char> bytesOf(T v) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

/// The identity of `op` as one element of `t` (little-endian bytes): what a
/// Reduce root outside the team contributes.
std::vector<unsigned char> identityElement(ElementType t, ReduceOp op) {
  if (op == ReduceOp::Sum)
    return std::vector<unsigned char>(elementSize(t), 0);
  const double inf = std::numeric_limits<double>::infinity();
  // Half precision: 1.0, -inf, +inf.
  auto half = [&](uint16_t one, uint16_t negInf, uint16_t posInf) {
    return bytesOf<uint16_t>(op == ReduceOp::Prod ? one : op == ReduceOp::Max ? negInf : posInf);
  };
  auto integer = [&](auto zero) {
    using T = decltype(zero);
    return bytesOf<T>(op == ReduceOp::Prod  ? T(1)
                      : op == ReduceOp::Max ? std::numeric_limits<T>::lowest()
                                            : std::numeric_limits<T>::max());
  };
  switch (t) {
  case ElementType::F64:
    return bytesOf<double>(op == ReduceOp::Prod ? 1.0 : op == ReduceOp::Max ? -inf : inf);
  case ElementType::F32:
    return bytesOf<float>(op == ReduceOp::Prod  ? 1.0f
                          : op == ReduceOp::Max ? -static_cast<float>(inf)
                                                : static_cast<float>(inf));
  case ElementType::F16:
    return half(0x3C00, 0xFC00, 0x7C00);
  case ElementType::BF16:
    return half(0x3F80, 0xFF80, 0x7F80);
  case ElementType::I64:
    return integer(int64_t(0));
  case ElementType::I32:
    return integer(int32_t(0));
  case ElementType::I8:
    return integer(int8_t(0));
  case ElementType::U8:
    return integer(uint8_t(0));
  }
  throw NcclError("unknown ElementType " + std::to_string(static_cast<int>(t)));
}

std::string ranksText(const std::vector<int> &ranks) {
  std::string s = "(";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? " " : "") + std::to_string(ranks[i]);
  return s + ")";
}

bool isWorldInOrder(const std::vector<int> &members, int worldSize) {
  if (static_cast<int>(members.size()) != worldSize)
    return false;
  for (int i = 0; i < worldSize; ++i)
    if (members[i] != i)
      return false;
  return true;
}

/// A stable, non-negative split color for a members list (FNV-1a). Every
/// process computes the same value; only members pass it.
int stableColor(const std::vector<int> &members) {
  uint32_t h = 2166136261u;
  auto mix = [&](uint32_t v) {
    for (int b = 0; b < 4; ++b) {
      h ^= (v >> (8 * b)) & 0xFFu;
      h *= 16777619u;
    }
  };
  mix(static_cast<uint32_t>(members.size()));
  for (int m : members)
    mix(static_cast<uint32_t>(m));
  return static_cast<int>(h & 0x7FFFFFFFu);
}

void validateMembers(const std::vector<int> &members, int worldSize, const std::string &what) {
  if (members.empty())
    throw NcclError(what + ": the team is empty");
  std::set<int> seen;
  for (int m : members) {
    if (m < 0 || m >= worldSize)
      throw NcclError(what + ": rank " + std::to_string(m) + " of team " + ranksText(members) +
                      " is outside the world of " + std::to_string(worldSize) + " rank(s)");
    if (!seen.insert(m).second)
      throw NcclError(what + ": rank " + std::to_string(m) + " appears twice in team " +
                      ranksText(members));
  }
}

} // namespace

// ------------------------------------------------------------------ Impl --

struct NcclWorld::Impl {
  /// One team communicator: a slot per local rank (null: not a member).
  struct Team {
    std::vector<int> members;
    std::vector<ncclComm_t> comms;
  };

  NcclOptions options;
  bool singleProcess = true;
  int worldSize = 0;
  std::vector<int> ranks;                   // local world ranks, ascending
  std::vector<int> gpus;                    // per local index
  std::vector<cudaStream_t> streams;        // per local index
  std::vector<ncclComm_t> world;            // per local index; sized once, never moved
  std::vector<std::unique_ptr<Team>> teams; // creation order; Team objects never move
  std::map<std::vector<int>, Team *> teamByMembers;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  bool healthy = false; // init completed
  bool aborted = false;
  /// Host blocks of identity elements, kept for the world's lifetime
  /// because stream-ordered copies read them after the call returns.
  std::map<std::pair<int, int>, std::vector<unsigned char>> identityPatterns;

  Impl() {
    config.blocking = 0;
    config.splitShare = 0; // teams own their resources: aborting one spares the others
  }

  int localIndex(int worldRank) const {
    auto it = std::find(ranks.begin(), ranks.end(), worldRank);
    return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
  }

  int requireLocal(int worldRank, const char *what) const {
    int li = localIndex(worldRank);
    if (li < 0)
      throw NcclError(std::string(what) + ": world rank " + std::to_string(worldRank) +
                      " is not driven by this process");
    return li;
  }

  void requireUsable() const {
    if (aborted)
      throw NcclError("the NCCL communicators were aborted after an earlier error; this world "
                      "cannot run collectives any more");
    if (!healthy)
      throw NcclError("the NCCL world was not initialized");
  }

  std::string rankText(int li) const {
    return "rank " + std::to_string(ranks[li]) + " (GPU " + std::to_string(gpus[li]) + ")";
  }

  /// The slots of every live communicator: teams (newest first), then the
  /// world.
  std::vector<ncclComm_t *> liveSlots() {
    std::vector<ncclComm_t *> all;
    for (auto t = teams.rbegin(); t != teams.rend(); ++t)
      for (ncclComm_t &c : (*t)->comms)
        if (__atomic_load_n(&c, __ATOMIC_ACQUIRE))
          all.push_back(&c);
    for (ncclComm_t &c : world)
      if (__atomic_load_n(&c, __ATOMIC_ACQUIRE))
        all.push_back(&c);
    return all;
  }

  /// "the communicator of team (0 1) on rank 1 (GPU 1)", for messages.
  std::string describe(ncclComm_t comm) const {
    for (const auto &t : teams)
      for (size_t li = 0; li < t->comms.size(); ++li)
        if (t->comms[li] == comm)
          return "the communicator of team " + ranksText(t->members) + " on " +
                 rankText(static_cast<int>(li));
    for (size_t li = 0; li < world.size(); ++li)
      if (world[li] == comm)
        return "the world communicator on " + rankText(static_cast<int>(li));
    return "a communicator";
  }

  /// Polls until every communicator in `slots` exists and has left
  /// ncclInProgress (a non-blocking init, split, enqueue or finalize is
  /// done). Throws on an error state or when `seconds` pass.
  void waitReady(const std::vector<ncclComm_t *> &slots, double seconds, const std::string &what) {
    Poller poller(seconds);
    for (;;) {
      bool ready = true;
      for (ncclComm_t *slot : slots) {
        ncclComm_t comm = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (!comm) { // A non-blocking init or split has not published it yet.
          ready = false;
          continue;
        }
        ncclResult_t state = ncclSuccess;
        SC_NCCL_C(ncclCommGetAsyncError(comm, &state), comm);
        if (state == ncclInProgress)
          ready = false;
        else if (state != ncclSuccess)
          throw NcclError(what + " failed on " + describe(comm) + ": " + ncclMessage(state, comm));
      }
      if (ready)
        return;
      if (poller.expired())
        throw NcclError(what + " did not complete within " + secondsText(seconds) +
                        " s: a peer is missing or hung");
      poller.pause();
    }
  }

  // -------------------------------------------------------------- init --

  void initSingleProcess(const std::vector<int> &gpuList) {
    int deviceCount = 0;
    cudaError_t e = cudaGetDeviceCount(&deviceCount);
    if (e != cudaSuccess)
      throw NcclError("no CUDA device: cudaGetDeviceCount failed: " + cudaMessage(e));
    if (gpuList.empty())
      throw NcclError("NcclWorld::singleProcess: no GPU listed");
    std::set<int> seen;
    for (int g : gpuList) {
      if (g < 0 || g >= deviceCount)
        throw NcclError("NcclWorld::singleProcess: GPU " + std::to_string(g) + " does not exist (" +
                        std::to_string(deviceCount) + " visible)");
      if (!seen.insert(g).second)
        throw NcclError("NcclWorld::singleProcess: GPU " + std::to_string(g) + " listed twice");
    }
    singleProcess = true;
    worldSize = static_cast<int>(gpuList.size());
    gpus = gpuList;
    ranks.resize(gpus.size());
    std::iota(ranks.begin(), ranks.end(), 0);
    world.assign(gpus.size(), nullptr);
    createStreams();
    DeviceGuard guard;
    if (!options.nonBlocking) {
      SC_NCCL(ncclCommInitAll(world.data(), worldSize, gpus.data()));
    } else {
      ncclUniqueId id;
      SC_NCCL(ncclGetUniqueId(&id));
      SC_NCCL(ncclGroupStart());
      try {
        for (int i = 0; i < worldSize; ++i) {
          SC_CUDA(cudaSetDevice(gpus[i]));
          SC_NCCL(ncclCommInitRankConfig(&world[i], worldSize, id, i, &config));
        }
      } catch (...) {
        (void)ncclGroupEnd();
        throw;
      }
      SC_NCCL(ncclGroupEnd());
      waitReady(worldSlots(), options.initTimeoutSeconds, "ncclCommInitRankConfig (the world)");
    }
    healthy = true;
  }

  void initMultiProcess(int worldRank, int size, int gpu,
                        const std::function<void(void *, size_t)> &broadcastFromRank0) {
    if (size < 1 || worldRank < 0 || worldRank >= size)
      throw NcclError("NcclWorld::multiProcess: rank " + std::to_string(worldRank) +
                      " of a world of " + std::to_string(size));
    // Rank 0 makes the id; a failure there is broadcast too, so that no
    // process waits for an id that never comes.
    struct {
      char ok;
      ncclUniqueId id;
    } message;
    std::memset(&message, 0, sizeof(message));
    std::string failure;
    if (worldRank == 0) {
      ncclResult_t r = ncclGetUniqueId(&message.id);
      message.ok = r == ncclSuccess ? 1 : 0;
      if (r != ncclSuccess)
        failure = where(__FILE__, __LINE__) + "ncclGetUniqueId failed: " + ncclMessage(r, nullptr);
    }
    broadcastFromRank0(&message, sizeof(message));
    if (!failure.empty())
      throw NcclError(failure);
    if (!message.ok)
      throw NcclError("NcclWorld::multiProcess: rank 0 could not create the NCCL unique id");

    int deviceCount = 0;
    cudaError_t e = cudaGetDeviceCount(&deviceCount);
    if (e != cudaSuccess)
      throw NcclError("no CUDA device: cudaGetDeviceCount failed: " + cudaMessage(e));
    if (gpu < 0 || gpu >= deviceCount)
      throw NcclError("NcclWorld::multiProcess: GPU " + std::to_string(gpu) + " does not exist (" +
                      std::to_string(deviceCount) + " visible)");
    singleProcess = false;
    worldSize = size;
    gpus = {gpu};
    ranks = {worldRank};
    world.assign(1, nullptr);
    createStreams();
    DeviceGuard guard;
    SC_CUDA(cudaSetDevice(gpu));
    if (!options.nonBlocking) {
      SC_NCCL(ncclCommInitRank(&world[0], size, message.id, worldRank));
    } else {
      SC_NCCL(ncclCommInitRankConfig(&world[0], size, message.id, worldRank, &config));
      waitReady(worldSlots(), options.initTimeoutSeconds, "ncclCommInitRankConfig (the world)");
    }
    healthy = true;
  }

  void createStreams() {
    DeviceGuard guard;
    streams.assign(gpus.size(), nullptr);
    for (size_t i = 0; i < gpus.size(); ++i) {
      SC_CUDA(cudaSetDevice(gpus[i]));
      SC_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    }
  }

  std::vector<ncclComm_t *> worldSlots() {
    std::vector<ncclComm_t *> slots;
    for (ncclComm_t &c : world)
      slots.push_back(&c);
    return slots;
  }

  // ------------------------------------------------------------- teams --

  /// Splits the world into `members` and the rest (collective over the
  /// world). Stores the team before waiting, so an abort reaches it.
  void createTeam(const std::vector<int> &members) {
    auto team = std::make_unique<Team>();
    team->members = members;
    team->comms.assign(ranks.size(), nullptr);
    Team *t = team.get();
    teams.push_back(std::move(team));
    teamByMembers[members] = t;

    int color = stableColor(members);
    DeviceGuard guard;
    SC_NCCL(ncclGroupStart());
    try {
      for (size_t li = 0; li < ranks.size(); ++li) {
        auto it = std::find(members.begin(), members.end(), ranks[li]);
        bool member = it != members.end();
        int key = member ? static_cast<int>(it - members.begin()) : 0;
        SC_NCCL_C(ncclCommSplit(world[li], member ? color : NCCL_SPLIT_NOCOLOR, key, &t->comms[li],
                                options.nonBlocking ? &config : nullptr),
                  world[li]);
      }
    } catch (...) {
      (void)ncclGroupEnd();
      throw;
    }
    SC_NCCL(ncclGroupEnd());
    std::string what = "ncclCommSplit for team " + ranksText(members);
    // The split jobs run under the parents: wait for those, then the children.
    waitReady(worldSlots(), options.initTimeoutSeconds, what);
    std::vector<ncclComm_t *> children;
    for (size_t li = 0; li < ranks.size(); ++li) {
      bool member = std::find(members.begin(), members.end(), ranks[li]) != members.end();
      if (!member)
        continue;
      if (!options.nonBlocking && !t->comms[li])
        throw NcclError(what + " returned no communicator on " + rankText(static_cast<int>(li)));
      children.push_back(&t->comms[li]);
    }
    waitReady(children, options.initTimeoutSeconds, what);
  }

  /// The communicator of `members` for local index `li` (creating the team
  /// in single-process mode), or nullptr for a non-member.
  ncclComm_t commOf(int li, const std::vector<int> &members) {
    if (isWorldInOrder(members, worldSize))
      return world[li];
    auto it = teamByMembers.find(members);
    if (it == teamByMembers.end()) {
      if (!singleProcess)
        throw NcclError("team " + ranksText(members) +
                        " was not prepared: in multi-process mode every process must call "
                        "NcclWorld::prepareTeams with every team before running steps");
      createTeam(members);
      it = teamByMembers.find(members);
    }
    return __atomic_load_n(&it->second->comms[li], __ATOMIC_ACQUIRE);
  }

  // ---------------------------------------------------------- shutdown --

  /// Aborts every communicator, each from its own thread (see the file
  /// comment). Never throws.
  void abortAll() noexcept {
    if (aborted)
      return;
    aborted = true;
    std::vector<std::pair<ncclComm_t, std::string>> all;
    try {
      for (ncclComm_t *slot : liveSlots()) {
        std::string name = describe(*slot);
        all.emplace_back(__atomic_exchange_n(slot, nullptr, __ATOMIC_ACQ_REL), std::move(name));
      }
    } catch (...) {
      // Out of memory while listing: abort what is reachable, one by one.
      for (auto &t : teams)
        for (auto &c : t->comms)
          if (ncclComm_t comm = __atomic_exchange_n(&c, nullptr, __ATOMIC_ACQ_REL))
            (void)ncclCommAbort(comm);
      for (auto &c : world)
        if (ncclComm_t comm = __atomic_exchange_n(&c, nullptr, __ATOMIC_ACQ_REL))
          (void)ncclCommAbort(comm);
      return;
    }
    std::vector<ncclResult_t> results(all.size(), ncclSuccess);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < all.size(); ++i) {
      try {
        threads.emplace_back([&results, &all, i] { results[i] = ncclCommAbort(all[i].first); });
      } catch (...) {
        results[i] = ncclCommAbort(all[i].first); // No thread: abort inline.
      }
    }
    for (std::thread &t : threads)
      t.join();
    for (size_t i = 0; i < all.size(); ++i)
      if (results[i] != ncclSuccess)
        std::fprintf(stderr, "shardcheck: warning: ncclCommAbort of %s failed: %s\n",
                     all[i].second.c_str(), ncclMessage(results[i], nullptr).c_str());
  }

  /// ncclCommFinalize for every communicator in one group (the intra-node
  /// barrier it runs needs all local ranks at once), polled against the
  /// deadline, then ncclCommDestroy, teams before the world.
  void finalizeAndDestroy() {
    std::vector<ncclComm_t *> all = liveSlots();
    if (all.empty())
      return;
    SC_NCCL(ncclGroupStart());
    try {
      for (ncclComm_t *slot : all)
        SC_NCCL_C(ncclCommFinalize(*slot), *slot);
    } catch (...) {
      (void)ncclGroupEnd();
      throw;
    }
    SC_NCCL(ncclGroupEnd());
    waitReady(all, options.timeoutSeconds, "ncclCommFinalize");
    for (ncclComm_t *slot : all) {
      ncclComm_t comm = *slot;
      SC_NCCL_C(ncclCommDestroy(comm), comm);
      __atomic_store_n(slot, nullptr, __ATOMIC_RELEASE);
    }
  }

  void shutdown() noexcept {
    if (!aborted) {
      if (healthy) {
        try {
          finalizeAndDestroy();
        } catch (const std::exception &e) {
          std::fprintf(stderr,
                       "shardcheck: warning: orderly NCCL shutdown failed (%s); aborting the "
                       "communicators\n",
                       e.what());
          abortAll();
        }
      } else {
        abortAll(); // Init failed or never finished.
      }
    }
    for (size_t i = 0; i < streams.size(); ++i)
      if (streams[i]) {
        warnCuda(cudaSetDevice(gpus[i]), "cudaSetDevice");
        warnCuda(cudaStreamDestroy(streams[i]), "cudaStreamDestroy");
        streams[i] = nullptr;
      }
  }

  // ---------------------------------------------------------- identity --

  /// A stream-ordered buffer of `count` identity elements of `op` on local
  /// index `li` (free it with cudaFreeAsync on the same stream).
  void *identityBuffer(int li, ElementType t, ReduceOp op, int64_t count) {
    size_t bytes = static_cast<size_t>(count) * elementSize(t);
    cudaStream_t s = streams[li];
    SC_CUDA(cudaSetDevice(gpus[li]));
    void *p = nullptr;
    SC_CUDA(cudaMallocAsync(&p, bytes, s));
    std::vector<unsigned char> element = identityElement(t, op);
    bool uniform = std::all_of(element.begin(), element.end(),
                               [&](unsigned char b) { return b == element[0]; });
    try {
      if (uniform) {
        SC_CUDA(cudaMemsetAsync(p, element[0], bytes, s));
        return p;
      }
      auto &pattern = identityPatterns[{static_cast<int>(t), static_cast<int>(op)}];
      if (pattern.empty())
        for (int i = 0; i < 4096; ++i)
          pattern.insert(pattern.end(), element.begin(), element.end());
      size_t have = std::min(bytes, pattern.size());
      SC_CUDA(cudaMemcpyAsync(p, pattern.data(), have, cudaMemcpyHostToDevice, s));
      while (have < bytes) { // Doubling device-to-device copies.
        size_t n = std::min(have, bytes - have);
        SC_CUDA(cudaMemcpyAsync(static_cast<char *>(p) + have, p, n, cudaMemcpyDeviceToDevice, s));
        have += n;
      }
      return p;
    } catch (...) {
      warnCuda(cudaFreeAsync(p, s), "cudaFreeAsync");
      throw;
    }
  }
};

/// runCollective and waitAll reach the Impl through this.
struct NcclWorldAccess {
  static NcclWorld::Impl &of(NcclWorld &w) { return *w.impl_; }
  static std::unique_ptr<NcclWorld> make() { return std::unique_ptr<NcclWorld>(new NcclWorld()); }
};

// ------------------------------------------------------------- NcclWorld --

NcclWorld::NcclWorld() : impl_(std::make_unique<Impl>()) {}

NcclWorld::~NcclWorld() {
  if (impl_)
    impl_->shutdown();
}

std::unique_ptr<NcclWorld> NcclWorld::singleProcess(const std::vector<int> &gpus,
                                                    const NcclOptions &options) {
  auto world = NcclWorldAccess::make();
  world->impl_->options = options;
  world->impl_->initSingleProcess(gpus); // On a throw, ~NcclWorld aborts what exists.
  return world;
}

std::unique_ptr<NcclWorld>
NcclWorld::multiProcess(int worldRank, int worldSize, int gpu,
                        const std::function<void(void *data, size_t bytes)> &broadcastFromRank0,
                        const NcclOptions &options) {
  auto world = NcclWorldAccess::make();
  world->impl_->options = options;
  world->impl_->initMultiProcess(worldRank, worldSize, gpu, broadcastFromRank0);
  return world;
}

int NcclWorld::localGpuFromEnvironment() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"}) {
    const char *v = std::getenv(name);
    if (!v || !*v)
      continue;
    char *end = nullptr;
    long r = std::strtol(v, &end, 10);
    if (end && *end == '\0' && r >= 0 && r <= std::numeric_limits<int>::max())
      return static_cast<int>(r);
  }
  return 0;
}

std::vector<int> NcclWorld::localRanks() const {
  return impl_->ranks;
}

bool NcclWorld::isLocal(int worldRank) const {
  return impl_->localIndex(worldRank) >= 0;
}

int NcclWorld::gpuOf(int worldRank) const {
  return impl_->gpus[impl_->requireLocal(worldRank, "NcclWorld::gpuOf")];
}

void *NcclWorld::streamOf(int worldRank) const {
  return impl_->streams[impl_->requireLocal(worldRank, "NcclWorld::streamOf")];
}

int NcclWorld::worldSize() const {
  return impl_->worldSize;
}

bool NcclWorld::drivesAllRanks() const {
  return impl_->singleProcess;
}

const NcclOptions &NcclWorld::options() const {
  return impl_->options;
}

void NcclWorld::prepareTeams(const std::vector<std::vector<int>> &allTeams) {
  Impl &w = *impl_;
  w.requireUsable();
  for (const auto &members : allTeams)
    validateMembers(members, w.worldSize, "NcclWorld::prepareTeams");
  try {
    for (const auto &members : allTeams)
      if (!isWorldInOrder(members, w.worldSize) && !w.teamByMembers.count(members))
        w.createTeam(members);
  } catch (const NcclError &e) {
    w.abortAll();
    throw NcclError(std::string(e.what()) + "; communicators aborted");
  }
}

void *NcclWorld::teamComm(int worldRank, const std::vector<int> &members) {
  Impl &w = *impl_;
  w.requireUsable();
  int li = w.requireLocal(worldRank, "NcclWorld::teamComm");
  validateMembers(members, w.worldSize, "NcclWorld::teamComm");
  try {
    return w.commOf(li, members);
  } catch (const NcclError &e) {
    if (w.aborted || (!w.singleProcess && !w.teamByMembers.count(members)))
      throw; // Not prepared (nothing to abort), or already aborted.
    w.abortAll();
    throw NcclError(std::string(e.what()) + "; communicators aborted");
  }
}

void *NcclWorld::worldComm(int worldRank) const {
  return impl_->world[impl_->requireLocal(worldRank, "NcclWorld::worldComm")];
}

void NcclWorld::abort() {
  impl_->abortAll();
}

bool NcclWorld::aborted() const {
  return impl_->aborted;
}

// ---------------------------------------------------------- collectives --

std::vector<int> communicatorMembers(const NcclCall &call, int worldSize) {
  if (call.kind == CollectiveType::SendRecv) {
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
  if (call.kind == CollectiveType::SendRecv) {
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
  if (call.kind == CollectiveType::SendRecv) {
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

void runCollective(NcclWorld &world, const NcclCall &call, const std::map<int, const void *> &send,
                   const std::map<int, void *> &recv) {
  NcclWorld::Impl &w = NcclWorldAccess::of(world);
  w.requireUsable();
  validateCall(call, w.worldSize);
  const std::string what = callText(call);
  const size_t esz = elementSize(call.dataType);
  const ncclDataType_t dt = ncclType(call.dataType);
  const ncclRedOp_t op = ncclOp(call.reduceOp);
  const int64_t k = call.count;
  const int n = static_cast<int>(call.team.size());
  const std::vector<int> members = communicatorMembers(call, w.worldSize);
  const bool rootInTeam =
      isRootedCollective(call.kind) &&
      std::find(call.team.begin(), call.team.end(), *call.root) != call.team.end();

  auto sendOf = [&](int rank) -> const void * {
    auto it = send.find(rank);
    return it == send.end() ? nullptr : it->second;
  };
  auto recvOf = [&](int rank) -> void * {
    auto it = recv.find(rank);
    return it == recv.end() ? nullptr : it->second;
  };
  auto need = [&](bool present, int rank, const char *buffer) {
    if (!present)
      throw NcclError(what + ": world rank " + std::to_string(rank) + " has no " + buffer +
                      " buffer");
  };
  auto position = [&](int rank) {
    auto it = std::find(members.begin(), members.end(), rank);
    return it == members.end() ? -1 : static_cast<int>(it - members.begin());
  };

  // Buffers first: a missing one is an argument error (nothing aborted).
  for (size_t li = 0; li < w.ranks.size(); ++li) {
    int me = w.ranks[li];
    if (call.kind == CollectiveType::SendRecv) {
      for (size_t i = 0; i < call.pairs.size(); ++i) {
        if (pairCount(call, i) == 0)
          continue;
        if (call.pairs[i].first == me)
          need(sendOf(me), me, "send");
        if (call.pairs[i].second == me)
          need(recvOf(me), me, "recv");
      }
      continue;
    }
    int pos = position(me);
    if (pos < 0)
      continue;
    bool member = pos < n;
    bool isRoot = call.root && *call.root == me;
    bool sends = false, receives = false;
    switch (call.kind) {
    case CollectiveType::Allgather:
    case CollectiveType::AllToAll:
    case CollectiveType::Allreduce:
    case CollectiveType::ReduceScatter:
      sends = receives = member && k > 0;
      break;
    case CollectiveType::Gather:
    case CollectiveType::Reduce:
      sends = member && k > 0;
      receives = isRoot && k > 0;
      break;
    case CollectiveType::Scatter:
    case CollectiveType::Broadcast:
      sends = isRoot && k > 0;
      receives = member && k > 0;
      break;
    case CollectiveType::AllToAllv: {
      int64_t out = 0, in = 0;
      for (int j = 0; j < n; ++j)
        out += call.counts[pos][j], in += call.counts[j][pos];
      sends = out > 0;
      receives = in > 0;
      break;
    }
    case CollectiveType::SendRecv:
    case CollectiveType::CollectivePermute: // Refused by validateCall.
      break;
    }
    if (sends)
      need(sendOf(me), me, "send");
    if (receives)
      need(recvOf(me), me, "recv");
  }

  // Nothing moves: every process sees the same counts and skips alike.
  if (call.kind != CollectiveType::SendRecv && call.kind != CollectiveType::AllToAllv && k == 0)
    return;
  // A team must be prepared in multi-process mode (its creation is
  // collective); every process fails here alike, participant or not.
  if (!w.singleProcess && call.kind != CollectiveType::SendRecv &&
      !isWorldInOrder(members, w.worldSize) && !w.teamByMembers.count(members))
    throw NcclError(what + ": its communicator " + ranksText(members) +
                    " was not prepared: in multi-process mode every process must call "
                    "NcclWorld::prepareTeams with it (communicatorMembers) before running steps");

  try {
    DeviceGuard guard;
    // Communicators of the local participants (may create a team in
    // single-process mode).
    std::vector<ncclComm_t> comms(w.ranks.size(), nullptr);
    for (size_t li = 0; li < w.ranks.size(); ++li) {
      if (call.kind == CollectiveType::SendRecv)
        comms[li] = w.world[li];
      else if (position(w.ranks[li]) >= 0) {
        comms[li] = w.commOf(static_cast<int>(li), members);
        if (!comms[li])
          throw NcclError(what + ": no communicator for " + w.rankText(static_cast<int>(li)));
      }
    }

    // Local work before the group: copies to self, identity buffers.
    Temporaries temps;
    std::vector<void *> identity(w.ranks.size(), nullptr);
    for (size_t li = 0; li < w.ranks.size(); ++li) {
      int me = w.ranks[li];
      cudaStream_t s = w.streams[li];
      if (call.kind == CollectiveType::SendRecv) {
        for (size_t i = 0; i < call.pairs.size(); ++i) {
          int64_t c = pairCount(call, i);
          if (c > 0 && call.pairs[i].first == me && call.pairs[i].second == me) {
            SC_CUDA(cudaSetDevice(w.gpus[li]));
            SC_CUDA(cudaMemcpyAsync(recvOf(me), sendOf(me), static_cast<size_t>(c) * esz,
                                    cudaMemcpyDeviceToDevice, s));
          }
        }
      } else if (call.kind == CollectiveType::AllToAllv) {
        int r = position(me);
        if (r >= 0 && call.counts[r][r] > 0) {
          int64_t sendAt = 0, recvAt = 0;
          for (int j = 0; j < r; ++j)
            sendAt += call.counts[r][j], recvAt += call.counts[j][r];
          SC_CUDA(cudaSetDevice(w.gpus[li]));
          SC_CUDA(cudaMemcpyAsync(static_cast<char *>(recvOf(me)) + recvAt * esz,
                                  static_cast<const char *>(sendOf(me)) + sendAt * esz,
                                  static_cast<size_t>(call.counts[r][r]) * esz,
                                  cudaMemcpyDeviceToDevice, s));
        }
      } else if (call.kind == CollectiveType::Reduce && !rootInTeam && *call.root == me) {
        identity[li] = w.identityBuffer(static_cast<int>(li), call.dataType, call.reduceOp, k);
        temps.entries.push_back({w.gpus[li], s, identity[li]});
      }
    }

    // The group: every local rank's part of the collective.
    std::vector<ncclComm_t> used;
    SC_NCCL(ncclGroupStart());
    try {
      for (size_t li = 0; li < w.ranks.size(); ++li) {
        ncclComm_t comm = comms[li];
        if (!comm)
          continue;
        int me = w.ranks[li];
        cudaStream_t s = w.streams[li];
        const void *sb = sendOf(me);
        void *rb = recvOf(me);
        used.push_back(comm);
        if (call.kind == CollectiveType::SendRecv) {
          for (size_t i = 0; i < call.pairs.size(); ++i) {
            auto [src, dst] = call.pairs[i];
            size_t c = static_cast<size_t>(pairCount(call, i));
            if (c == 0 || src == dst)
              continue;
            if (src == me)
              SC_NCCL_C(ncclSend(sb, c, dt, dst, comm, s), comm);
            if (dst == me)
              SC_NCCL_C(ncclRecv(rb, c, dt, src, comm, s), comm);
          }
          continue;
        }
        int pos = position(me);
        bool member = pos < n;
        bool isRoot = call.root && *call.root == me;
        int rootRank = call.root ? position(*call.root) : 0;
        size_t kk = static_cast<size_t>(k);
        switch (call.kind) {
        case CollectiveType::Allgather:
          SC_NCCL_C(ncclAllGather(sb, rb, kk, dt, comm, s), comm);
          break;
        case CollectiveType::AllToAll:
          SC_NCCL_C(ncclAlltoAll(sb, rb, kk, dt, comm, s), comm);
          break;
        case CollectiveType::Allreduce:
          SC_NCCL_C(ncclAllReduce(sb, rb, kk, dt, op, comm, s), comm);
          break;
        case CollectiveType::ReduceScatter:
          SC_NCCL_C(ncclReduceScatter(sb, rb, kk, dt, op, comm, s), comm);
          break;
        case CollectiveType::Broadcast: {
          // Non-roots receive in place; a root outside the team broadcasts in
          // place from its send buffer (NCCL writes nothing there).
          const void *from = isRoot ? sb : rb;
          void *to = member ? rb : const_cast<void *>(sb);
          SC_NCCL_C(ncclBroadcast(from, to, kk, dt, rootRank, comm, s), comm);
          break;
        }
        case CollectiveType::Reduce: {
          const void *from = member ? sb : identity[li];
          SC_NCCL_C(ncclReduce(from, isRoot ? rb : nullptr, kk, dt, op, rootRank, comm, s), comm);
          break;
        }
        case CollectiveType::Gather:
          if (rootInTeam) {
            SC_NCCL_C(ncclGather(sb, rb, kk, dt, rootRank, comm, s), comm);
          } else { // The root (last) only receives.
            if (member)
              SC_NCCL_C(ncclSend(sb, kk, dt, rootRank, comm, s), comm);
            if (isRoot)
              for (int i = 0; i < n; ++i)
                SC_NCCL_C(ncclRecv(static_cast<char *>(rb) + i * kk * esz, kk, dt, i, comm, s),
                          comm);
          }
          break;
        case CollectiveType::Scatter:
          if (rootInTeam) {
            SC_NCCL_C(ncclScatter(sb, rb, kk, dt, rootRank, comm, s), comm);
          } else { // The root (last) only sends.
            if (isRoot)
              for (int i = 0; i < n; ++i)
                SC_NCCL_C(
                    ncclSend(static_cast<const char *>(sb) + i * kk * esz, kk, dt, i, comm, s),
                    comm);
            if (member)
              SC_NCCL_C(ncclRecv(rb, kk, dt, rootRank, comm, s), comm);
          }
          break;
        case CollectiveType::AllToAllv: {
          int64_t sendAt = 0, recvAt = 0;
          for (int j = 0; j < n; ++j) {
            int64_t out = call.counts[pos][j], in = call.counts[j][pos];
            if (j != pos && out > 0)
              SC_NCCL_C(ncclSend(static_cast<const char *>(sb) + sendAt * esz,
                                 static_cast<size_t>(out), dt, j, comm, s),
                        comm);
            if (j != pos && in > 0)
              SC_NCCL_C(ncclRecv(static_cast<char *>(rb) + recvAt * esz, static_cast<size_t>(in),
                                 dt, j, comm, s),
                        comm);
            sendAt += out;
            recvAt += in;
          }
          break;
        }
        case CollectiveType::SendRecv:
        case CollectiveType::CollectivePermute: // Refused by validateCall.
          break;
        }
      }
    } catch (...) {
      (void)ncclGroupEnd();
      throw;
    }
    ncclResult_t r = SC_NCCL(ncclGroupEnd());
    if (r == ncclInProgress) {
      std::vector<ncclComm_t *> slots;
      for (ncclComm_t &c : used)
        slots.push_back(&c);
      w.waitReady(slots, w.options.timeoutSeconds, "enqueuing " + what);
    }
  } catch (const NcclError &e) {
    w.abortAll();
    throw NcclError(std::string(e.what()) + "; communicators aborted");
  }
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
