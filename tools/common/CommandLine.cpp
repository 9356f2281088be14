// The tools' argument loop; see CommandLine.h.
#include "tools/common/CommandLine.h"

#include <charconv>
#include <ostream>

namespace shardcheck {

int usageError(const ToolInfo &tool, std::ostream &err, const std::string &message) {
  err << tool.name << ": error: " << message << "\n(run " << tool.name << " --help for usage)\n";
  return 2;
}

std::optional<int>
walkArguments(const ToolInfo &tool, const std::vector<std::string> &args, std::ostream &out,
              std::ostream &err,
              const std::function<std::string(const std::string &, const NextValue &)> &option,
              const std::function<std::string(const std::string &)> &operand) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    NextValue value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size())
        return std::nullopt;
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      out << tool.usage;
      return 0;
    }
    if (a == "--version") {
      out << tool.name << " " << tool.version << "\n";
      return 0;
    }
    std::string error = a.size() > 1 && a[0] == '-' ? option(a, value) : operand(a);
    if (!error.empty())
      return usageError(tool, err, error);
  }
  return std::nullopt;
}

std::optional<uint64_t> parseDecimal(const std::string &s, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  const char *end = s.data() + s.size();
  auto [at, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || s[0] < '0' || s[0] > '9' || ec != std::errc() || at != end || v < min || v > max)
    return std::nullopt;
  return v;
}

} // namespace shardcheck
