// A software model of a DSA work queue: submitted 64-byte descriptors are copied into a bounded
// queue and a thread executes them from that memory layout as the device would (MEMMOVE and NOOP;
// anything else completes with "bad opcode"), writing the completion record status last. Chosen
// pages fault once: without Block On Fault the descriptor completes partially (status 0x03 with
// bytes_completed and the fault address), with it the model waits as the device would. CI runs the
// DSA submission code against it; it says nothing about the speed of a real device.
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "engine/dsa_queue.hpp"

namespace bw::dsa {

struct ModelOptions {
  bool dedicated = false;
  std::size_t capacity = 32;              // descriptors the work queue holds
  std::uint32_t max_transfer = 2u << 20;  // bytes per descriptor
  std::size_t fault_every = 0;            // every Nth 4 KiB page (by address) faults once; 0: none
};

class ModelPortal final : public Portal {
 public:
  explicit ModelPortal(ModelOptions o);
  ~ModelPortal() override;
  bool submit(const Descriptor& d) override;
  bool dedicated() const override { return opt_.dedicated; }
  std::size_t capacity() const override { return opt_.capacity; }
  std::uint32_t max_transfer() const override { return opt_.max_transfer; }
  nlohmann::json info() const override;

  // Makes the page holding addr fault once (in addition to fault_every).
  void fault_once(const void* addr);
  std::size_t executed() const;
  std::size_t faults() const;
  std::size_t dropped() const;  // descriptors a full dedicated queue lost (the submitter's bug)

 private:
  void run();
  void execute(const Descriptor& d);
  // Whether the page of addr faults now; a page faults once.
  bool faults_now(std::uint64_t addr);

  ModelOptions opt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::array<unsigned char, 64>> queue_;
  std::set<std::uint64_t> pending_faults_, faulted_;
  std::size_t executed_ = 0, faults_ = 0, dropped_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace bw::dsa
