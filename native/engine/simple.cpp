// The synchronous engines: memcpy (the submitting thread copies or touches the block itself, the
// baseline an asynchronous engine must beat) and none (does nothing; the pipeline then reads every
// block from memory itself, which measures the cost of the blocking alone).
#include "common/errors.hpp"
#include "engine/backends.hpp"
#include "engine/moves.hpp"

namespace bw::engine {
namespace {

class SyncQueue final : public Queue {
 public:
  explicit SyncQueue(bool move) : move_(move) {}
  Ticket submit(const Request& r) override {
    if (move_) {
      if (r.kind == Kind::Copy)
        cached_copy(r.dst, r.src, r.bytes);
      else
        sink_ += touch(r.src, r.bytes);
    }
    stats_.requests++;
    stats_.bytes += r.bytes;
    return next_++;
  }
  bool poll(Ticket) override { return true; }
  const QueueStats& stats() const override { return stats_; }

 private:
  bool move_;
  Ticket next_ = 0;
  std::size_t sink_ = 0;
};

class SyncEngine final : public Engine {
 public:
  explicit SyncEngine(bool move) : move_(move) {}
  std::unique_ptr<Queue> open(int) override { return std::make_unique<SyncQueue>(move_); }
  bool supports(Kind k) const override { return move_ || k == Kind::Fill; }
  nlohmann::json info() const override {
    return {{"what", move_ ? "synchronous copy by the computing thread" : "no engine: every block read from memory"}};
  }

 private:
  bool move_;
};

}  // namespace

Backend memcpy_backend() {
  return {"memcpy",
          "synchronous copy or touch by the computing thread (baseline)",
          [] {
            return Availability{true, ""};
          },
          [](const Config&) -> std::unique_ptr<Engine> { return std::make_unique<SyncEngine>(true); },
          {"copy", "touch"}};
}

Backend none_backend() {
  return {"none",
          "no engine: the pipeline reads every block itself",
          [] {
            return Availability{true, ""};
          },
          [](const Config&) -> std::unique_ptr<Engine> { return std::make_unique<SyncEngine>(false); },
          {"touch"},
          false,
          "",
          false,
          false};
}

}  // namespace bw::engine
