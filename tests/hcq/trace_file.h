// A trace-event file (hcq/trace.h) read back for tests: its events with their tracks resolved to names (the "M"
// metadata events), and checks of the structure every trace must have.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/json_value.h"

namespace doorbell::testing {

// The trace tests start and stop recording themselves; PROFILE=1 in the environment keeps it on throughout.
#define DOORBELL_SKIP_UNDER_PROFILE()                                                              \
  do {                                                                                             \
    const char* profile = std::getenv("PROFILE");                                                  \
    if (profile != nullptr && *profile != '\0' && std::string(profile) != "0")                     \
      GTEST_SKIP() << "PROFILE is set: it records the whole process, so this test cannot turn tracing off"; \
  } while (0)

struct TraceEvent {
  std::string phase, name, category, process, thread;
  double ts = 0, dur = 0;  // microseconds
  double id = -1;          // flow events
  const JsonValue* json = nullptr;
};

struct TraceFile {
  JsonValue root;
  std::vector<TraceEvent> events;  // in file order, metadata left out

  static TraceFile load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("trace file '" + path + "' does not exist");
    std::stringstream text;
    text << in.rdbuf();
    TraceFile t;
    t.root = parse_json(text.str());
    std::map<double, std::string> processes;
    std::map<std::pair<double, double>, std::string> threads;
    for (const JsonValue& e : t.root.at("traceEvents").array) {
      if (e.at("ph").string != "M") continue;
      const std::string& name = e.at("args").at("name").string;
      if (e.at("name").string == "process_name") processes[e.at("pid").number] = name;
      if (e.at("name").string == "thread_name") threads[{e.at("pid").number, e.at("tid").number}] = name;
    }
    for (const JsonValue& e : t.root.at("traceEvents").array) {
      if (e.at("ph").string == "M") continue;
      TraceEvent ev{e.at("ph").string, e.at("name").string, e.at("cat").string, processes.at(e.at("pid").number),
                    threads.at({e.at("pid").number, e.at("tid").number}), e.at("ts").number};
      if (e.has("dur")) ev.dur = e.at("dur").number;
      if (e.has("id")) ev.id = e.at("id").number;
      ev.json = &e;
      t.events.push_back(std::move(ev));
    }
    return t;
  }

  std::vector<const TraceEvent*> find(const std::string& phase, const std::string& category, const std::string& process = "",
                                      const std::string& thread = "") const {
    std::vector<const TraceEvent*> out;
    for (const TraceEvent& e : events)
      if (e.phase == phase && e.category == category && (process.empty() || e.process == process) && (thread.empty() || e.thread == thread))
        out.push_back(&e);
    return out;
  }
};

// On each device queue's track the slices come in the order the queue ran them, one after the other: each starts
// no earlier than the previous one ended. Every slice has a duration of zero or more.
inline void expect_queue_tracks_in_order(const TraceFile& t) {
  std::map<std::pair<std::string, std::string>, const TraceEvent*> last;
  for (const TraceEvent& e : t.events) {
    if (e.phase != "X") continue;
    EXPECT_GE(e.dur, 0) << e.name;
    if (e.process == "host") continue;
    const TraceEvent*& previous = last[{e.process, e.thread}];
    if (previous != nullptr) {
      EXPECT_GE(e.ts, previous->ts + previous->dur - 1e-3) << e.process << "/" << e.thread << ": " << e.name << " starts before "
                                                           << previous->name << " ended";
    }
    previous = &e;
  }
}

// Every flow start has one end with its id: from inside a signal slice on `process`'s track `queue` to inside a
// synchronize span on the host (strictly: a flow binds to the slice enclosing its time, and a slice's edges touch its
// neighbours'). Returns how many such pairs there are.
inline int count_signal_to_wait_flows(const TraceFile& t, const std::string& process, const std::string& queue) {
  int pairs = 0;
  for (const TraceEvent* s : t.find("s", "flow", process, queue)) {
    const TraceEvent* f = nullptr;
    for (const TraceEvent* candidate : t.find("f", "flow"))
      if (candidate->id == s->id) f = candidate;
    if (f == nullptr) {
      ADD_FAILURE() << "flow " << s->id << " has no end";
      continue;
    }
    EXPECT_EQ(f->process, "host");
    EXPECT_EQ(f->json->at("bp").string, "e");
    bool signal_encloses = false, wait_encloses = false;
    for (const TraceEvent* x : t.find("X", "signal", process, queue))
      signal_encloses |= x->ts < s->ts && s->ts < x->ts + x->dur;
    for (const TraceEvent* x : t.find("X", "synchronize", "host", f->thread))
      wait_encloses |= x->ts < f->ts && f->ts < x->ts + x->dur && x->name == "synchronize " + process;
    EXPECT_TRUE(signal_encloses) << "flow " << s->id << " leaves no signal slice";
    EXPECT_TRUE(wait_encloses) << "flow " << s->id << " ends in no synchronize span";
    pairs++;
  }
  return pairs;
}

}  // namespace doorbell::testing
