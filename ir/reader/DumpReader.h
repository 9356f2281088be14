// Reader for nvFuser's text dumps (every style listed in NVFUSER_DUMPS.md) and
// for shardcheck's JSON IR.
//
// A file may hold several blocks (`%kernel_math`, `%kernel` with its
// TransformPrinter, transforms-only sections, `%HostIrContainer`, segmented
// fusions) with unrelated log lines between them; each fusion-like block
// becomes one Fusion of the Document. A transforms-only section that follows a
// fusion block adds domains to that fusion's tensors; on its own it forms a
// fusion without expressions. The same tensor printed in several places is one
// tensor; conflicting facts are an error.
//
// A block without an `Inputs:`/`Outputs:` header (a bare `%kernel {`) gets as
// inputs the tensors its expressions use but never define, and as outputs
// those they define but never use. Host IR lines that only manage memory,
// streams or control flow (ALLOCATE, Wait, FOR, IF, PostOnStream, P2P sends,
// ...) are accepted and skipped; a Communication inside a FOR loop (nested by
// indentation) carries the loop header in its `host_loop` attribute.
//
// A statement quoted by an nvFuser assert message (`... Given: T6_l[...] =
// Op(...)`) forms a fusion of its own.
//
// Lines starting with `// EXPECT` (golden-test expectations) and torchrun's
// `[rankN]:` line prefixes are skipped. Malformed input throws InputError
// located at FILE:LINE:COL naming what was expected. Input that ends early
// (the failure is followed by blanks only: a paste cut mid-statement or
// inside a block) is no error: every complete statement is kept and
// Document::truncated says where and why the input ends; the caller must
// report the analysis as partial. Error codes: `parse` (syntax or
// structure), `inconsistent` (two prints of one IterDomain, tensor or
// transform disagree), `no-fusion` (no block in the file), `io` (unreadable
// file). This reader does not lint or check.
//
// Limits, each a `parse` error where it is crossed: the text must be UTF-8
// (ir/json/InputRules.h); an extent nests at most 32 parentheses and has at
// most 128 operators and call arguments, and its constant arithmetic must
// stay a size (no division by 0, no negative result); a device mesh nests at
// most 8 levels. Messages quote input text bounded (shownToken).
#pragma once

#include "ir/Fusion.h"

#include <string>
#include <string_view>

namespace shardcheck {

/// Reads text as an nvFuser dump, or as JSON IR when its first non-blank
/// character is `{`. `file` is used in locations only.
Document readDocument(std::string_view text, const std::string &file);

/// Reads a file from disk; an unreadable file is an InputError.
Document readDocumentFile(const std::string &path);

/// The bytes of an input file; an unreadable file (or a directory) is an
/// InputError (`io`). Shared by every reader of input files.
std::string readInputFile(const std::string &path);

/// Reads nvFuser dump text only (no JSON detection).
Document readNvFuserDump(std::string_view text, const std::string &file);

} // namespace shardcheck
