// Spellings of the IR's enums in the JSON IR (docs/json-ir.md).
//
// The JSON IR names every enum value by its C++ enumerator (`Iteration`,
// `DIDx`, `Global`, `Split`, `Allgather`, ...) rather than by nvFuser's
// printed spelling, so that the format does not change when nvFuser's printing
// does. Data types are the one exception: they use nvFuser's spelling
// (`float`, `__bfloat`), which is what users know them by. Collectives are
// spelled by their one list (ir/Collectives.h).
//
// Internal to ir/json; nothing here validates documents or builds IR.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardcheck::jsonir {

const char *iterTypeJsonName(IterType t);
std::optional<IterType> parseIterTypeJson(std::string_view s);

const char *parallelTypeJsonName(ParallelType p);
std::optional<ParallelType> parseParallelTypeJson(std::string_view s);

const char *memoryTypeJsonName(MemoryType m);
std::optional<MemoryType> parseMemoryTypeJson(std::string_view s);

/// nvFuser's spelling; DataType::Unknown has none (the field is omitted).
const char *dataTypeJsonName(DataType d);
std::optional<DataType> parseDataTypeJson(std::string_view s);

const char *transformKindJsonName(Transform::Kind k);
std::optional<Transform::Kind> parseTransformKindJson(std::string_view s);

const char *opKindJsonName(OpKind k);
std::optional<OpKind> parseOpKindJson(std::string_view s);

const char *blockKindJsonName(BlockKind k);
std::optional<BlockKind> parseBlockKindJson(std::string_view s);

/// Extent operator names (`add`, `sub`, `mul`, `div`, `mod`, `ceilDiv`).
const char *extentOpJsonName(Extent::Kind k);
std::optional<Extent::Kind> parseExtentOpJson(std::string_view s);

/// Every accepted spelling of one enum, for "expected one of ..." messages.
std::string iterTypeJsonChoices();
std::string parallelTypeJsonChoices();
std::string memoryTypeJsonChoices();
std::string dataTypeJsonChoices();
std::string transformKindJsonChoices();
std::string opKindJsonChoices();
std::string blockKindJsonChoices();
std::string extentOpJsonChoices();

} // namespace shardcheck::jsonir
