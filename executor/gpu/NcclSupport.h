// The NCCL layer's own helpers (internal to executor/gpu/, not a public
// header): CUDA and NCCL error checks that throw NcclError, the poller that
// bounds every wait, team texts and checks, and the identity element of a
// reduction in every element type.
//
// This file does not hold communicators (NcclWorldImpl.h) or run
// collectives (NcclCollectives.cpp).
#pragma once

#include "executor/gpu/NcclTeams.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace shardcheck::gpu {

// ---------------------------------------------------------------- errors --

/// "ncclAllGather" from "ncclAllGather(sb, rb, ...)".
inline std::string callName(const char *expr) {
  std::string s(expr);
  size_t paren = s.find('(');
  return paren == std::string::npos ? s : s.substr(0, paren);
}

inline std::string where(const char *file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": ";
}

inline std::string cudaMessage(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

/// NCCL's name for `r`, and its last error text when it has one.
inline std::string ncclMessage(ncclResult_t r, ncclComm_t comm) {
  std::string m = ncclGetErrorString(r);
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    m += std::string(" (") + last + ")";
  return m;
}

inline void checkCuda(cudaError_t e, const char *expr, const char *file, int line) {
  if (e != cudaSuccess)
    throw NcclError(where(file, line) + callName(expr) + " failed: " + cudaMessage(e));
}

/// Lets ncclSuccess and ncclInProgress (non-blocking communicators) through.
inline ncclResult_t checkNccl(ncclResult_t r, const char *expr, const char *file, int line,
                              ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress)
    return r;
  throw NcclError(where(file, line) + callName(expr) + " failed: " + ncclMessage(r, comm));
}

#define SC_CUDA(call) checkCuda((call), #call, __FILE__, __LINE__)
#define SC_NCCL(call) checkNccl((call), #call, __FILE__, __LINE__, nullptr)
#define SC_NCCL_C(call, comm) checkNccl((call), #call, __FILE__, __LINE__, (comm))

/// For destructors and abort paths, which must not throw.
inline void warnCuda(cudaError_t e, const char *what) {
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

inline std::string secondsText(double s) {
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

template <typename T> std::vector<unsigned char> bytesOf(T v) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

/// The identity of `op` as one element of `t` (little-endian bytes): what a
/// Reduce root outside the team contributes.
inline std::vector<unsigned char> identityElement(ElementType t, ReduceOp op) {
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

inline std::string ranksText(const std::vector<int> &ranks) {
  std::string s = "(";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? " " : "") + std::to_string(ranks[i]);
  return s + ")";
}

inline bool isWorldInOrder(const std::vector<int> &members, int worldSize) {
  if (static_cast<int>(members.size()) != worldSize)
    return false;
  for (int i = 0; i < worldSize; ++i)
    if (members[i] != i)
      return false;
  return true;
}

/// A stable, non-negative split color for a members list (FNV-1a). Every
/// process computes the same value; only members pass it.
inline int stableColor(const std::vector<int> &members) {
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

inline void validateMembers(const std::vector<int> &members, int worldSize,
                            const std::string &what) {
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

} // namespace shardcheck::gpu
