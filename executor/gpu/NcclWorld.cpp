// The NCCL world of the GPU backend: creating it, its teams, its accessors
// and aborting it; see NcclTeams.h and NcclWorldImpl.h.
#include "executor/gpu/NcclWorldImpl.h"

#include <cstdlib>

namespace shardcheck::gpu {

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

} // namespace shardcheck::gpu
