// The DSA submission code: descriptors for a queue's requests written into a portal, completion
// records polled, partial completions after a page fault (status 0x03, bytes_completed) resumed
// after touching the faulting page, transfers above the work queue's maximum cut into parts, and
// submissions refused by a full shared work queue (ENQCMD's retry) repeated. The portal is the
// device's (dsa_device.cpp) or the software model's (dsa_model.hpp); this code is the same for both.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/dsa_hw.hpp"
#include "engine/engine.hpp"

namespace bw::dsa {

// Where descriptors go: a work queue's portal.
class Portal {
 public:
  virtual ~Portal() = default;
  // Writes one descriptor; false when a shared work queue refused it (retry later).
  virtual bool submit(const Descriptor& d) = 0;
  // A dedicated work queue accepts without answering: the submitter must never have more than
  // capacity() descriptors outstanding, or the device drops them.
  virtual bool dedicated() const = 0;
  virtual std::size_t capacity() const = 0;
  // Largest transfer size of one descriptor.
  virtual std::uint32_t max_transfer() const = 0;
  virtual nlohmann::json info() const = 0;
};

// Descriptors outstanding on a dedicated work queue, shared by every queue that submits to it.
class Credits {
 public:
  explicit Credits(std::size_t n) : free_(static_cast<long>(n)) {}
  bool take() {
    long f = free_.load(std::memory_order_relaxed);
    while (f > 0)
      if (free_.compare_exchange_weak(f, f - 1, std::memory_order_acquire)) return true;
    return false;
  }
  void give() { free_.fetch_add(1, std::memory_order_release); }

 private:
  std::atomic<long> free_;
};

// Touches the page of a fault so the resubmitted descriptor finds it present: a read for a read
// fault, a write of the byte's own value for a write fault (the destination is rewritten anyway).
void touch_fault_page(std::uint64_t addr, bool write);

class DsaQueue final : public engine::Queue {
 public:
  DsaQueue(Portal& p, Credits* credits, int depth, bool cache_control);
  engine::Ticket submit(const engine::Request& r) override;
  bool poll(engine::Ticket t) override;
  const engine::QueueStats& stats() const override { return stats_; }

 private:
  struct Slot {
    engine::Request req;
    std::size_t done = 0;     // bytes completed before the descriptor in flight
    std::size_t part = 0;     // bytes of the descriptor in flight
    bool active = false;      // a descriptor is in flight (and holds a credit on a dedicated queue)
    std::uint8_t status = 0;  // its completion status once reaped, until processed
    engine::Ticket ticket = 0;
  };
  void issue(Slot& s, CompletionRecord& cr);
  // Notes a finished descriptor of slot i and gives its credit back (so a submitter waiting for a
  // credit frees the ones its own finished descriptors hold).
  void reap(std::size_t i);

  Portal& portal_;
  Credits* credits_;
  bool cache_control_;
  std::vector<Slot> slots_;
  std::unique_ptr<CompletionRecord[]> records_;
  engine::Ticket next_ = 0;
};

}  // namespace bw::dsa
