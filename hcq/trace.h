// trace: a timeline of what the host and the devices did, written as a Chrome/Perfetto trace (JSON trace-event
// format; open it at https://ui.perfetto.dev). PROFILE=1 (tinygrad's name) records from the start of the process
// and writes the file at exit, to PROFILE_PATH or else /tmp/doorbell_profile.json, printing the path on stderr;
// start()/stop() do the same for one stretch of a program (`doorbell bench --trace FILE`).
//
// Tracks: one process per device with a thread per queue ("compute", "copy"), whose slices are kernels and copies
// with their times from the timestamps the queue wrote around them (kernel-only), and signals; one "host" process
// with a thread per host thread, whose slices are schedule, compile, submit and synchronize spans. A flow arrow goes
// from each signal a queue wrote to the host wait that it ended.
//
// Device times must be on the host's clock (monotonic_ns) when they are recorded here. The CPU device stamps with it;
// a GPU, real or emulated, stamps with its own timer (NV: the PTIMER nanoseconds of a semaphore release, ns since
// 1970), so callers convert each stamp with Device::host_time_ns (NV: a calibration against the host clock, good to
// NvDevice::clock_calibration().uncertainty_ns) before handing it to device_span or signal_to_host_wait.
//
// While recording is off every hook costs one load and one branch: nothing is allocated or timed.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::trace {

namespace detail {
extern std::atomic<bool> g_recording;
}

// Whether events are being recorded (PROFILE=1, or between start() and stop()).
inline bool recording() { return detail::g_recording.load(std::memory_order_relaxed); }

// One argument of an event, its value already JSON text.
struct Arg {
  std::string key;
  std::string json;
};
Arg arg(std::string key, int64_t value);
Arg arg(std::string key, std::string_view text);
Arg arg(std::string key, const std::array<uint32_t, 3>& dims);  // [x, y, z]

// A span of the calling host thread, [start_ns, end_ns] on monotonic_ns's clock. `category`: "schedule", "compile",
// "submit", "synchronize", "run", "transfer".
void host_span(std::string name, const char* category, int64_t start_ns, int64_t end_ns, std::vector<Arg> args = {});

// A kernel or copy on `queue` of `device`, [start_ns, end_ns] from the queue's own timestamps.
void device_span(const std::string& device, const char* queue, std::string name, const char* category, int64_t start_ns,
                 int64_t end_ns, std::vector<Arg> args = {});

// `queue` of `device` wrote `value` to signal `signal` at signal_ns (after the work that ended at work_end_ns), and a
// host wait on this thread from wait_start_ns to wait_end_ns ended with it: a signal slice on the queue's track, a
// synchronize span on the host's, and a flow from the first to the second.
void signal_to_host_wait(const std::string& device, const char* queue, const std::string& signal, uint64_t value, int64_t work_end_ns,
                         int64_t signal_ns, int64_t wait_start_ns, int64_t wait_end_ns);

// `queue` of `device` wrote `value` to signal `signal` at signal_ns, and `wait_queue` of `wait_device` waited for it on
// the device (a wait command), going on at wait_end_ns: a signal slice on the first queue's track, a wait slice on the
// second's (from wait_start_ns, the end of the work before it, to wait_end_ns), and a flow from the first to the second.
void signal_to_queue_wait(const std::string& device, const char* queue, const std::string& signal, uint64_t value, int64_t signal_ns,
                          const std::string& wait_device, const char* wait_queue, int64_t wait_start_ns, int64_t wait_end_ns);

// RAII host span of the calling thread: times from construction to destruction when recording, else nothing (no
// clock read, no allocation). add() only allocates while recording; a name built at the call site costs its
// building, so callers build it under `if (span.active())`. cancel() drops the span.
class Scope {
 public:
  Scope(const char* category, const char* name);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  bool active() const { return start_ns_ >= 0; }
  void set_name(std::string name) {
    if (active()) name_ = std::move(name);
  }
  void add(const char* key, int64_t value) {
    if (active()) args_.push_back(arg(key, value));
  }
  void add(const char* key, std::string_view text) {
    if (active()) args_.push_back(arg(key, text));
  }
  void cancel() { start_ns_ = -1; }

 private:
  const char* category_;
  const char* fixed_name_;
  int64_t start_ns_ = -1;
  std::string name_;
  std::vector<Arg> args_;
};

// Starts recording (dropping what was recorded before) until stop(), which writes the trace to `path`. Throws
// std::runtime_error naming the path when it cannot be written. With PROFILE=1 recording goes on after stop().
void start();
void stop(const std::string& path);
// Writes what was recorded so far to `path` (the trace-event JSON object). Returns the number of events written.
size_t write(const std::string& path);
// The file PROFILE=1 writes at exit: PROFILE_PATH, or /tmp/doorbell_profile.json.
std::string profile_path();

}  // namespace doorbell::trace
