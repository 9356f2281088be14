// The mpi backend's processes; see MpiCoordinator.h.
#include "executor/mpi/MpiCoordinator.h"

#include "executor/core/RunSupport.h"

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>
#include <unistd.h>

namespace shardcheck {

struct MpiCoordinator::Comms {
  std::map<std::vector<int>, MPI_Comm> byRanks; ///< Teams, by world rank.
  MPI_Comm job = MPI_COMM_WORLD;                ///< The processes running the plan (joinJob).
};

namespace {

int count(int64_t n) {
  SC_ASSERT(n >= 0 && n <= INT_MAX, "buffer too large for one MPI call");
  return static_cast<int>(n);
}

/// The tag of the empty messages members exchange before creating a team's
/// communicator; SendRecv tags stay below it.
constexpr int kMeetingTag = 30000;

/// Polls `done` until it returns true (then true) or `seconds` pass (then
/// false). Spins, yielding, for the first 10 ms, in which a live team's
/// collective ends (and --repeat times it); then sleeps 100 us between polls,
/// so that a long wait costs next to no CPU.
bool pollWithin(double seconds, const std::function<bool()> &done) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  for (;;) {
    if (done())
      return true;
    std::chrono::duration<double> waited = Clock::now() - start;
    if (waited.count() >= seconds)
      return false;
    if (waited.count() < 0.01)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::string ranksText(const std::vector<int> &ranks) {
  std::string s;
  for (int r : ranks)
    s += (s.empty() ? "" : " ") + std::to_string(r);
  return "(" + s + ")";
}

/// SHARDCHECK_TEST_MPI_STOP=RANK:STEP (see MpiBackend.h), or nullopt.
std::optional<std::pair<int, size_t>> testStopFromEnvironment() {
  const char *v = std::getenv("SHARDCHECK_TEST_MPI_STOP");
  if (!v)
    return std::nullopt;
  std::string text(v);
  size_t colon = text.find(':');
  int rank = 0;
  size_t step = 0;
  const char *end = text.data() + text.size();
  if (colon == std::string::npos ||
      std::from_chars(text.data(), text.data() + colon, rank).ptr != text.data() + colon ||
      std::from_chars(text.data() + colon + 1, end, step).ptr != end)
    return std::nullopt;
  return std::make_pair(rank, step);
}

} // namespace

MpiCoordinator::MpiCoordinator(double timeoutSeconds)
    : timeoutSeconds_(timeoutSeconds), comms_(std::make_unique<Comms>()),
      stopBefore_(testStopFromEnvironment()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    ownsMpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  worldSize_ = size_;
}

MpiCoordinator::~MpiCoordinator() {
  if (comms_->job != MPI_COMM_WORLD)
    MPI_Comm_free(&comms_->job);
  for (auto &[ranks, comm] : comms_->byRanks)
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  if (ownsMpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
      return;
    // MPI_Finalize waits for every process; a missing one is caught here.
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    complete(&barrier, 1, [] { return std::string("the other processes to finish the run"); });
    MPI_Finalize();
  }
}

void MpiCoordinator::complete(void *requests, int n, const std::function<std::string()> &what) {
  auto *r = static_cast<MPI_Request *>(requests);
  bool done = pollWithin(timeoutSeconds_, [&] {
    int flag = 0;
    MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
    return flag != 0;
  });
  if (!done)
    abortWaiting(what());
}

void MpiCoordinator::abortWaiting(const std::string &what) const {
  int64_t d = localDevice();
  std::string device = d < 0 ? "" : " (plan device " + std::to_string(d) + ")";
  std::fprintf(stderr,
               "shardcheck: error: mpi rank %d%s waited %g s (--timeout-s) for %s; another "
               "process is stopped, hung or dead: ending the job (MPI_Abort, exit status %d)\n",
               rank_, device.c_str(), timeoutSeconds_, what.c_str(), kTimeoutExitStatus);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kTimeoutExitStatus);
  std::_Exit(kTimeoutExitStatus); // MPI_Abort does not return; should it, end anyway.
}

std::string MpiCoordinator::collectiveStep(const std::string &input,
                                           const std::string &output) const {
  auto it = collectiveSteps_.find({input, output});
  if (it == collectiveSteps_.end())
    return "the collective " + input + " -> " + output;
  return "step " + std::to_string(it->second) + " (" + steps_[it->second] + ")";
}

std::string MpiCoordinator::collectiveWait(const CollectiveCall &call,
                                           const std::vector<int64_t> &devices) const {
  std::vector<int> ranks;
  for (int64_t d : devices)
    ranks.push_back(rankOf(d));
  return "the " + std::string(collectiveTypeName(call.kind)) + " over ranks " + ranksText(ranks) +
         " of " + collectiveStep(call.inputName, call.outputName);
}

std::string MpiCoordinator::agreementStep() const {
  if (agreements_ < steps_.size())
    return "the outcome of step " + std::to_string(agreements_) + " (" + steps_[agreements_] + ")";
  return steps_.empty() ? "a step's outcome" : "the start of a timed run (--repeat)";
}

void MpiCoordinator::stepBegins(size_t step) {
  if (!stopBefore_ || stopBefore_->first != rank_ || stopBefore_->second != step)
    return;
  stopBefore_.reset();
  std::fprintf(stderr,
               "shardcheck: test hook SHARDCHECK_TEST_MPI_STOP: rank %d (pid %ld) stops itself "
               "before step %zu\n",
               rank_, static_cast<long>(getpid()), step);
  std::fflush(stderr);
  std::raise(SIGSTOP);
}

void MpiCoordinator::runBegins(const Plan &plan) {
  steps_.clear();
  collectiveSteps_.clear();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &step = plan.steps[i];
    steps_.push_back(describeStep(plan, step));
    if (step.kind == StepKind::Collective && !step.inputs.empty())
      collectiveSteps_.emplace(std::make_pair(step.inputs[0], step.output), i);
  }
  agreements_ = 0;
  stepBegins(0);
}

std::vector<int64_t> MpiCoordinator::localDevices(const std::vector<int64_t> &planDevices) {
  if (static_cast<int>(planDevices.size()) != size_)
    throwInputError("mpi-processes",
                    "the plan has " + std::to_string(planDevices.size()) +
                        " device(s) and the mpi backend runs one process per device; run it "
                        "with mpirun -np " +
                        std::to_string(planDevices.size()) + " (got " + std::to_string(size_) + ")",
                    SourceLoc{});
  rankOfDevice_.clear();
  for (size_t r = 0; r < planDevices.size(); ++r)
    rankOfDevice_[planDevices[r]] = static_cast<int>(r);
  return {planDevices[rank_]};
}

int64_t MpiCoordinator::localDevice() const {
  for (const auto &[d, r] : rankOfDevice_)
    if (r == rank_)
      return d;
  return -1;
}

int MpiCoordinator::nextTag() {
  return ++tag_ % kMeetingTag;
}

int MpiCoordinator::rankOf(int64_t device) const {
  auto it = rankOfDevice_.find(device);
  SC_ASSERT(it != rankOfDevice_.end(), "device " + std::to_string(device) + " has no process");
  return it->second;
}

void *MpiCoordinator::commOf(const std::vector<int64_t> &members, const std::string &input,
                             const std::string &output) {
  std::vector<int> ranks;
  for (int64_t d : members)
    ranks.push_back(rankOf(d));
  if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end())
    return nullptr;
  auto it = comms_->byRanks.find(ranks);
  if (it == comms_->byRanks.end()) {
    meet(ranks, input, output);
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

void MpiCoordinator::meet(const std::vector<int> &ranks, const std::string &input,
                          const std::string &output) {
  char token = 0;
  std::vector<char> received(ranks.size());
  std::vector<MPI_Request> requests;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == rank_)
      continue;
    requests.emplace_back();
    MPI_Isend(&token, 0, MPI_BYTE, ranks[i], kMeetingTag, MPI_COMM_WORLD, &requests.back());
    requests.emplace_back();
    MPI_Irecv(&received[i], 0, MPI_BYTE, ranks[i], kMeetingTag, MPI_COMM_WORLD, &requests.back());
  }
  complete(requests.data(), static_cast<int>(requests.size()), [&] {
    return "ranks " + ranksText(ranks) + " to meet and create their communicator for " +
           collectiveStep(input, output);
  });
}

/// Broadcasts a string from `root` of the job.
std::string MpiCoordinator::broadcastString(const std::string &s, int root) {
  auto what = [&] {
    return "rank " + std::to_string(root) + " to share its failure of " + agreementStep();
  };
  int length = static_cast<int>(s.size());
  MPI_Request request;
  MPI_Ibcast(&length, 1, MPI_INT, root, comms_->job, &request);
  complete(&request, 1, what);
  std::string out = rank_ == root ? s : std::string(static_cast<size_t>(length), '\0');
  MPI_Ibcast(out.data(), length, MPI_CHAR, root, comms_->job, &request);
  complete(&request, 1, what);
  return out;
}

namespace {

nlohmann::json checkToJson(const TensorCheck &t) {
  const OutputComparison &c = t.comparison;
  nlohmann::json j = {{"tensor", c.tensor},
                      {"name", c.name},
                      {"dtype", static_cast<int>(c.dtype)},
                      {"rtol", c.tolerance.rtol},
                      {"atol", c.tolerance.atol},
                      {"compared", c.compared},
                      {"mismatched", c.mismatched},
                      {"max_abs", c.maxAbsError},
                      {"max_rel", c.maxRelError},
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
    c.firstMismatch = Mismatch{
        f["device"].get<int64_t>(), f["slot"].get<int64_t>(),
        f["index"].get<std::vector<int64_t>>(),
        f["got"].is_number() ? f["got"].get<double>() : std::numeric_limits<double>::quiet_NaN(),
        f["expected"].is_number() ? f["expected"].get<double>()
                                  : std::numeric_limits<double>::quiet_NaN()};
  }
  return t;
}

} // namespace

std::optional<RunFailure> MpiCoordinator::agreeOnFailure(const std::optional<RunFailure> &local) {
  int mine = local ? rank_ : INT_MAX, first = INT_MAX;
  MPI_Request request;
  MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comms_->job, &request);
  complete(&request, 1, [&] { return "every rank to agree on " + agreementStep(); });
  if (first == INT_MAX) {
    stepBegins(++agreements_);
    return std::nullopt;
  }
  nlohmann::json j;
  if (rank_ == first)
    j = {{"step", local->step}, {"kind", local->kind}, {"message", local->message}};
  nlohmann::json shared = nlohmann::json::parse(broadcastString(j.dump(), first));
  ++agreements_;
  return RunFailure{shared["step"].get<size_t>(), shared["kind"].get<std::string>(),
                    shared["message"].get<std::string>()};
}

std::vector<TensorCheck> MpiCoordinator::gatherChecks(const std::vector<TensorCheck> &local) {
  nlohmann::json mine = nlohmann::json::array();
  for (const TensorCheck &t : local)
    mine.push_back(checkToJson(t));
  std::string text = mine.dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(size_));
  auto what = [] { return std::string("every rank's tensor checks (gathered at rank 0)"); };
  MPI_Request request;
  MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comms_->job, &request);
  complete(&request, 1, what);
  std::vector<int> displs(static_cast<size_t>(size_), 0);
  int total = 0;
  for (int r = 0; r < size_; ++r)
    displs[r] = total, total += lengths[r];
  std::string all(static_cast<size_t>(rank_ == 0 ? total : 0), '\0');
  MPI_Igatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR,
               0, comms_->job, &request);
  complete(&request, 1, what);
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

void MpiCoordinator::broadcastBytes(void *data, size_t bytes) {
  MPI_Request request;
  MPI_Ibcast(data, count(static_cast<int64_t>(bytes)), MPI_BYTE, 0, comms_->job, &request);
  complete(&request, 1, [] { return std::string("rank 0's broadcast (NCCL's unique id)"); });
}

int MpiCoordinator::agreeOnStatus(int status) {
  MPI_Request request;
  MPI_Ibcast(&status, 1, MPI_INT, 0, comms_->job, &request);
  complete(&request, 1, [] { return std::string("rank 0's exit status"); });
  return status;
}

} // namespace shardcheck

namespace shardcheck {

bool MpiCoordinator::joinJob(int processes) {
  processes = std::min(processes, worldSize_);
  if (comms_->job != MPI_COMM_WORLD)
    MPI_Comm_free(&comms_->job);
  comms_->job = MPI_COMM_WORLD;
  size_ = processes;
  // SendRecv tags count within one plan, which every job member runs.
  tag_ = 0;
  if (processes == worldSize_)
    return true;
  MPI_Comm job;
  MPI_Comm_split(MPI_COMM_WORLD, rank_ < processes ? 0 : MPI_UNDEFINED, rank_, &job);
  if (job == MPI_COMM_NULL)
    return false;
  comms_->job = job;
  return true;
}

} // namespace shardcheck
