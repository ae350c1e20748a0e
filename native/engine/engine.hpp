// Copy engines behind one interface. A compute thread opens one Queue on an engine and submits
// requests on it: a block copy (src -> dst, the destination left in the cache where the engine can)
// or a cache fill (bring src into the shared cache, no copy). It then polls or waits for each
// ticket. Backends are registered in one table (registry.cpp) and chosen by name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bw::engine {

enum class Kind { Copy, Fill };

struct Request {
  Kind kind = Kind::Copy;
  const void* src = nullptr;
  void* dst = nullptr;  // Copy only
  std::size_t bytes = 0;
};

using Ticket = std::uint64_t;

// Counters of one queue, summed over queues into the record.
struct QueueStats {
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
  std::uint64_t waits = 0;        // wait() calls that found the request still running
  double wait_seconds = 0;        // time spent in those waits
  std::uint64_t retries = 0;      // submissions refused by a full queue and repeated (DSA)
  std::uint64_t page_faults = 0;  // partial completions resumed after touching the page (DSA)
};

// One submitting thread's queue. Single producer: only the thread that opened it submits, polls
// and waits. At most depth() requests are outstanding; submit() waits for the oldest otherwise.
class Queue {
 public:
  virtual ~Queue() = default;
  virtual Ticket submit(const Request& r) = 0;
  // True once the request of ticket t has completed (its data are in place).
  virtual bool poll(Ticket t) = 0;
  void wait(Ticket t);
  virtual const QueueStats& stats() const = 0;

 protected:
  QueueStats stats_;
};

// What an engine is asked to do; each backend reads the fields it needs.
struct Config {
  std::vector<int> cpus;      // helper: the CPUs its threads run on
  int queues = 1;             // how many compute threads will open a queue
  int depth = 4;              // outstanding requests per queue
  std::string mode = "copy";  // helper: copy (into a cache-resident ring) or touch (loads only)
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Opens queue index (0 <= index < Config::queues); called once per compute thread.
  virtual std::unique_ptr<Queue> open(int index) = 0;
  // Whether requests of kind k are served (DSA copies only; none fills only).
  virtual bool supports(Kind k) const = 0;
  // Facts and counters for the record (work queue, helper CPUs and the bytes they moved...).
  virtual nlohmann::json info() const = 0;
};

// Whether a backend can run here, and why not.
struct Availability {
  bool available = false;
  std::string reason;  // empty when available
};

// A row of the engine table: what the engine is, what it takes, and how to make one. The checks of
// bandwall-pipeline, its help and the manifest (bandwall-manifest) read these fields.
struct Backend {
  std::string_view name;
  std::string_view summary;
  Availability (*probe)();
  std::unique_ptr<Engine> (*make)(const Config&);
  std::vector<std::string_view> modes = {"copy"};  // the --engine-mode values it serves, its default first
  bool takes_cpus = false;                         // runs on CPUs of its own (--engine-cpus)
  std::string_view hardware = "";                  // what it needs beyond the CPUs ("": nothing)
  bool hidden = false;                             // test-only: out of help, choices and records
  bool queues = true;                              // false: nothing is queued (queue depth, strategy moot)
};

// The table as JSON for the manifest: every row, with whether it can run here and why not.
nlohmann::json backends_json();

// Every registered backend, in registration order.
const std::vector<Backend>& backends();

// The user-facing backends' names, as help and messages list them ("dsa, helper, memcpy, none").
std::string names();

// The engine a pipeline uses when none is named (the manifest's "default": true).
const char* default_engine();

// The backend called name; UsageError listing the known names otherwise.
const Backend& find(std::string_view name);

// Makes an engine: UsageError when the name is unknown or the backend is unavailable here
// ("dsa: unavailable: no enabled work queue under /dev/dsa").
std::unique_ptr<Engine> make(std::string_view name, const Config& c);

}  // namespace bw::engine
