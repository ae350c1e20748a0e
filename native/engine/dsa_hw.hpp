// Intel Data Streaming Accelerator: the 64-byte work descriptor and the 32-byte completion record
// as laid out in Intel's DSA Architecture Specification (section 8.1 "Descriptor", 8.2
// "Completion Record"; the same layout as struct dsa_hw_desc / dsa_completion_record of Linux's
// <linux/idxd.h>), and the encoding of the MEMMOVE descriptor the copy engine submits.
//
//   bytes  0-3   PASID (bits 0-19), reserved, privilege (bit 31)
//   bytes  4-7   flags (bits 0-23), opcode (bits 24-31)
//   bytes  8-15  completion record address (32-byte aligned)
//   bytes 16-23  source address
//   bytes 24-31  destination address
//   bytes 32-35  transfer size
//   bytes 36-37  completion interrupt handle
//   bytes 38-63  reserved / operation specific (must be zero for MEMMOVE)
//
//   completion record: byte 0 status (bit 7: the fault was on a write), byte 1 result,
//   bytes 4-7 bytes completed, bytes 8-15 fault address.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace bw::dsa {

// Opcodes (spec table 8-3).
inline constexpr std::uint8_t kOpNoop = 0x00;
inline constexpr std::uint8_t kOpBatch = 0x01;
inline constexpr std::uint8_t kOpDrain = 0x02;
inline constexpr std::uint8_t kOpMemmove = 0x03;
inline constexpr std::uint8_t kOpMemfill = 0x04;
inline constexpr std::uint8_t kOpCompare = 0x05;
inline constexpr std::uint8_t kOpCacheFlush = 0x20;

// Descriptor flags (spec 8.1.3).
inline constexpr std::uint32_t kFlagFence = 0x0001;
inline constexpr std::uint32_t kFlagBlockOnFault = 0x0002;
inline constexpr std::uint32_t kFlagCompletionAddrValid = 0x0004;
inline constexpr std::uint32_t kFlagRequestCompletion = 0x0008;
inline constexpr std::uint32_t kFlagRequestInterrupt = 0x0010;
inline constexpr std::uint32_t kFlagCacheControl = 0x0100;  // MEMMOVE: destination written to the cache

// Completion status (spec 8.2.1).
inline constexpr std::uint8_t kStatusNone = 0x00;
inline constexpr std::uint8_t kStatusSuccess = 0x01;
inline constexpr std::uint8_t kStatusPageFault = 0x03;  // page fault without Block On Fault: partial completion
inline constexpr std::uint8_t kStatusBadOpcode = 0x10;
inline constexpr std::uint8_t kStatusInvalidFlags = 0x11;
inline constexpr std::uint8_t kStatusNonzeroReserved = 0x12;
inline constexpr std::uint8_t kStatusTransferSize = 0x13;
inline constexpr std::uint8_t kStatusMask = 0x7f;
inline constexpr std::uint8_t kStatusWriteFault = 0x80;  // the faulting access was a write

struct alignas(64) Descriptor {
  std::uint32_t pasid_priv = 0;
  std::uint32_t flags_opcode = 0;
  std::uint64_t completion_addr = 0;
  std::uint64_t src = 0;
  std::uint64_t dst = 0;
  std::uint32_t xfer_size = 0;
  std::uint16_t int_handle = 0;
  std::uint16_t reserved1 = 0;
  std::uint8_t op_specific[24] = {};

  std::uint8_t opcode() const { return static_cast<std::uint8_t>(flags_opcode >> 24); }
  std::uint32_t flags() const { return flags_opcode & 0xffffffu; }
};
static_assert(sizeof(Descriptor) == 64, "a DSA descriptor is 64 bytes");
static_assert(offsetof(Descriptor, completion_addr) == 8 && offsetof(Descriptor, src) == 16 &&
                  offsetof(Descriptor, dst) == 24 && offsetof(Descriptor, xfer_size) == 32 &&
                  offsetof(Descriptor, int_handle) == 36,
              "descriptor fields at the offsets of the DSA specification");

struct alignas(32) CompletionRecord {
  std::uint8_t status = 0;
  std::uint8_t result = 0;
  std::uint16_t reserved = 0;
  std::uint32_t bytes_completed = 0;
  std::uint64_t fault_addr = 0;
  std::uint8_t op_specific[16] = {};

  // The device writes the status last; readers poll it with acquire order.
  std::uint8_t load_status() const {
    return std::atomic_ref<std::uint8_t>(const_cast<std::uint8_t&>(status)).load(std::memory_order_acquire);
  }
  void store_status(std::uint8_t s) { std::atomic_ref<std::uint8_t>(status).store(s, std::memory_order_release); }
  void clear() { std::atomic_ref<std::uint8_t>(status).store(kStatusNone, std::memory_order_relaxed); }
};
static_assert(sizeof(CompletionRecord) == 32, "a DSA completion record is 32 bytes");
static_assert(offsetof(CompletionRecord, bytes_completed) == 4 && offsetof(CompletionRecord, fault_addr) == 8,
              "completion record fields at the offsets of the DSA specification");

inline std::uint32_t encode_flags_opcode(std::uint32_t flags, std::uint8_t opcode) {
  return (flags & 0xffffffu) | (static_cast<std::uint32_t>(opcode) << 24);
}

// A MEMMOVE of bytes from src to dst reporting into cr: Completion Record Address Valid and
// Request Completion Record always; Cache Control when the destination is to stay in the cache;
// Block On Fault when the device is to wait for page faults instead of completing partially.
Descriptor memmove(const void* src, void* dst, std::uint32_t bytes, CompletionRecord* cr, bool cache_control,
                   bool block_on_fault);

}  // namespace bw::dsa
