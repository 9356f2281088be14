// The shared HTML page skeleton; see HtmlPage.h.
#include "tools/common/HtmlPage.h"

#include "tools/common/Xml.h"

#include <cctype>
#include <filesystem>
#include <fstream>

namespace shardcheck {

namespace {

constexpr const char *kStyle = R"(body{font-family:sans-serif;margin:1.5em;color:#212121}
h1{font-size:1.4em;word-break:break-all}h2{font-size:1.15em;margin-top:1.6em}
pre{background:#f5f5f5;padding:.5em;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}
td.num,th.num{text-align:right}td.num{white-space:nowrap}.banner{padding:.6em;border-left:6px solid;margin:1em 0}
.banner.good{border-color:#2e7d32;background:#e8f5e9}
.banner.warn{border-color:#ef6c00;background:#fff3e0}
.banner.bad{border-color:#c62828;background:#ffebee}
details{margin:.3em 0}details:target{outline:2px solid #1565c0}summary{cursor:pointer}
dt{font-weight:bold;margin-top:.3em}.mono{font-family:monospace}
.badge{display:inline-block;color:#fff;border-radius:3px;padding:0 .4em;font-size:.85em}
.badge.good{background:#2e7d32}.badge.warn{background:#ef6c00}.badge.bad{background:#c62828})";

} // namespace

std::string htmlEscape(const std::string &text) {
  return xmlEscape(text);
}

std::string htmlPageHead(const std::string &title, const std::string &extraStyle) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         htmlEscape(title) + "</title>\n<style>\n" + kStyle + "\n" + extraStyle +
         "\n</style>\n</head>\n<body>\n";
}

std::string htmlPageFoot(const std::string &tool, const std::string &version,
                         const std::string &script) {
  return "<p><small>" + htmlEscape(tool) + " " + htmlEscape(version) + "</small></p>\n" +
         (script.empty() ? "" : "<script>" + script + "</script>\n") + "</body>\n</html>\n";
}

std::string htmlBadge(const std::string &key, const std::string &text) {
  return "<span class=\"badge " + key + "\">" + htmlEscape(text) + "</span>";
}

std::string htmlPageName(size_t i, const std::string &file) {
  std::string base = std::filesystem::path(file).filename().string(), safe;
  for (char c : base)
    safe +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  std::string number = std::to_string(i);
  return std::string(number.size() < 3 ? 3 - number.size() : 0, '0') + number + "-" +
         (safe.empty() ? "input" : safe.substr(0, 80)) + ".html";
}

std::string createReportDirectory(const std::string &flag, const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    return flag + " " + dir + ": cannot create the directory";
  return "";
}

bool writeTextFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

} // namespace shardcheck
