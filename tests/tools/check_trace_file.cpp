// check_trace_file <trace.json> [DEVICE]: checks a timeline trace (hcq/trace.h) that a program wrote, as a user's
// Perfetto would read it. Exits 0 and prints a one-line summary when the file holds a traceEvents array with a "host"
// process and a DEVICE (default CPU) process with a "compute" queue track; kernels there (and on any device's tracks,
// none on the host's) with a name, a launch and a grid and block of three numbers; schedule and compile spans on
// the host; and flows whose starts and ends pair up by id. Exits 1 naming the first problem, 2 on bad arguments.
// A program rather than CMake's string(JSON): that walks the text again for every GET, quadratic in the file's size
// (30 s of a 50 s test under ASan).
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tests/common/json_value.h"

namespace {

using doorbell::testing::JsonValue;

std::string text_of(const JsonValue& v) {
  if (v.kind == JsonValue::Kind::kString) return v.string;
  if (v.kind == JsonValue::Kind::kNumber) {
    std::ostringstream s;
    s << v.number;
    return s.str();
  }
  return "";
}

bool three_numbers(const JsonValue& event, const char* key) {
  if (!event.has("args") || !event.at("args").has(key)) return false;
  const JsonValue& dims = event.at("args").at(key);
  if (dims.kind != JsonValue::Kind::kArray || dims.array.size() != 3) return false;
  for (const JsonValue& d : dims.array)
    if (d.kind != JsonValue::Kind::kNumber) return false;
  return true;
}

std::string check(const std::string& path, const std::string& device) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read '" + path + "'";
  std::stringstream buffer;
  buffer << in.rdbuf();
  JsonValue doc;
  try {
    doc = doorbell::testing::parse_json(buffer.str());
  } catch (const std::exception& e) {
    return path + ": not JSON: " + e.what();
  }
  if (!doc.has("traceEvents") || doc.at("traceEvents").kind != JsonValue::Kind::kArray)
    return path + ": not a trace-event file: expected an object with a traceEvents array";
  std::string host_pid, device_pid, compute_tid;
  size_t kernels = 0, schedule_spans = 0, compile_spans = 0;
  std::map<std::string, int> flows;  // id -> starts minus ends
  size_t flow_starts = 0;
  for (const JsonValue& event : doc.at("traceEvents").array) {
    for (const char* key : {"ph", "name", "pid"})
      if (!event.has(key)) return path + ": an event without '" + key + "'";
    const std::string ph = text_of(event.at("ph")), name = text_of(event.at("name")), pid = text_of(event.at("pid"));
    if (ph == "M") {
      const std::string track = event.has("args") && event.at("args").has("name") ? text_of(event.at("args").at("name")) : "";
      if (name == "process_name" && track == "host") host_pid = pid;
      else if (name == "process_name" && track == device) device_pid = pid;
      else if (name == "thread_name" && track == "compute" && pid == device_pid && event.has("tid")) compute_tid = text_of(event.at("tid"));
      continue;
    }
    const std::string cat = event.has("cat") ? text_of(event.at("cat")) : "";
    const std::string tid = event.has("tid") ? text_of(event.at("tid")) : "";
    if (ph == "X" && cat == "kernel") {
      if (pid == host_pid) return path + ": kernel '" + name + "' is on the host's track";
      const std::string launch = event.has("args") && event.at("args").has("launch") ? text_of(event.at("args").at("launch")) : "";
      if (name.empty() || launch.empty() || !three_numbers(event, "grid") || !three_numbers(event, "block"))
        return path + ": kernel '" + name + "' without a name, a launch or a 3-d grid and block";
      if (pid == device_pid && tid == compute_tid) kernels++;
    } else if (ph == "X" && cat == "schedule" && pid == host_pid) {
      schedule_spans++;
    } else if (ph == "X" && cat == "compile" && pid == host_pid) {
      compile_spans++;
    } else if (ph == "s" || ph == "f") {
      if (!event.has("id")) return path + ": a flow event without an id";
      flows[text_of(event.at("id"))] += ph == "s" ? 1 : -1;
      if (ph == "s") flow_starts++;
    }
  }
  if (host_pid.empty() || device_pid.empty() || compute_tid.empty())
    return path + ": expected a 'host' process and a '" + device + "' process with a 'compute' track";
  if (kernels == 0 || schedule_spans == 0 || compile_spans == 0)
    return path + ": expected kernels, schedule and compile spans; found " + std::to_string(kernels) + ", " + std::to_string(schedule_spans) +
           ", " + std::to_string(compile_spans);
  if (flow_starts == 0) return path + ": expected flows from signals to waits; found none";
  for (const auto& [id, balance] : flows)
    if (balance != 0) return path + ": flow " + id + " has " + (balance > 0 ? "a start without an end" : "an end without a start");
  std::printf("%s: %zu kernels, %zu schedule and %zu compile spans, %zu flows\n", path.c_str(), kernels, schedule_spans, compile_spans,
              flow_starts);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: check_trace_file <trace.json> [DEVICE]\n");
    return 2;
  }
  const std::string problem = check(argv[1], argc == 3 ? argv[2] : "CPU");
  if (problem.empty()) return 0;
  std::fprintf(stderr, "%s\n", problem.c_str());
  return 1;
}
