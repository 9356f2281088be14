// The exit status of a tool whose results go to standard output, once the
// results are written: a write that failed there (a full disk, /dev/full, a
// closed descriptor) must not end in a status that says the results were
// delivered.
//
// Shared by the mains of check-sharding and run-plan. This file does not
// check standard error (the message about the failure goes there) and does
// not change how the tools write.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace shardcheck {

/// `status`, or 2 after printing `tool: error: cannot write to standard
/// output: REASON` on standard error when flushing standard output fails
/// or any earlier write to it failed.
inline int statusAfterFlushingStdout(const char *tool, int status) {
  errno = 0;
  std::cout.flush();
  bool failed = std::fflush(stdout) != 0;
  int reason = errno;
  if (!failed && !std::cout.fail() && !std::ferror(stdout))
    return status;
  std::cerr << tool << ": error: cannot write to standard output"
            << (reason ? std::string(": ") + std::strerror(reason) : std::string()) << "\n";
  return 2;
}

} // namespace shardcheck
