// Rules every reader of user input applies alike: the nvFuser dump reader,
// the JSON IR reader and the plan loader.
//
// Inputs must be UTF-8: a reader refuses the first ill-formed byte (located),
// so every name and string it keeps is UTF-8 and the JSON IR writes it back
// unchanged (the lossless round trip of docs/json-ir.md).
//
// Messages quote input text through shownToken (util/Checked.h): bounded, and
// cut between characters, so that a message stays UTF-8 (the tools' JSON
// output refuses anything else).
//
// Extent arithmetic must stay a size: an operation dividing by the constant 0,
// or constants folding to a negative number, is refused (nvFuser prints no
// such extent). Only a Resize amount may be negative, and only as a literal;
// the readers handle that case themselves.
//
// This file does not throw or locate errors: each reader does, with its own
// error codes and positions.
#pragma once

#include "ir/Extent.h"
#include "util/Checked.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

/// The offset of the first byte of `text` that starts an ill-formed UTF-8
/// sequence (overlong forms, UTF-16 surrogates and code points past
/// U+10FFFF are ill-formed), or nullopt.
std::optional<size_t> firstInvalidUtf8(std::string_view text);

/// A message for the byte firstInvalidUtf8 found:
/// `byte 0xFF is not valid UTF-8 (inputs must be UTF-8)`.
std::string invalidUtf8Message(std::string_view text, size_t offset);

/// `lhs op rhs` through Extent's folding factories; `op` is a binary kind.
Extent binaryExtent(Extent::Kind op, const Extent &lhs, const Extent &rhs);

/// Why `lhs op rhs` is no size, or nullopt: a division by the constant 0, or
/// a fold (`folded`, binaryExtent's result) to a negative constant.
std::optional<std::string> extentArithmeticProblem(Extent::Kind op, const Extent &rhs,
                                                   const Extent &folded);

} // namespace shardcheck
