// The helper engine: threads pinned to spare cores that serve the compute threads' queues. In
// copy mode a helper copies each block into the requester's ring with regular stores (the ring
// stays in the shared cache); in touch mode it only loads one word per cache line of the block so
// the lines are in the shared cache when the compute thread reaches them (inter-core prefetching).
//
// Queue q is served by the helpers h with h % queues == q when there are at least as many helpers
// as queues (each request is then cut into one piece per helper), otherwise helper h serves the
// queues q with q % helpers == h in turn. Each queue is a ring of depth slots; the producer
// publishes a request by storing its sequence number, each helper keeps its own cursor per queue
// and counts the pieces it finished, and the ticket is complete when every piece is.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <immintrin.h>
#include <thread>

#include "common/errors.hpp"
#include "engine/backends.hpp"
#include "engine/moves.hpp"

namespace bw::engine {
namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) Slot {
  std::atomic<std::uint64_t> published{0};  // sequence number + 1 of the request in the slot
  std::atomic<std::uint32_t> pieces_done{0};
  Request req;
};

struct Ring {
  explicit Ring(int depth, std::uint32_t pieces) : slots(static_cast<std::size_t>(depth)), pieces(pieces) {}
  std::vector<Slot> slots;
  std::uint32_t pieces;  // helpers sharing each request
};

struct Assignment {
  Ring* ring;
  std::uint32_t piece;   // which piece of each request this helper moves
  std::uint64_t cursor;  // next sequence number it expects
};

struct alignas(64) HelperStats {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> busy_ns{0};
  std::atomic<std::size_t> sink{0};  // keeps the touch loads alive
};

class HelperEngine;

class HelperQueue final : public Queue {
 public:
  HelperQueue(HelperEngine& e, Ring& r) : engine_(e), ring_(r) {}
  Ticket submit(const Request& r) override;
  bool poll(Ticket t) override {
    const Slot& s = ring_.slots[t % ring_.slots.size()];
    if (s.published.load(std::memory_order_acquire) != t + 1) return true;  // slot reused: t is long done
    return s.pieces_done.load(std::memory_order_acquire) == ring_.pieces;
  }
  const QueueStats& stats() const override { return stats_; }

 private:
  HelperEngine& engine_;
  Ring& ring_;
  Ticket next_ = 0;
};

class HelperEngine final : public Engine {
 public:
  explicit HelperEngine(const Config& c) : cpus_(c.cpus), touch_(c.mode == "touch"), stats_(c.cpus.size()) {
    if (c.mode != "copy" && c.mode != "touch")
      throw UsageError("helper mode '" + c.mode + "' is neither copy nor touch");
    if (cpus_.empty()) throw UsageError("the helper engine needs at least one CPU (--engine-cpus)");
    const int helpers = static_cast<int>(cpus_.size()), queues = std::max(1, c.queues);
    for (int q = 0; q < queues; ++q) {
      std::uint32_t pieces = 1;
      if (helpers >= queues) pieces = static_cast<std::uint32_t>(helpers / queues + (q < helpers % queues ? 1 : 0));
      rings_.push_back(std::make_unique<Ring>(std::max(1, c.depth), pieces));
    }
    plans_.resize(cpus_.size());
    for (int h = 0; h < helpers; ++h) {
      if (helpers >= queues)
        plans_[h].push_back({rings_[h % queues].get(), static_cast<std::uint32_t>(h / queues), 0});
      else
        for (int q = h; q < queues; q += helpers) plans_[h].push_back({rings_[q].get(), 0, 0});
    }
    for (int h = 0; h < helpers; ++h) threads_.emplace_back([this, h] { serve(h); });
    for (int h = 0; h < helpers; ++h) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus_[h], &set);
      if (pthread_setaffinity_np(threads_[h].native_handle(), sizeof set, &set) != 0) {
        stop();
        throw RunError("cannot bind a helper thread to CPU " + std::to_string(cpus_[h]));
      }
    }
  }
  ~HelperEngine() override { stop(); }

  std::unique_ptr<Queue> open(int index) override {
    return std::make_unique<HelperQueue>(*this, *rings_.at(static_cast<std::size_t>(index)));
  }
  bool supports(Kind k) const override { return touch_ ? k == Kind::Fill : k == Kind::Copy; }
  nlohmann::json info() const override {
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t h = 0; h < cpus_.size(); ++h) {
      double bytes = static_cast<double>(stats_[h].bytes.load(std::memory_order_relaxed));
      double busy = static_cast<double>(stats_[h].busy_ns.load(std::memory_order_relaxed)) * 1e-9;
      per.push_back(
          {{"cpu", cpus_[h]}, {"bytes", bytes}, {"busy_s", busy}, {"busy_GBps", busy > 0 ? bytes / busy / 1e9 : 0}});
    }
    return {{"what", touch_ ? "helper threads load every cache line of each block (touch)"
                            : "helper threads copy each block into a cache-resident ring (copy)"},
            {"mode", touch_ ? "touch" : "copy"},
            {"cpus", cpus_},
            {"helpers", per}};
  }

  // Called by a queue after publishing a request: wakes helpers that went to sleep.
  void signal() {
    signal_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) signal_.notify_all();
  }

 private:
  void stop() {
    stop_.store(true);
    signal_.fetch_add(1);
    signal_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

  // One piece of a request: the bytes of piece p out of n, cut at cache lines.
  void move(const Request& r, std::uint32_t p, std::uint32_t n, HelperStats& st) {
    std::size_t lines = (r.bytes + kLine - 1) / kLine;
    std::size_t lo = std::min(r.bytes, lines * p / n * kLine), hi = std::min(r.bytes, lines * (p + 1) / n * kLine);
    if (hi <= lo) return;
    auto t0 = Clock::now();
    if (touch_)
      st.sink.fetch_add(touch(static_cast<const char*>(r.src) + lo, hi - lo), std::memory_order_relaxed);
    else
      cached_copy(static_cast<char*>(r.dst) + lo, static_cast<const char*>(r.src) + lo, hi - lo);
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    st.bytes.fetch_add(hi - lo, std::memory_order_relaxed);
    st.busy_ns.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
  }

  // Serves the helper's assignments; spins while work is coming, sleeps after a quiet millisecond.
  void serve(int h) {
    auto& plan = plans_[static_cast<std::size_t>(h)];
    HelperStats& st = stats_[static_cast<std::size_t>(h)];
    auto idle_since = Clock::now();
    std::uint32_t spins = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      bool worked = false;
      for (Assignment& a : plan) {
        for (;;) {
          Slot& s = a.ring->slots[a.cursor % a.ring->slots.size()];
          if (s.published.load(std::memory_order_acquire) != a.cursor + 1) break;
          move(s.req, a.piece, a.ring->pieces, st);
          s.pieces_done.fetch_add(1, std::memory_order_release);
          ++a.cursor;
          worked = true;
        }
      }
      if (worked) {
        idle_since = Clock::now();
        spins = 0;
        continue;
      }
      _mm_pause();
      if (++spins % 1024 || Clock::now() - idle_since < std::chrono::milliseconds(1)) continue;
      // Sleep until the next submission (checked again after announcing the sleep, so none is lost).
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      std::uint32_t seen = signal_.load(std::memory_order_seq_cst);
      bool pending = false;
      for (Assignment& a : plan)
        pending |=
            a.ring->slots[a.cursor % a.ring->slots.size()].published.load(std::memory_order_acquire) == a.cursor + 1;
      if (!pending && !stop_.load()) signal_.wait(seen, std::memory_order_seq_cst);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      idle_since = Clock::now();
    }
  }

  std::vector<int> cpus_;
  bool touch_;
  std::vector<HelperStats> stats_;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::vector<std::vector<Assignment>> plans_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> signal_{0};
  std::atomic<int> sleepers_{0};
};

Ticket HelperQueue::submit(const Request& r) {
  const Ticket t = next_++;
  Slot& s = ring_.slots[t % ring_.slots.size()];
  if (t >= ring_.slots.size()) wait(t - ring_.slots.size());  // the slot's previous request
  s.req = r;
  s.pieces_done.store(0, std::memory_order_relaxed);
  s.published.store(t + 1, std::memory_order_release);
  engine_.signal();
  stats_.requests++;
  stats_.bytes += r.bytes;
  return t;
}

// The CPUs this process may use (taskset, a cgroup), not the machine's: counted when the program
// starts, before any of its threads is bound to one of them.
int cpus_at_start() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                     : static_cast<int>(std::thread::hardware_concurrency());
}
const int kCpusAtStart = cpus_at_start();

}  // namespace

Backend helper_backend() {
  return {"helper",
          "threads on spare cores copy (copy) or load (touch) the next blocks into the shared cache",
          [] {
            return kCpusAtStart > 1 ? Availability{true, ""}
                                    : Availability{false, "only one CPU this process may use: no core to spare"};
          },
          [](const Config& c) -> std::unique_ptr<Engine> { return std::make_unique<HelperEngine>(c); },
          {"copy", "touch"},
          true,
          "a spare core (a CPU the compute threads leave free)"};
}

}  // namespace bw::engine
