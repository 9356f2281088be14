// Small enums of the IR with their nvFuser spellings.
//
// Each enum has a `...Name()` that prints nvFuser's current spelling and a
// `parse...()` that accepts every spelling listed in NVFUSER_DUMPS.md. Spellings
// the IR keeps but does not interpret (e.g. an unusual load/store op) travel as
// strings on the nodes themselves.
#pragma once

#include "ir/Collectives.h" // CollectiveType

#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

/// nvFuser's IterType, printed as the first letter of an IterDomain.
enum class IterType {
  Iteration,       // i
  Broadcast,       // b
  Reduction,       // r
  Stride,          // s
  GatherScatter,   // n
  VectorComponent, // v
  Symbolic,        // ?
};

char iterTypeLetter(IterType t);
std::optional<IterType> parseIterTypeLetter(char c);

/// Parallel types. Only the DIDs shard data across devices; Stream splits work
/// in time on one device; the rest are intra-GPU and kept for printing.
enum class ParallelType {
  DIDx,
  DIDy,
  DIDz,
  Stream,
  BIDx,
  BIDy,
  BIDz,
  TIDx,
  TIDy,
  TIDz,
  Vectorize,           // V
  MisalignedVectorize, // MV (old)
  Unroll,              // UR
  Unswitch,            // US
  Mma,                 // MMA
  Group,               // G
  Bulk,                // B
  Serial,              // S
};

/// nvFuser's current printed spelling (`deviceIdx.x`, `S`, `streamIdx`, ...).
const char *parallelTypeName(ParallelType p);
/// Short human name used in messages: `DIDx`, `Serial`, ...
const char *parallelTypeShortName(ParallelType p);
bool isDeviceDim(ParallelType p);
/// DIDx -> 0, DIDy -> 1, DIDz -> 2; requires isDeviceDim.
int deviceDimIndex(ParallelType p);
ParallelType deviceDimFromIndex(int i);

/// Matches the longest parallel-type spelling at the start of `s` (all
/// spellings of all versions). Returns the type and the characters consumed.
std::optional<std::pair<ParallelType, size_t>> matchParallelType(std::string_view s);

/// nvFuser's memory types: g(lobal), l(ocal), s(hared), t(ensor), sym(metric).
enum class MemoryType { Global, Local, Shared, Tensor, Symmetric };
const char *memoryTypeName(MemoryType m);
std::optional<MemoryType> parseMemoryType(std::string_view s);

/// Data types. `Unknown` is a dump that prints no dtype (before Sep 2024).
enum class DataType {
  Unknown,
  Float,
  Double,
  Half,
  BFloat16,
  Float8_e4m3,
  Float8_e5m2,
  Float8_e8m0,
  Float4_e2m1,
  Int32,
  Int64,
  Int8,
  UInt8,
  Int16,
  UInt16,
  UInt32,
  UInt64,
  Bool,
  Index,
  ComplexFloat,
  ComplexDouble, ///< The last (ir/json/JsonSpellings.cpp walks Float .. ComplexDouble).
};

/// nvFuser's spelling inside a tensor name (`float`, `__bfloat`, ...); empty
/// for Unknown.
const char *dataTypeName(DataType d);
std::optional<DataType> parseDataType(std::string_view s);
/// Bytes per element; 0 for Unknown, 1 for the sub-byte fp4 (rounded up).
int dataTypeSize(DataType d);

} // namespace shardcheck
