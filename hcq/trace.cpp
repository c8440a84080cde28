#include "hcq/trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "hcq/json_text.h"
#include "hcq/wait_primitives.h"

namespace doorbell::trace {
namespace {

bool profile_env() {
  const char* v = std::getenv("PROFILE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

struct Event {
  char phase;            // X: complete slice, s/f: flow start/end
  std::string process;   // "host" or the device's name
  std::string thread;    // the queue's name or the host thread's
  std::string name;
  const char* category;
  int64_t ts_ns;
  int64_t dur_ns;
  uint64_t flow_id;
  std::vector<Arg> args;
};

// Appended from any thread; written once, by stop() or at exit.
struct Recorder {
  std::mutex mu;
  std::vector<Event> events;
  std::atomic<uint64_t> next_flow{1};
  void append(Event e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
};

Recorder g_recorder;
constexpr const char* kHost = "host";

const std::string& host_thread_name() {
  thread_local const std::string name = "thread " + std::to_string(static_cast<long>(syscall(SYS_gettid)));
  return name;
}

// Trace-event times are microseconds; three decimals keep every nanosecond.
std::string micros(int64_t ns) {
  char text[40];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  return text;
}

// Written at exit when PROFILE=1 (after every static constructed later is gone, before g_recorder is).
struct ProfileAtExit {
  ~ProfileAtExit() {
    if (!profile_env()) return;
    const std::string path = profile_path();
    try {
      const size_t n = write(path);
      std::fprintf(stderr, "PROFILE: %zu trace events written to %s (open it at https://ui.perfetto.dev)\n", n, path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "PROFILE: %s\n", e.what());
    }
  }
};
ProfileAtExit g_profile_at_exit;

}  // namespace

namespace detail {
std::atomic<bool> g_recording{profile_env()};
}

Arg arg(std::string key, int64_t value) { return {std::move(key), std::to_string(value)}; }
Arg arg(std::string key, std::string_view text) { return {std::move(key), json_quote(text)}; }
Arg arg(std::string key, const std::array<uint32_t, 3>& d) {
  return {std::move(key), "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]"};
}

void host_span(std::string name, const char* category, int64_t start_ns, int64_t end_ns, std::vector<Arg> args) {
  if (!recording()) return;
  g_recorder.append({'X', kHost, host_thread_name(), std::move(name), category, start_ns, std::max<int64_t>(0, end_ns - start_ns), 0,
                     std::move(args)});
}

void device_span(const std::string& device, const char* queue, std::string name, const char* category, int64_t start_ns,
                 int64_t end_ns, std::vector<Arg> args) {
  if (!recording()) return;
  g_recorder.append({'X', device, queue, std::move(name), category, start_ns, std::max<int64_t>(0, end_ns - start_ns), 0, std::move(args)});
}

void signal_to_host_wait(const std::string& device, const char* queue, const std::string& signal, uint64_t value, int64_t work_end_ns,
                         int64_t signal_ns, int64_t wait_start_ns, int64_t wait_end_ns) {
  if (!recording()) return;
  const uint64_t id = g_recorder.next_flow.fetch_add(1, std::memory_order_relaxed);
  // The signal's slice runs from the end of the work before it to the moment its value was written, at least 2 ns,
  // and the flow leaves from inside it: a flow binds to the slice enclosing its time, and the slice before ends
  // where this one begins.
  const int64_t begin = std::min(work_end_ns, signal_ns);
  const int64_t end = std::max(signal_ns, begin + 2);
  const int64_t leaves = begin + (end - begin) / 2;
  const std::string name = "signal " + signal + " = " + std::to_string(value);
  std::vector<Arg> args{arg("signal", signal), arg("value", static_cast<int64_t>(value))};
  const int64_t wait_end = std::max(wait_end_ns, wait_start_ns + 2);
  std::lock_guard lock(g_recorder.mu);
  g_recorder.events.push_back({'X', device, queue, name, "signal", begin, end - begin, 0, args});
  g_recorder.events.push_back({'s', device, queue, "signal -> wait", "flow", leaves, 0, id, {}});
  g_recorder.events.push_back({'X', kHost, host_thread_name(), "synchronize " + device, "synchronize", wait_start_ns,
                               wait_end - wait_start_ns, 0, {arg("device", device), arg("signal", signal), arg("value", static_cast<int64_t>(value))}});
  // The flow ends where the wait ended (its last nanosecond, inside the span it binds to).
  g_recorder.events.push_back({'f', kHost, host_thread_name(), "signal -> wait", "flow", wait_end - 1, 0, id, {}});
}

void signal_to_queue_wait(const std::string& device, const char* queue, const std::string& signal, uint64_t value, int64_t signal_ns,
                          const std::string& wait_device, const char* wait_queue, int64_t wait_start_ns, int64_t wait_end_ns) {
  if (!recording()) return;
  const uint64_t id = g_recorder.next_flow.fetch_add(1, std::memory_order_relaxed);
  // Slices of at least 2 ns, each flow end inside its slice (a flow binds to the slice enclosing its time).
  const int64_t wait_begin = std::min(wait_start_ns, wait_end_ns);
  const int64_t wait_end = std::max(wait_end_ns, wait_begin + 2);
  const std::vector<Arg> args{arg("signal", signal), arg("value", static_cast<int64_t>(value))};
  std::lock_guard lock(g_recorder.mu);
  g_recorder.events.push_back({'X', device, queue, "signal " + signal + " = " + std::to_string(value), "signal", signal_ns - 1, 2, 0, args});
  g_recorder.events.push_back({'s', device, queue, "signal -> wait", "flow", signal_ns, 0, id, {}});
  g_recorder.events.push_back({'X', wait_device, wait_queue, "wait " + signal + " >= " + std::to_string(value), "wait", wait_begin,
                               wait_end - wait_begin, 0, args});
  g_recorder.events.push_back({'f', wait_device, wait_queue, "signal -> wait", "flow", wait_end - 1, 0, id, {}});
}

Scope::Scope(const char* category, const char* name) : category_(category), fixed_name_(name) {
  if (recording()) start_ns_ = monotonic_ns();
}

Scope::~Scope() {
  if (!active()) return;
  host_span(name_.empty() ? std::string(fixed_name_) : std::move(name_), category_, start_ns_, monotonic_ns(), std::move(args_));
}

void start() {
  {
    std::lock_guard lock(g_recorder.mu);
    g_recorder.events.clear();
  }
  detail::g_recording.store(true, std::memory_order_relaxed);
}

void stop(const std::string& path) {
  if (!profile_env()) detail::g_recording.store(false, std::memory_order_relaxed);
  write(path);
}

std::string profile_path() {
  const char* p = std::getenv("PROFILE_PATH");
  return p != nullptr && *p != '\0' ? p : "/tmp/doorbell_profile.json";
}

size_t write(const std::string& path) {
  std::vector<Event> events;
  {
    std::lock_guard lock(g_recorder.mu);
    events = g_recorder.events;
  }
  // Numbers for the tracks: the host is process 1, devices follow in order of appearance; threads count per process.
  std::map<std::string, int> pids;
  std::map<std::pair<int, std::string>, int> tids;
  pids[kHost] = 1;
  std::string body;
  auto meta = [&](const char* what, int pid, int tid, const std::string& name) {
    body += std::string(body.empty() ? "" : ",\n") + "{\"ph\":\"M\",\"name\":\"" + what + "\",\"pid\":" + std::to_string(pid) +
            ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + json_quote(name) + "}}";
  };
  meta("process_name", 1, 0, kHost);
  auto track = [&](const Event& e) {
    auto [p, new_process] = pids.try_emplace(e.process, static_cast<int>(pids.size()) + 1);
    if (new_process) meta("process_name", p->second, 0, e.process);
    auto [t, new_thread] = tids.try_emplace({p->second, e.thread}, static_cast<int>(tids.size()) + 1);
    if (new_thread) meta("thread_name", p->second, t->second, e.thread);
    return std::pair{p->second, t->second};
  };
  for (const Event& e : events) {
    auto [pid, tid] = track(e);
    std::string line = "{\"ph\":\"" + std::string(1, e.phase) + "\",\"name\":" + json_quote(e.name) + ",\"cat\":" + json_quote(e.category) +
                       ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + micros(e.ts_ns);
    if (e.phase == 'X') line += ",\"dur\":" + micros(e.dur_ns);
    if (e.phase == 's' || e.phase == 'f') line += ",\"id\":" + std::to_string(e.flow_id);
    if (e.phase == 'f') line += ",\"bp\":\"e\"";  // binds to the slice enclosing its time (the host wait)
    if (!e.args.empty()) {
      line += ",\"args\":{";
      for (size_t i = 0; i < e.args.size(); i++) line += (i ? "," : "") + json_quote(e.args[i].key) + ":" + e.args[i].json;
      line += "}";
    }
    body += ",\n" + line + "}";
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("trace: cannot write '" + path + "': " + std::strerror(errno));
  const std::string text = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" + body + "\n]}\n";
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("trace: writing '" + path + "' failed: " + std::strerror(errno));
  return events.size();
}

}  // namespace doorbell::trace
