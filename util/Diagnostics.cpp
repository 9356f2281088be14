// Implementation of located diagnostics; see Diagnostics.h.
#include "util/Diagnostics.h"

#include <cstdlib>
#include <iostream>
#include <ostream>

namespace shardcheck {

std::string SourceLoc::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    s += ":" + std::to_string(column > 0 ? column : 1);
  }
  return s;
}

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

Diagnostic &Diagnostic::addNote(std::string msg, SourceLoc where) {
  Diagnostic n;
  n.severity = Severity::Note;
  n.code = code;
  n.message = std::move(msg);
  n.loc = where.known() || !where.file.empty() ? std::move(where) : loc;
  notes.push_back(std::move(n));
  return *this;
}

Diagnostic &DiagnosticEngine::error(std::string code, std::string message, SourceLoc loc) {
  diags_.push_back(
      Diagnostic{Severity::Error, std::move(code), std::move(message), std::move(loc), {}});
  return diags_.back();
}

Diagnostic &DiagnosticEngine::warning(std::string code, std::string message, SourceLoc loc) {
  diags_.push_back(
      Diagnostic{Severity::Warning, std::move(code), std::move(message), std::move(loc), {}});
  return diags_.back();
}

bool DiagnosticEngine::hasErrors() const {
  return count(Severity::Error) > 0;
}

size_t DiagnosticEngine::count(Severity s) const {
  size_t n = 0;
  for (const auto &d : diags_)
    n += d.severity == s;
  return n;
}

void printDiagnostic(std::ostream &os, const Diagnostic &d) {
  os << d.loc.str() << ": " << severityName(d.severity) << ": " << d.message;
  if (!d.code.empty() && d.severity != Severity::Note)
    os << " [" << d.code << "]";
  os << "\n";
  for (const auto &n : d.notes)
    printDiagnostic(os, n);
}

void DiagnosticEngine::print(std::ostream &os) const {
  for (const auto &d : diags_)
    printDiagnostic(os, d);
}

InputError::InputError(Diagnostic d)
    : std::runtime_error(d.loc.str() + ": error: " + d.message), diag_(std::move(d)) {}

void throwInputError(std::string code, std::string message, SourceLoc loc) {
  throw InputError(
      Diagnostic{Severity::Error, std::move(code), std::move(message), std::move(loc), {}});
}

void internalError(const char *file, int line, const std::string &message) {
  std::cerr << "shardcheck internal error at " << file << ":" << line << ": " << message
            << "\nThis is a bug in shardcheck; please report it.\n";
  std::exit(70);
}

} // namespace shardcheck
