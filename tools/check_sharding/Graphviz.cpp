// Graphviz's dot as a child process; see Graphviz.h.
#include "tools/check_sharding/Graphviz.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace shardcheck::checksharding {

namespace {

namespace fs = std::filesystem;

/// A fresh temporary directory, removed when this goes out of scope.
class ScratchDir {
public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "check-sharding-dot-XXXXXX").string();
    if (mkdtemp(pattern.data()))
      path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty())
      fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Runs `argv` (argv[0] a path) with standard error sent to `errPath`; its
/// exit status, or -1 when it could not run.
int runProgram(std::vector<std::string> argv, const std::string &errPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char *> args;
  for (auto &a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

std::optional<std::string> findGraphvizDot() {
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / "dot";
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate))
      return candidate.string();
  }
  return std::nullopt;
}

std::optional<std::string> renderSvg(const std::string &dotProgram, const std::string &dot,
                                     std::string &error) {
  ScratchDir scratch;
  if (scratch.path().empty()) {
    error = "cannot create a temporary directory";
    return std::nullopt;
  }
  std::string in = scratch.path() + "/graph.dot", out = scratch.path() + "/graph.svg",
              err = scratch.path() + "/dot.err";
  std::ofstream(in, std::ios::binary) << dot;
  int status = runProgram({dotProgram, "-Tsvg", "-o", out, in}, err);
  std::string svg = readAll(out);
  size_t start = svg.find("<svg");
  if (status != 0 || start == std::string::npos) {
    std::string why = readAll(err);
    error = dotProgram +
            (status < 0 ? " could not run" : " exit status " + std::to_string(status)) +
            (why.empty() ? "" : ": " + why.substr(0, why.find('\n')));
    return std::nullopt;
  }
  return svg.substr(start);
}

} // namespace shardcheck::checksharding
