// Spellings of the IR's enums; see Types.h.
#include "ir/Types.h"

#include "util/Diagnostics.h"

#include <array>
#include <utility>

namespace shardcheck {

char iterTypeLetter(IterType t) {
  switch (t) {
  case IterType::Iteration:
    return 'i';
  case IterType::Broadcast:
    return 'b';
  case IterType::Reduction:
    return 'r';
  case IterType::Stride:
    return 's';
  case IterType::GatherScatter:
    return 'n';
  case IterType::VectorComponent:
    return 'v';
  case IterType::Symbolic:
    return '?';
  }
  return '?';
}

std::optional<IterType> parseIterTypeLetter(char c) {
  switch (c) {
  case 'i':
    return IterType::Iteration;
  case 'b':
    return IterType::Broadcast;
  case 'r':
    return IterType::Reduction;
  case 's':
    return IterType::Stride;
  case 'n':
    return IterType::GatherScatter;
  case 'v':
    return IterType::VectorComponent;
  case '?':
    return IterType::Symbolic;
  default:
    return std::nullopt;
  }
}

namespace {
struct PtSpelling {
  ParallelType type;
  const char *spelling;
};
// Every spelling of every version. matchParallelType takes the longest match,
// so `US` wins over `U...` and `StreamIdx` over `S`.
constexpr std::array<PtSpelling, 23> kPtSpellings{{
    {ParallelType::DIDx, "deviceIdx.x"},
    {ParallelType::DIDy, "deviceIdx.y"},
    {ParallelType::DIDz, "deviceIdx.z"},
    {ParallelType::Stream, "streamIdx"},
    {ParallelType::Stream, "StreamIdx"},
    {ParallelType::Stream, "Stream"},
    {ParallelType::BIDx, "blockIdx.x"},
    {ParallelType::BIDy, "blockIdx.y"},
    {ParallelType::BIDz, "blockIdx.z"},
    {ParallelType::TIDx, "threadIdx.x"},
    {ParallelType::TIDy, "threadIdx.y"},
    {ParallelType::TIDz, "threadIdx.z"},
    {ParallelType::Vectorize, "V"},
    {ParallelType::MisalignedVectorize, "MV"},
    {ParallelType::Unroll, "UR"},
    {ParallelType::Unswitch, "US"},
    {ParallelType::Mma, "MMA"},
    {ParallelType::Group, "G"},
    {ParallelType::Bulk, "B"},
    {ParallelType::Serial, "S"},
    // Rare spellings seen in old dumps.
    {ParallelType::BIDx, "BIDx"},
    {ParallelType::TIDx, "TIDx"},
    {ParallelType::DIDx, "DIDx"},
}};
} // namespace

const char *parallelTypeName(ParallelType p) {
  for (const auto &s : kPtSpellings)
    if (s.type == p)
      return s.spelling;
  return "S";
}

const char *parallelTypeShortName(ParallelType p) {
  switch (p) {
  case ParallelType::DIDx:
    return "DIDx";
  case ParallelType::DIDy:
    return "DIDy";
  case ParallelType::DIDz:
    return "DIDz";
  case ParallelType::Stream:
    return "Stream";
  case ParallelType::BIDx:
    return "BIDx";
  case ParallelType::BIDy:
    return "BIDy";
  case ParallelType::BIDz:
    return "BIDz";
  case ParallelType::TIDx:
    return "TIDx";
  case ParallelType::TIDy:
    return "TIDy";
  case ParallelType::TIDz:
    return "TIDz";
  case ParallelType::Vectorize:
    return "Vectorize";
  case ParallelType::MisalignedVectorize:
    return "MisalignedVectorize";
  case ParallelType::Unroll:
    return "Unroll";
  case ParallelType::Unswitch:
    return "Unswitch";
  case ParallelType::Mma:
    return "Mma";
  case ParallelType::Group:
    return "Group";
  case ParallelType::Bulk:
    return "Bulk";
  case ParallelType::Serial:
    return "Serial";
  }
  return "Serial";
}

bool isDeviceDim(ParallelType p) {
  return p == ParallelType::DIDx || p == ParallelType::DIDy || p == ParallelType::DIDz;
}

int deviceDimIndex(ParallelType p) {
  SC_ASSERT(isDeviceDim(p), "not a device dim");
  return p == ParallelType::DIDx ? 0 : p == ParallelType::DIDy ? 1 : 2;
}

ParallelType deviceDimFromIndex(int i) {
  SC_ASSERT(i >= 0 && i < 3, "device dim index out of range");
  return i == 0 ? ParallelType::DIDx : i == 1 ? ParallelType::DIDy : ParallelType::DIDz;
}

std::optional<std::pair<ParallelType, size_t>> matchParallelType(std::string_view s) {
  std::optional<std::pair<ParallelType, size_t>> best;
  for (const auto &sp : kPtSpellings) {
    std::string_view w(sp.spelling);
    if (s.substr(0, w.size()) == w && (!best || w.size() > best->second))
      best = std::make_pair(sp.type, w.size());
  }
  return best;
}

const char *memoryTypeName(MemoryType m) {
  switch (m) {
  case MemoryType::Global:
    return "g";
  case MemoryType::Local:
    return "l";
  case MemoryType::Shared:
    return "s";
  case MemoryType::Tensor:
    return "t";
  case MemoryType::Symmetric:
    return "sym";
  }
  return "g";
}

std::optional<MemoryType> parseMemoryType(std::string_view s) {
  if (s == "g")
    return MemoryType::Global;
  if (s == "l")
    return MemoryType::Local;
  if (s == "s")
    return MemoryType::Shared;
  if (s == "t")
    return MemoryType::Tensor;
  if (s == "sym")
    return MemoryType::Symmetric;
  return std::nullopt;
}

namespace {
struct DtSpelling {
  DataType type;
  const char *spelling;
  int size;
};
constexpr std::array<DtSpelling, 22> kDtSpellings{{
    {DataType::Float, "float", 4},
    {DataType::Double, "double", 8},
    {DataType::Half, "__half", 2},
    {DataType::BFloat16, "__bfloat", 2},
    {DataType::Float8_e4m3, "__e4m3", 1},
    {DataType::Float8_e5m2, "__e5m2", 1},
    {DataType::Float8_e8m0, "__e8m0", 1},
    {DataType::Float4_e2m1, "__e2m1", 1},
    {DataType::Int32, "int", 4},
    {DataType::Int64, "int64_t", 8},
    {DataType::Int8, "int8_t", 1},
    {DataType::UInt8, "uint8_t", 1},
    {DataType::Int16, "int16_t", 2},
    {DataType::UInt16, "uint16_t", 2},
    {DataType::UInt32, "uint32_t", 4},
    {DataType::UInt64, "uint64_t", 8},
    {DataType::Bool, "bool", 1},
    {DataType::Index, "nvfuser_index_t", 8},
    {DataType::ComplexFloat, "std::complex<float>", 8},
    {DataType::ComplexDouble, "std::complex<double>", 16},
    // Older or alternative spellings.
    {DataType::Int32, "int32_t", 4},
    {DataType::Half, "half", 2},
}};
} // namespace

const char *dataTypeName(DataType d) {
  if (d == DataType::Unknown)
    return "";
  for (const auto &s : kDtSpellings)
    if (s.type == d)
      return s.spelling;
  return "";
}

std::optional<DataType> parseDataType(std::string_view s) {
  for (const auto &sp : kDtSpellings)
    if (s == sp.spelling)
      return sp.type;
  return std::nullopt;
}

int dataTypeSize(DataType d) {
  for (const auto &s : kDtSpellings)
    if (s.type == d)
      return s.size;
  return 0;
}

} // namespace shardcheck
