// The DSA path without DSA: the descriptor and completion record against the layout of Intel's
// DSA specification (and Linux's <linux/idxd.h> where present), and the submission code against
// the software model of a work queue: page faults with partial completion, shared-queue retries,
// dedicated-queue credits, transfers above the maximum size.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "common/errors.hpp"
#include "engine/dsa_model.hpp"

#if __has_include(<linux/idxd.h>)
#include <linux/idxd.h>
#define HAVE_LINUX_IDXD 1
#endif

using namespace bw::dsa;

namespace {

template <class T>
T field(const void* base, std::size_t offset) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + offset, sizeof v);
  return v;
}

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  std::mt19937 g(seed);
  for (auto& b : v) b = static_cast<unsigned char>(g());
  return v;
}

// Page-aligned buffer so tests can name pages.
struct Pages {
  explicit Pages(std::size_t bytes) : p(static_cast<unsigned char*>(std::aligned_alloc(4096, bytes))), n(bytes) {}
  ~Pages() { std::free(p); }
  unsigned char* p;
  std::size_t n;
};

}  // namespace

TEST(DsaDescriptor, MemmoveEncodesTheSpecificationLayout) {
  alignas(32) CompletionRecord cr;
  int src = 0, dst = 0;
  Descriptor d = memmove(&src, &dst, 1u << 20, &cr, true, false);
  const unsigned char* raw = reinterpret_cast<const unsigned char*>(&d);
  EXPECT_EQ(sizeof d, 64u);
  EXPECT_EQ(field<std::uint32_t>(raw, 0), 0u) << "PASID and privilege are left to ENQCMD / the WQ";
  EXPECT_EQ(raw[7], 0x03) << "opcode MEMMOVE in bits 24-31 of the second dword";
  const std::uint32_t flags = field<std::uint32_t>(raw, 4) & 0xffffff;
  EXPECT_EQ(flags, 0x0004u | 0x0008u | 0x0100u) << "CRAV, RCR and Cache Control; no Block On Fault";
  EXPECT_EQ(field<std::uint64_t>(raw, 8), reinterpret_cast<std::uint64_t>(&cr));
  EXPECT_EQ(field<std::uint64_t>(raw, 16), reinterpret_cast<std::uint64_t>(&src));
  EXPECT_EQ(field<std::uint64_t>(raw, 24), reinterpret_cast<std::uint64_t>(&dst));
  EXPECT_EQ(field<std::uint32_t>(raw, 32), 1u << 20);
  for (std::size_t i = 36; i < 64; ++i) EXPECT_EQ(raw[i], 0) << "reserved byte " << i;

  Descriptor m = memmove(&src, &dst, 64, &cr, false, true);
  EXPECT_EQ(m.flags(), 0x0004u | 0x0008u | 0x0002u) << "memory destination, Block On Fault";
  EXPECT_EQ(m.opcode(), kOpMemmove);
}

TEST(DsaDescriptor, CompletionRecordLayout) {
  alignas(32) unsigned char raw[32] = {};
  raw[0] = 0x83;  // page fault on a write
  std::uint32_t done = 12345;
  std::uint64_t fault = 0x7f0012345000ull;
  std::memcpy(raw + 4, &done, 4);
  std::memcpy(raw + 8, &fault, 8);
  CompletionRecord cr;
  std::memcpy(&cr, raw, 32);
  EXPECT_EQ(cr.load_status() & kStatusMask, kStatusPageFault);
  EXPECT_TRUE(cr.load_status() & kStatusWriteFault);
  EXPECT_EQ(cr.bytes_completed, done);
  EXPECT_EQ(cr.fault_addr, fault);
  EXPECT_EQ(alignof(CompletionRecord), 32u);
}

#ifdef HAVE_LINUX_IDXD
TEST(DsaDescriptor, AgreesWithLinuxIdxdHeader) {
  static_assert(sizeof(dsa_hw_desc) == sizeof(Descriptor));
  static_assert(offsetof(dsa_hw_desc, completion_addr) == offsetof(Descriptor, completion_addr));
  static_assert(offsetof(dsa_hw_desc, src_addr) == offsetof(Descriptor, src));
  static_assert(offsetof(dsa_hw_desc, dst_addr) == offsetof(Descriptor, dst));
  static_assert(offsetof(dsa_hw_desc, xfer_size) == offsetof(Descriptor, xfer_size));
  static_assert(offsetof(dsa_completion_record, bytes_completed) == offsetof(CompletionRecord, bytes_completed));
  static_assert(offsetof(dsa_completion_record, fault_addr) == offsetof(CompletionRecord, fault_addr));
  EXPECT_EQ(kOpMemmove, DSA_OPCODE_MEMMOVE);
  EXPECT_EQ(kOpCacheFlush, DSA_OPCODE_CFLUSH);
  EXPECT_EQ(kOpDrain, DSA_OPCODE_DRAIN);
  EXPECT_EQ(kFlagBlockOnFault, unsigned(IDXD_OP_FLAG_BOF));
  EXPECT_EQ(kFlagCompletionAddrValid, unsigned(IDXD_OP_FLAG_CRAV));
  EXPECT_EQ(kFlagRequestCompletion, unsigned(IDXD_OP_FLAG_RCR));
  EXPECT_EQ(kFlagCacheControl, unsigned(IDXD_OP_FLAG_CC));
  EXPECT_EQ(kStatusSuccess, DSA_COMP_SUCCESS);
  EXPECT_EQ(kStatusPageFault, DSA_COMP_PAGE_FAULT_NOBOF);
  EXPECT_EQ(kStatusBadOpcode, DSA_COMP_BAD_OPCODE);
  EXPECT_EQ(kStatusWriteFault, DSA_COMP_STATUS_WRITE);

  alignas(32) CompletionRecord cr;
  int src = 0, dst = 0;
  Descriptor d = memmove(&src, &dst, 4096, &cr, true, false);
  dsa_hw_desc h;
  std::memcpy(&h, &d, sizeof h);
  EXPECT_EQ(h.opcode, DSA_OPCODE_MEMMOVE);
  EXPECT_EQ(h.flags, unsigned(IDXD_OP_FLAG_CRAV | IDXD_OP_FLAG_RCR | IDXD_OP_FLAG_CC));
  EXPECT_EQ(h.pasid, 0u);
  EXPECT_EQ(h.priv, 0u);
  EXPECT_EQ(h.xfer_size, 4096u);
  EXPECT_EQ(h.completion_addr, reinterpret_cast<std::uint64_t>(&cr));
}
#endif

TEST(DsaModel, ExecutesMemmoveAndReportsInTheCompletionRecord) {
  ModelPortal m({});
  auto src = pattern(10000, 1);
  std::vector<unsigned char> dst(10000);
  alignas(32) CompletionRecord cr;
  ASSERT_TRUE(m.submit(memmove(src.data(), dst.data(), 10000, &cr, true, false)));
  while (cr.load_status() == kStatusNone) std::this_thread::yield();
  EXPECT_EQ(cr.load_status(), kStatusSuccess);
  EXPECT_EQ(cr.bytes_completed, 10000u);
  EXPECT_EQ(src, dst);
}

TEST(DsaModel, PageFaultCompletesPartiallyWithoutBlockOnFault) {
  ModelPortal m({});
  Pages src(5 * 4096), dst(5 * 4096);
  std::memset(src.p, 7, src.n);
  m.fault_once(src.p + 2 * 4096);
  alignas(32) CompletionRecord cr;
  ASSERT_TRUE(m.submit(memmove(src.p, dst.p, 5 * 4096, &cr, true, false)));
  while (cr.load_status() == kStatusNone) std::this_thread::yield();
  EXPECT_EQ(cr.load_status(), kStatusPageFault) << "a read fault, bit 7 clear";
  EXPECT_EQ(cr.bytes_completed, 2u * 4096);
  EXPECT_EQ(cr.fault_addr, reinterpret_cast<std::uint64_t>(src.p + 2 * 4096));

  // With Block On Fault the model waits for the page instead (the device would, too).
  m.fault_once(dst.p + 3 * 4096);
  alignas(32) CompletionRecord cr2;
  ASSERT_TRUE(m.submit(memmove(src.p, dst.p, 5 * 4096, &cr2, true, true)));
  while (cr2.load_status() == kStatusNone) std::this_thread::yield();
  EXPECT_EQ(cr2.load_status(), kStatusSuccess);
  EXPECT_EQ(std::memcmp(src.p, dst.p, src.n), 0);
}

TEST(DsaModel, WriteFaultSetsBitSeven) {
  ModelPortal m({});
  Pages src(3 * 4096), dst(3 * 4096);
  m.fault_once(dst.p + 4096);
  alignas(32) CompletionRecord cr;
  ASSERT_TRUE(m.submit(memmove(src.p, dst.p, 3 * 4096, &cr, false, false)));
  while (cr.load_status() == kStatusNone) std::this_thread::yield();
  EXPECT_EQ(cr.load_status(), kStatusPageFault | kStatusWriteFault);
  EXPECT_EQ(cr.bytes_completed, 4096u);
}

TEST(DsaModel, UnsupportedOpcodeIsRefusedInTheRecord) {
  ModelPortal m({});
  alignas(32) CompletionRecord cr;
  Descriptor d;
  d.flags_opcode = encode_flags_opcode(kFlagCompletionAddrValid | kFlagRequestCompletion, kOpCacheFlush);
  d.completion_addr = reinterpret_cast<std::uint64_t>(&cr);
  ASSERT_TRUE(m.submit(d));
  while (cr.load_status() == kStatusNone) std::this_thread::yield();
  EXPECT_EQ(cr.load_status(), kStatusBadOpcode);
}

namespace {

// Copies with DsaQueue through portal p and checks every byte arrived.
void copy_through(Portal& p, Credits* credits, std::size_t bytes, std::size_t offset, int depth, int blocks,
                  bw::engine::QueueStats* out = nullptr) {
  auto src = pattern(bytes * blocks + offset, static_cast<unsigned>(bytes + offset));
  std::vector<unsigned char> dst(bytes * blocks + offset, 0);
  DsaQueue q(p, credits, depth, true);
  std::vector<bw::engine::Ticket> t;
  for (int b = 0; b < blocks; ++b)
    t.push_back(
        q.submit({bw::engine::Kind::Copy, src.data() + offset + b * bytes, dst.data() + offset + b * bytes, bytes}));
  for (auto x : t) q.wait(x);
  EXPECT_EQ(std::memcmp(src.data() + offset, dst.data() + offset, bytes * blocks), 0);
  if (out) *out = q.stats();
}

// Refuses the first `refusals` submissions, as a full shared work queue answers ENQCMD.
class Refusing final : public Portal {
 public:
  Refusing(Portal& inner, int refusals) : inner_(inner), left_(refusals) {}
  bool submit(const Descriptor& d) override { return left_-- > 0 ? false : inner_.submit(d); }
  bool dedicated() const override { return false; }
  std::size_t capacity() const override { return inner_.capacity(); }
  std::uint32_t max_transfer() const override { return inner_.max_transfer(); }
  nlohmann::json info() const override { return inner_.info(); }

 private:
  Portal& inner_;
  int left_;
};

}  // namespace

TEST(DsaQueue, ResubmitsTheRestAfterPageFaults) {
  ModelOptions o;
  o.fault_every = 3;
  ModelPortal m(o);
  bw::engine::QueueStats st;
  copy_through(m, nullptr, 64 * 1024, 0, 4, 16, &st);
  EXPECT_GT(st.page_faults, 0u);
  EXPECT_EQ(st.page_faults, m.faults()) << "every fault the model raised was resumed";
}

TEST(DsaQueue, UnalignedOddSizesAndSplitTransfers) {
  ModelOptions o;
  o.max_transfer = 8192;
  o.fault_every = 5;
  ModelPortal m(o);
  for (std::size_t bytes : {1ul, 63ul, 4097ul, 100003ul})
    for (std::size_t off : {0ul, 1ul, 3ul}) copy_through(m, nullptr, bytes, off, 3, 5);
  EXPECT_GT(m.executed(), 5u * 12u) << "transfers above 8 KiB went as several descriptors";
}

TEST(DsaQueue, RetriesWhatASharedQueueRefuses) {
  ModelPortal m({});
  Refusing r(m, 3);
  bw::engine::QueueStats st;
  copy_through(r, nullptr, 4096, 0, 2, 4, &st);
  EXPECT_EQ(st.retries, 3u);
}

TEST(DsaQueue, DedicatedQueueNeverOverflowsWithManySubmitters) {
  ModelOptions o;
  o.dedicated = true;
  o.capacity = 3;
  ModelPortal m(o);
  Credits credits(m.capacity());
  std::vector<std::thread> th;
  for (int i = 0; i < 4; ++i) th.emplace_back([&] { copy_through(m, &credits, 8192 + 8, 0, 4, 12); });
  for (auto& t : th) t.join();
  EXPECT_EQ(m.dropped(), 0u);
}

TEST(DsaQueue, FailedDescriptorIsARunError) {
  ModelOptions o;
  o.max_transfer = 4096;
  ModelPortal m(o);
  // A portal that claims a larger maximum than the model accepts: the model answers 0x13.
  class Lying final : public Portal {
   public:
    explicit Lying(Portal& p) : p_(p) {}
    bool submit(const Descriptor& d) override { return p_.submit(d); }
    bool dedicated() const override { return false; }
    std::size_t capacity() const override { return 8; }
    std::uint32_t max_transfer() const override { return 1u << 20; }
    nlohmann::json info() const override { return {}; }

   private:
    Portal& p_;
  } lying(m);
  std::vector<unsigned char> a(8192), b(8192);
  DsaQueue q(lying, nullptr, 2, true);
  auto t = q.submit({bw::engine::Kind::Copy, a.data(), b.data(), 8192});
  EXPECT_THROW(q.wait(t), bw::RunError);
}
