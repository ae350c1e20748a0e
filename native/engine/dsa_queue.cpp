#include "engine/dsa_queue.hpp"

#include <chrono>
#include <cstdio>
#include <immintrin.h>

#include "common/errors.hpp"

namespace bw::dsa {

Descriptor memmove(const void* src, void* dst, std::uint32_t bytes, CompletionRecord* cr, bool cache_control,
                   bool block_on_fault) {
  Descriptor d;
  std::uint32_t flags = kFlagCompletionAddrValid | kFlagRequestCompletion;
  if (cache_control) flags |= kFlagCacheControl;
  if (block_on_fault) flags |= kFlagBlockOnFault;
  d.flags_opcode = encode_flags_opcode(flags, kOpMemmove);
  d.completion_addr = reinterpret_cast<std::uint64_t>(cr);
  d.src = reinterpret_cast<std::uint64_t>(src);
  d.dst = reinterpret_cast<std::uint64_t>(dst);
  d.xfer_size = bytes;
  return d;
}

void touch_fault_page(std::uint64_t addr, bool write) {
  auto* p = reinterpret_cast<volatile std::uint8_t*>(addr);
  std::uint8_t v = *p;
  if (write) *p = v;
}

DsaQueue::DsaQueue(Portal& p, Credits* credits, int depth, bool cache_control)
    : portal_(p),
      credits_(credits),
      cache_control_(cache_control),
      slots_(static_cast<std::size_t>(depth)),
      records_(new CompletionRecord[static_cast<std::size_t>(depth)]) {}

// Writes the descriptor for the rest of slot s (up to the work queue's maximum transfer): waits for
// a credit on a dedicated queue, repeats while a shared queue refuses.
void DsaQueue::issue(Slot& s, CompletionRecord& cr) {
  const std::size_t left = s.req.bytes - s.done;
  s.part = std::min<std::size_t>(left, portal_.max_transfer());
  cr.clear();
  Descriptor d = memmove(static_cast<const char*>(s.req.src) + s.done, static_cast<char*>(s.req.dst) + s.done,
                         static_cast<std::uint32_t>(s.part), &cr, cache_control_, false);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  if (credits_)
    while (!credits_->take()) {
      for (std::size_t j = 0; j < slots_.size(); ++j) reap(j);
      _mm_pause();
      if (std::chrono::steady_clock::now() > deadline) throw RunError("DSA work queue stayed full for 10 s");
    }
  while (!portal_.submit(d)) {
    stats_.retries++;
    _mm_pause();
    if (std::chrono::steady_clock::now() > deadline) throw RunError("DSA work queue refused submissions for 10 s");
  }
  s.active = true;
}

engine::Ticket DsaQueue::submit(const engine::Request& r) {
  if (r.kind != engine::Kind::Copy) throw UsageError("the DSA engine copies blocks; it does not fill the cache alone");
  const engine::Ticket t = next_++;
  const std::size_t i = t % slots_.size();
  if (t >= slots_.size()) wait(t - slots_.size());
  Slot& s = slots_[i];
  s.req = r;
  s.done = 0;
  s.status = 0;
  s.ticket = t;
  stats_.requests++;
  stats_.bytes += r.bytes;
  if (r.bytes == 0) {
    s.active = false;
    return t;
  }
  issue(s, records_[i]);
  return t;
}

void DsaQueue::reap(std::size_t i) {
  Slot& s = slots_[i];
  if (!s.active) return;
  const std::uint8_t st = records_[i].load_status();
  if (st == kStatusNone) return;
  s.status = st;
  s.active = false;
  if (credits_) credits_->give();
}

bool DsaQueue::poll(engine::Ticket t) {
  const std::size_t i = t % slots_.size();
  Slot& s = slots_[i];
  if (s.ticket != t) return true;
  reap(i);
  if (s.active) return false;
  if (s.status == kStatusNone) return true;  // nothing in flight, nothing to process: complete
  CompletionRecord& cr = records_[i];
  const std::uint8_t st = s.status;
  s.status = kStatusNone;
  const std::uint8_t code = st & kStatusMask;
  if (code == kStatusSuccess) {
    s.done += s.part;
  } else if (code == kStatusPageFault) {
    // Partial completion: bytes_completed were moved; touch the page and submit the rest.
    stats_.page_faults++;
    s.done += cr.bytes_completed;
    touch_fault_page(cr.fault_addr, (st & kStatusWriteFault) != 0);
  } else {
    char buf[160];
    std::snprintf(buf, sizeof buf, "DSA descriptor failed with status 0x%02x after %zu of %zu bytes", st, s.done,
                  s.req.bytes);
    throw RunError(buf);
  }
  if (s.done >= s.req.bytes) return true;
  issue(s, cr);
  return false;
}

}  // namespace bw::dsa
