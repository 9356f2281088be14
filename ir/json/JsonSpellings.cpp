// Enum spellings of the JSON IR; see JsonSpellings.h.
//
// One table per enum lists every value with its JSON name; name lookup,
// parsing and the "expected one of" lists all come from the same table
// (util/Spellings.h), so a value added to an enum but not to its table shows
// up as a missing name in the round-trip tests rather than as a silently
// wrong spelling.
#include "ir/json/JsonSpellings.h"

#include "util/Spellings.h"

#include <array>
#include <utility>

namespace shardcheck::jsonir {

namespace {

constexpr std::array<Spelling<IterType>, 7> kIterTypes{{
    {IterType::Iteration, "Iteration"},
    {IterType::Broadcast, "Broadcast"},
    {IterType::Reduction, "Reduction"},
    {IterType::Stride, "Stride"},
    {IterType::GatherScatter, "GatherScatter"},
    {IterType::VectorComponent, "VectorComponent"},
    {IterType::Symbolic, "Symbolic"},
}};

constexpr std::array<Spelling<ParallelType>, 18> kParallelTypes{{
    {ParallelType::DIDx, "DIDx"},
    {ParallelType::DIDy, "DIDy"},
    {ParallelType::DIDz, "DIDz"},
    {ParallelType::Stream, "Stream"},
    {ParallelType::BIDx, "BIDx"},
    {ParallelType::BIDy, "BIDy"},
    {ParallelType::BIDz, "BIDz"},
    {ParallelType::TIDx, "TIDx"},
    {ParallelType::TIDy, "TIDy"},
    {ParallelType::TIDz, "TIDz"},
    {ParallelType::Vectorize, "Vectorize"},
    {ParallelType::MisalignedVectorize, "MisalignedVectorize"},
    {ParallelType::Unroll, "Unroll"},
    {ParallelType::Unswitch, "Unswitch"},
    {ParallelType::Mma, "Mma"},
    {ParallelType::Group, "Group"},
    {ParallelType::Bulk, "Bulk"},
    {ParallelType::Serial, "Serial"},
}};

constexpr std::array<Spelling<MemoryType>, 5> kMemoryTypes{{
    {MemoryType::Global, "Global"},
    {MemoryType::Local, "Local"},
    {MemoryType::Shared, "Shared"},
    {MemoryType::Tensor, "Tensor"},
    {MemoryType::Symmetric, "Symmetric"},
}};

// nvFuser's spellings, as dataTypeName prints them; Unknown is absent on
// purpose (the JSON field is omitted for it).
constexpr std::array<Spelling<DataType>, 20> kDataTypes{{
    {DataType::Float, "float"},
    {DataType::Double, "double"},
    {DataType::Half, "__half"},
    {DataType::BFloat16, "__bfloat"},
    {DataType::Float8_e4m3, "__e4m3"},
    {DataType::Float8_e5m2, "__e5m2"},
    {DataType::Float8_e8m0, "__e8m0"},
    {DataType::Float4_e2m1, "__e2m1"},
    {DataType::Int32, "int"},
    {DataType::Int64, "int64_t"},
    {DataType::Int8, "int8_t"},
    {DataType::UInt8, "uint8_t"},
    {DataType::Int16, "int16_t"},
    {DataType::UInt16, "uint16_t"},
    {DataType::UInt32, "uint32_t"},
    {DataType::UInt64, "uint64_t"},
    {DataType::Bool, "bool"},
    {DataType::Index, "nvfuser_index_t"},
    {DataType::ComplexFloat, "std::complex<float>"},
    {DataType::ComplexDouble, "std::complex<double>"},
}};

constexpr std::array<Spelling<Transform::Kind>, 5> kTransformKinds{{
    {Transform::Kind::Split, "Split"},
    {Transform::Kind::Merge, "Merge"},
    {Transform::Kind::Resize, "Resize"},
    {Transform::Kind::Swizzle2D, "Swizzle2D"},
    {Transform::Kind::Swizzle1D, "Swizzle1D"},
}};

constexpr std::array<Spelling<OpKind>, 18> kOpKinds{{
    {OpKind::Set, "Set"},
    {OpKind::Permute, "Permute"},
    {OpKind::SegmenterSet, "SegmenterSet"},
    {OpKind::LoadStore, "LoadStore"},
    {OpKind::Unary, "Unary"},
    {OpKind::Cast, "Cast"},
    {OpKind::Binary, "Binary"},
    {OpKind::Ternary, "Ternary"},
    {OpKind::Where, "Where"},
    {OpKind::Broadcast, "Broadcast"},
    {OpKind::Squeeze, "Squeeze"},
    {OpKind::Expand, "Expand"},
    {OpKind::Reduction, "Reduction"},
    {OpKind::Reshape, "Reshape"},
    {OpKind::Matmul, "Matmul"},
    {OpKind::Linear, "Linear"},
    {OpKind::Communication, "Communication"},
    {OpKind::Other, "Other"},
}};

constexpr std::array<Spelling<BlockKind>, 6> kBlockKinds{{
    {BlockKind::KernelMath, "KernelMath"},
    {BlockKind::Kernel, "Kernel"},
    {BlockKind::TransformsOnly, "TransformsOnly"},
    {BlockKind::HostIr, "HostIr"},
    {BlockKind::SegmentedFusion, "SegmentedFusion"},
    {BlockKind::Json, "Json"},
}};

// Constant and Symbol are leaves (JSON numbers and strings); only the
// operators have names.
constexpr std::array<Spelling<Extent::Kind>, 6> kExtentOps{{
    {Extent::Kind::Add, "add"},
    {Extent::Kind::Sub, "sub"},
    {Extent::Kind::Mul, "mul"},
    {Extent::Kind::Div, "div"},
    {Extent::Kind::Mod, "mod"},
    {Extent::Kind::CeilDiv, "ceilDiv"},
}};

} // namespace

const char *iterTypeJsonName(IterType t) {
  return nameIn(kIterTypes, t);
}
std::optional<IterType> parseIterTypeJson(std::string_view s) {
  return parseIn(kIterTypes, s);
}
std::string iterTypeJsonChoices() {
  return choicesIn(kIterTypes);
}

const char *parallelTypeJsonName(ParallelType p) {
  return nameIn(kParallelTypes, p);
}
std::optional<ParallelType> parseParallelTypeJson(std::string_view s) {
  return parseIn(kParallelTypes, s);
}
std::string parallelTypeJsonChoices() {
  return choicesIn(kParallelTypes);
}

const char *memoryTypeJsonName(MemoryType m) {
  return nameIn(kMemoryTypes, m);
}
std::optional<MemoryType> parseMemoryTypeJson(std::string_view s) {
  return parseIn(kMemoryTypes, s);
}
std::string memoryTypeJsonChoices() {
  return choicesIn(kMemoryTypes);
}

const char *dataTypeJsonName(DataType d) {
  return nameIn(kDataTypes, d);
}
std::optional<DataType> parseDataTypeJson(std::string_view s) {
  return parseIn(kDataTypes, s);
}
std::string dataTypeJsonChoices() {
  return choicesIn(kDataTypes);
}

const char *transformKindJsonName(Transform::Kind k) {
  return nameIn(kTransformKinds, k);
}
std::optional<Transform::Kind> parseTransformKindJson(std::string_view s) {
  return parseIn(kTransformKinds, s);
}
std::string transformKindJsonChoices() {
  return choicesIn(kTransformKinds);
}

const char *opKindJsonName(OpKind k) {
  return nameIn(kOpKinds, k);
}
std::optional<OpKind> parseOpKindJson(std::string_view s) {
  return parseIn(kOpKinds, s);
}
std::string opKindJsonChoices() {
  return choicesIn(kOpKinds);
}

const char *blockKindJsonName(BlockKind k) {
  return nameIn(kBlockKinds, k);
}
std::optional<BlockKind> parseBlockKindJson(std::string_view s) {
  return parseIn(kBlockKinds, s);
}
std::string blockKindJsonChoices() {
  return choicesIn(kBlockKinds);
}

const char *extentOpJsonName(Extent::Kind k) {
  return nameIn(kExtentOps, k);
}
std::optional<Extent::Kind> parseExtentOpJson(std::string_view s) {
  return parseIn(kExtentOps, s);
}
std::string extentOpJsonChoices() {
  return choicesIn(kExtentOps);
}

} // namespace shardcheck::jsonir
