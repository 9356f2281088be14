// run-plan's text output and JSON report; see Render.h.
#include "tools/run_plan/Render.h"

#include "util/Version.h"

#include <iomanip>
#include <ostream>
#include <sstream>

namespace shardcheck::runplan {

namespace {

std::string dtypeText(DataType t) {
  return t == DataType::Unknown ? "unknown" : dataTypeName(t);
}

/// A per-device map as a JSON object keyed by device.
nlohmann::json perDevice(const std::map<int64_t, int64_t> &values) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto &[device, value] : values)
    j[std::to_string(device)] = value;
  return j;
}

nlohmann::json stepJson(const StepReport &s) {
  return {{"index", s.index},
          {"kind", s.kind},
          {"description", s.description},
          {"devices", s.devices},
          {"bytes_moved", s.bytesMoved},
          {"bytes_received", perDevice(s.bytesReceived)},
          {"input_elements", perDevice(s.inputElements)},
          {"output_elements", perDevice(s.outputElements)},
          {"seconds", s.seconds},
          {"verified", s.verified},
          {"status", s.status}};
}

nlohmann::json tensorJson(const TensorCheck &t) {
  const OutputComparison &c = t.comparison;
  nlohmann::json j = {{"tensor", c.name},
                      {"role", t.role},
                      {"dtype", dtypeText(c.dtype)},
                      {"compared", c.compared},
                      {"mismatched", c.mismatched},
                      {"max_abs_error", c.maxAbsError},
                      {"max_rel_error", c.maxRelError},
                      {"rtol", c.tolerance.rtol},
                      {"atol", c.tolerance.atol},
                      {"matches", c.matches()}};
  if (c.firstMismatch)
    j["first_mismatch"] = {{"device", c.firstMismatch->device},
                           {"slot", c.firstMismatch->slot},
                           {"index", c.firstMismatch->index},
                           {"got", c.firstMismatch->got},
                           {"expected", c.firstMismatch->expected}};
  return j;
}

nlohmann::json timingJson(const RunReport &r) {
  if (!r.timing)
    return nullptr;
  return {{"warmup", r.timing->warmup},
          {"repeats", r.timing->repeats},
          {"median_seconds", r.timing->medianSeconds},
          {"min_seconds", r.timing->minSeconds},
          {"synced_median_seconds", r.timing->syncedMedianSeconds},
          {"step_median_seconds", r.timing->stepMedianSeconds}};
}

} // namespace

std::string formatNumber(double v) {
  std::ostringstream os;
  os << std::setprecision(3) << v;
  return os.str();
}

std::string devicesText(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

std::string bytesText(const StepReport &s) {
  return s.kind == "collective" || s.kind == "alias" ? std::to_string(s.bytesMoved) : "-";
}

std::string stepTimeText(const StepReport &s) {
  return s.status == "not run" ? "-" : formatNumber(s.seconds * 1e3) + " ms";
}

std::string mismatchText(const Mismatch &m, const std::string &name) {
  std::string index;
  for (size_t i = 0; i < m.index.size(); ++i)
    index += (i ? ", " : "") + std::to_string(m.index[i]);
  return "device " + std::to_string(m.device) + " slot " + std::to_string(m.slot) + " holds " +
         formatNumber(m.got) + " for " + name + "[" + index + "], expected " +
         formatNumber(m.expected);
}

std::string tensorLine(const TensorCheck &t) {
  const OutputComparison &c = t.comparison;
  return c.name + " (" + t.role + ", " + dtypeText(c.dtype) +
         "): " + (c.matches() ? "match" : "MISMATCH") + ", " + std::to_string(c.compared) +
         " slot(s) compared, " + std::to_string(c.mismatched) + " outside rtol " +
         formatNumber(c.tolerance.rtol) + " atol " + formatNumber(c.tolerance.atol) +
         ", max abs error " + formatNumber(c.maxAbsError) + ", max rel error " +
         formatNumber(c.maxRelError);
}

int64_t totalBytesMoved(const RunReport &r) {
  int64_t total = 0;
  for (const StepReport &s : r.steps)
    total += s.bytesMoved;
  return total;
}

void printSteps(std::ostream &out, const RunReport &r) {
  out << std::left << std::setw(5) << "step" << std::setw(11) << "kind" << std::setw(52) << "what"
      << std::setw(18) << "devices" << std::right << std::setw(12) << "bytes" << std::setw(12)
      << "time"
      << "  status\n";
  for (const StepReport &s : r.steps) {
    std::string what = s.description + (s.verified ? "" : " [unverified]");
    out << std::left << std::setw(5) << s.index << std::setw(11) << s.kind << std::setw(52) << what
        << std::setw(18) << devicesText(s.devices) << std::right << std::setw(12) << bytesText(s)
        << std::setw(12) << stepTimeText(s) << "  " << s.status << "\n";
  }
}

void printTiming(std::ostream &out, const RunReport &r) {
  if (!r.timing)
    return;
  const RunTiming &t = *r.timing;
  out << "timing: " << t.repeats << " timed run(s) of each kind after " << t.warmup
      << " warmup: pipelined median " << formatNumber(t.medianSeconds * 1e3) << " ms, min "
      << formatNumber(t.minSeconds * 1e3) << " ms per run; every step synchronized: median "
      << formatNumber(t.syncedMedianSeconds * 1e3) << " ms per run, per step:";
  for (size_t i = 0; i < t.stepMedianSeconds.size(); ++i)
    out << " " << i << "=" << formatNumber(t.stepMedianSeconds[i] * 1e3) << "ms";
  out << "\n";
}

void printTensors(std::ostream &out, const RunReport &r, bool quiet) {
  for (const TensorCheck &t : r.tensors) {
    const OutputComparison &c = t.comparison;
    if (quiet && c.matches())
      continue;
    out << tensorLine(t) << "\n";
    if (c.firstMismatch)
      out << "  first mismatch: " << mismatchText(*c.firstMismatch, c.name) << "\n";
  }
}

nlohmann::json reportJson(const std::string &plan, const RunReport &r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport &s : r.steps)
    steps.push_back(stepJson(s));
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorCheck &t : r.tensors)
    tensors.push_back(tensorJson(t));
  nlohmann::json failure = nullptr;
  if (r.failure)
    failure = {
        {"step", r.failure->step}, {"kind", r.failure->kind}, {"message", r.failure->message}};
  return {{"tool", "run-plan"},
          {"version", kShardcheckVersion},
          {"plan", plan},
          {"backend", r.backend},
          {"seed", r.seed},
          {"bindings", r.symbols},
          {"verified", r.verified},
          {"steps", steps},
          {"tensors", tensors},
          {"failure", failure},
          {"checked", r.checked},
          {"timing", timingJson(r)},
          {"outcome", r.outcome()},
          {"exit_status", r.matches() ? 0 : 1},
          {"bytes_moved", totalBytesMoved(r)}};
}

std::string outcomeLine(const RunReport &r) {
  if (r.failure) {
    std::string what = r.failure->kind == "count-error"
                           ? "a collective's buffers do not have the element counts it "
                             "requires; a real run fails here"
                           : "the plan reads data a device does not have";
    return "result: FAILED at step " + std::to_string(r.failure->step) + " (" + r.failure->kind +
           ": " + what + ")";
  }
  size_t wrong = 0;
  for (const TensorCheck &t : r.tensors)
    wrong += !t.comparison.matches();
  if (wrong)
    return "result: WRONG VALUES: every step ran, " + std::to_string(wrong) + " of " +
           std::to_string(r.tensors.size()) + " tensor(s) differ from the reference";
  if (!r.checked)
    return "result: unchecked: every step ran; nothing was compared (--no-check)";
  if (r.steps.empty())
    return "result: nothing to run: the plan has no steps";
  if (r.comparedSlots() == 0)
    return "result: NOTHING COMPARED: every step ran, but no slot of any tensor held a value "
           "to compare with the reference";
  return "result: match: " + std::to_string(r.tensors.size()) +
         " tensor(s) equal the reference on every device";
}

} // namespace shardcheck::runplan
