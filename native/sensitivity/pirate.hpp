// The cache pirate: one thread that keeps X bytes of its own lines in the cache it shares with a
// program, by going round them faster than the program can push them out (Eklöv et al., Cache
// Pirating). Its lines are chased in kChains independent random cycles, so several misses are in
// flight and a pass is quick; the time per access says whether they stay: near what it took alone
// they do, near a trip to memory they do not.
//
// probe() asks whether another CPU shares the pirate's cache at all (a virtual machine can claim a
// shared cache its CPUs do not share): the pirate warms its lines, a thread on that CPU times one
// pass through them, and again after the lines are flushed to memory. Lines served from a shared
// cache come well before lines from memory.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "sensitivity/worker.hpp"

namespace bw::sensitivity {

inline constexpr int kChains = 8;

// The next line (index) of every line in kChains cycles through lines [0, n) in a random order
// (seeded: the same cycles every run); each line is on exactly one cycle.
std::vector<std::uint32_t> chain_order(std::uint32_t n, int chains, std::uint64_t seed);

struct PirateSample {
  double seconds = 0;
  std::uint64_t accesses = 0;
  double ns_per_access() const { return accesses ? seconds * 1e9 / static_cast<double>(accesses) : 0.0; }
};

struct ProbeResult {
  double own_ns = 0;      // the pirate's own pass, one chain
  double shared_ns = 0;   // the other CPU's pass through the pirate's warm lines
  double flushed_ns = 0;  // the other CPU's pass after the lines were flushed to memory
};

class Pirate {
 public:
  Pirate(int cpu, std::uint64_t max_bytes);
  ~Pirate();
  // Stops holding, builds the cycles over the first bytes, warms them, times them alone (ns per
  // access), and holds them until stop().
  double hold(std::uint64_t bytes);
  PirateSample stop();
  ProbeResult probe(int cpu, std::uint64_t bytes);
  bool holding() const { return holding_; }
  std::uint64_t max_bytes() const { return max_; }

 private:
  void build(std::uint64_t bytes, int chains);
  PirateSample chase(int chains, double min_seconds, bool until_stopped);
  Worker worker_;
  char* base_ = nullptr;
  std::uint64_t max_, bytes_ = 0;
  std::uint32_t starts_[kChains] = {};
  std::atomic<bool> go_{false};
  bool holding_ = false;
  PirateSample sample_;
  double t0_ = 0;
};

}  // namespace bw::sensitivity
