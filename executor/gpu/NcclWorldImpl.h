// The state of an NcclWorld (internal to executor/gpu/): its streams, the
// world and team communicators, and how they are created, waited for,
// aborted and finalized. NcclWorld.cpp and NcclCollectives.cpp share it.
//
// Every communicator lives in storage whose address does not change,
// because a non-blocking init or split writes the new communicator into it
// from NCCL's own thread. Aborting: ncclCommAbort of one communicator sets
// its abort flag (which stops its kernels) and then frees it, and freeing
// can wait for the device; a kernel of another communicator still spinning
// on a missing peer would then hold it forever. So every communicator is
// aborted from its own thread at once: all flags are up within
// microseconds, whatever order the frees take. (In single-process mode NCCL
// frees the communicators of one clique only when the last of them is
// aborted, which the threads also satisfy.)
//
// This file does not run collectives (NcclCollectives.cpp).
#pragma once

#include "executor/gpu/NcclSupport.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>

namespace shardcheck::gpu {

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

} // namespace shardcheck::gpu
