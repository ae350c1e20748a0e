#include "engine/dsa_model.hpp"

#include <array>
#include <cstring>

namespace bw::dsa {

namespace {
constexpr std::uint64_t kPage = 4096;
}

ModelPortal::ModelPortal(ModelOptions o) : opt_(o), worker_([this] { run(); }) {}

ModelPortal::~ModelPortal() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

bool ModelPortal::submit(const Descriptor& d) {
  std::array<unsigned char, 64> raw;
  std::memcpy(raw.data(), &d, 64);  // the 64-byte write of ENQCMD / MOVDIR64B
  {
    std::lock_guard lk(mu_);
    if (queue_.size() >= opt_.capacity) {
      if (opt_.dedicated) ++dropped_;  // a dedicated queue drops what overflows
      return opt_.dedicated;           // a shared queue answers "retry"
    }
    queue_.push_back(raw);
  }
  cv_.notify_one();
  return true;
}

nlohmann::json ModelPortal::info() const {
  std::lock_guard lk(mu_);
  return {{"work_queue", "software model"},
          {"mode", opt_.dedicated ? "dedicated" : "shared"},
          {"capacity", opt_.capacity},
          {"max_transfer_bytes", opt_.max_transfer},
          {"fault_every_pages", opt_.fault_every},
          {"descriptors_executed", executed_},
          {"page_faults_raised", faults_}};
}

void ModelPortal::fault_once(const void* addr) {
  std::lock_guard lk(mu_);
  pending_faults_.insert(reinterpret_cast<std::uint64_t>(addr) / kPage);
}

std::size_t ModelPortal::executed() const {
  std::lock_guard lk(mu_);
  return executed_;
}
std::size_t ModelPortal::faults() const {
  std::lock_guard lk(mu_);
  return faults_;
}
std::size_t ModelPortal::dropped() const {
  std::lock_guard lk(mu_);
  return dropped_;
}

bool ModelPortal::faults_now(std::uint64_t addr) {
  std::lock_guard lk(mu_);
  const std::uint64_t page = addr / kPage;
  bool chosen = pending_faults_.count(page) || (opt_.fault_every && page % opt_.fault_every == 0);
  if (!chosen || faulted_.count(page)) return false;
  faulted_.insert(page);
  pending_faults_.erase(page);
  ++faults_;
  return true;
}

void ModelPortal::run() {
  for (;;) {
    std::array<unsigned char, 64> raw;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      raw = queue_.front();
      queue_.pop_front();
    }
    Descriptor d;
    std::memcpy(&d, raw.data(), 64);
    execute(d);
    std::lock_guard lk(mu_);
    ++executed_;
  }
}

void ModelPortal::execute(const Descriptor& d) {
  if (!(d.flags() & kFlagCompletionAddrValid) || d.completion_addr % 32) return;  // nowhere to report
  auto* cr = reinterpret_cast<CompletionRecord*>(d.completion_addr);
  auto finish = [&](std::uint8_t status, std::uint32_t done, std::uint64_t fault) {
    cr->result = 0;
    cr->bytes_completed = done;
    cr->fault_addr = fault;
    cr->store_status(status);
  };
  bool reserved_clear = (d.pasid_priv & 0x7ff00000u) == 0 && d.reserved1 == 0 && d.int_handle == 0;
  for (unsigned char b : d.op_specific) reserved_clear &= b == 0;
  if (d.opcode() == kOpNoop) return finish(kStatusSuccess, 0, 0);
  if (d.opcode() != kOpMemmove) return finish(kStatusBadOpcode, 0, 0);
  if (!reserved_clear) return finish(kStatusNonzeroReserved, 0, 0);
  if (d.xfer_size > opt_.max_transfer) return finish(kStatusTransferSize, 0, 0);
  const auto* src = reinterpret_cast<const unsigned char*>(d.src);
  auto* dst = reinterpret_cast<unsigned char*>(d.dst);
  const bool block = d.flags() & kFlagBlockOnFault;
  std::uint32_t done = 0;
  while (done < d.xfer_size) {
    // Up to the next page boundary of either side, where a fault may stop the copy.
    std::uint64_t s = d.src + done, t = d.dst + done;
    std::uint32_t n =
        static_cast<std::uint32_t>(std::min<std::uint64_t>({d.xfer_size - done, kPage - s % kPage, kPage - t % kPage}));
    bool read_fault = (s % kPage == 0 || done == 0) && faults_now(s);
    bool write_fault = !read_fault && (t % kPage == 0 || done == 0) && faults_now(t);
    if ((read_fault || write_fault) && !block)
      return finish(static_cast<std::uint8_t>(kStatusPageFault | (write_fault ? kStatusWriteFault : 0)), done,
                    read_fault ? s : t);
    std::memcpy(dst + done, src + done, n);
    done += n;
  }
  finish(kStatusSuccess, done, 0);
}

}  // namespace bw::dsa
