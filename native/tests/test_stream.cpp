#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/isa.hpp"
#include "stream/kernels.hpp"
#include "stream/runner.hpp"
#include "stream/stats.hpp"

using namespace bw::stream;

TEST(StreamKernels, AccountingIsDeclaredPerKernel) {
  struct Want {
    const char* name;
    double bytes, wa, flops;
    bool stores;
  };
  const Want want[] = {{"copy", 16, 8, 0, true},  {"scale", 16, 8, 1, true},   {"add", 24, 8, 1, true},
                       {"triad", 24, 8, 2, true}, {"nstream", 32, 0, 3, true}, {"dot", 16, 0, 2, false}};
  ASSERT_EQ(kernels().size(), std::size(want));
  for (const Want& w : want) {
    const Kernel& k = find_kernel(w.name);
    EXPECT_EQ(k.bytes_per_element, w.bytes) << w.name;
    EXPECT_EQ(k.write_allocate_bytes_per_element, w.wa) << w.name;
    EXPECT_EQ(k.flops_per_element, w.flops) << w.name;
    EXPECT_EQ(k.writes != 0, w.stores) << w.name;
    // Bytes follow from the arrays touched: 8 per array read or written, and 8 more for a written
    // array that is also read (no write-allocate then: its line comes in anyway).
    const bool reads_written = k.writes != 0 && k.write_allocate_bytes_per_element == 0;
    EXPECT_EQ(8.0 * (int(k.uses_a) + int(k.uses_b) + int(k.uses_c) + int(reads_written)), k.bytes_per_element)
        << w.name;
  }
}

TEST(StreamKernels, UnknownKernelIsUsageError) { EXPECT_THROW(find_kernel("daxpy"), bw::UsageError); }

TEST(StreamChunks, CoverEverythingAlignedAndInOrder) {
  for (std::size_t n : {0ul, 1ul, 511ul, 512ul, 1000ul, 100003ul, 1ul << 20})
    for (int T : {1, 2, 3, 7, 64}) {
      std::size_t expect_begin = 0;
      for (int t = 0; t < T; ++t) {
        auto [b, e] = chunk(n, t, T);
        EXPECT_EQ(b, expect_begin);
        EXPECT_LE(b, e);
        EXPECT_EQ(b % kChunkAlign, 0u) << "chunk start must be page and vector aligned";
        expect_begin = e;
      }
      EXPECT_EQ(expect_begin, n);
    }
}

// Arrays with a deliberate misalignment so the scalar head, vector body and tail all run.
struct Fixture {
  std::vector<double> a, b, c;
  Arrays x;
  std::size_t n;
  Fixture(std::size_t n_, std::size_t offset) : a(n_ + 16), b(n_ + 16), c(n_ + 16), n(n_) {
    x = {a.data() + offset, b.data() + offset, c.data() + offset};
  }
};

// Every kernel of every instruction-set variant against STREAM's validation (the reference
// replayed per repetition), on arrays whose misalignment runs the scalar head, vector body and
// tail; variants this binary or CPU lacks are skipped, saying why.
class StreamVariants : public ::testing::TestWithParam<std::string> {
 protected:
  void TearDown() override { select_isa("auto"); }
};

TEST_P(StreamVariants, EveryKernelValidatesWithBothStoreKinds) {
  const std::string isa_name = GetParam();
  if (!find_variant(isa_name)) GTEST_SKIP() << bw::isa_refusal(isa_name, {isa_name});
  EXPECT_EQ(select_isa(isa_name), isa_name);
  EXPECT_STREQ(isa(), isa_name.c_str());
  if (isa_name != "generic") {
    EXPECT_EQ(vector_bits(), isa_name == "avx512" ? 512 : 256);
  }
  for (const Kernel& k : kernels())
    for (bool nt : {true, false})
      for (std::size_t off : {0u, 1u, 3u})
        for (std::size_t n : {1ul, 7ul, 37ul, 1000ul, 4099ul}) {
          Fixture f(n, off);
          initialise(k, f.x, n, 2, false);
          double secs = 0, sum = 0;
          for (int r = 0; r < 3; ++r) sum = run_once(k, f.x, n, 2, nt, &secs);
          Validation v = validate(k, f.x, n, 3, 2, sum);
          EXPECT_TRUE(v.passed) << isa_name << " " << k.name << " nt=" << nt << " n=" << n << " off=" << off << ": "
                                << v.message;
          EXPECT_GE(secs, 0.0);
        }
}

INSTANTIATE_TEST_SUITE_P(Isa, StreamVariants, ::testing::Values("avx512", "avx2", "generic"));

TEST(StreamVariantChoice, AutoIsTheBestTheCpuRunsAndTablesAgree) {
  const Variant* best = find_variant("auto");
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->isa, bw::cpu_isas().front());
  for (const Variant* v : variants()) {
    ASSERT_EQ(v->kernel_list().size(), best->kernel_list().size()) << v->isa;
    for (std::size_t i = 0; i < best->kernel_list().size(); ++i) {
      EXPECT_EQ(v->kernel_list()[i].name, best->kernel_list()[i].name) << v->isa;
      EXPECT_EQ(v->kernel_list()[i].bytes_per_element, best->kernel_list()[i].bytes_per_element) << v->isa;
    }
  }
  EXPECT_THROW(select_isa("sse9"), bw::UsageError);
  for (const std::string& n : bw::isa_names())
    if (!bw::cpu_has_isa(n)) {
      EXPECT_THROW(select_isa(n), bw::UsageError) << n;
    }
  EXPECT_STREQ(isa(), best->isa);  // a refused choice leaves the one before
}

TEST(StreamKernels, ComputesWhatTheFormulaSays) {
  Fixture f(100, 0);
  initialise(find_kernel("triad"), f.x, 100, 1, true);
  double secs;
  run_once(find_kernel("triad"), f.x, 100, 1, true, &secs);
  EXPECT_EQ(f.x.a[42], kInitB + kScalar * kInitC);
  run_once(find_kernel("scale"), f.x, 100, 1, false, &secs);
  EXPECT_EQ(f.x.b[99], kScalar * kInitC);
  EXPECT_EQ(run_once(find_kernel("dot"), f.x, 100, 1, false, &secs), 100 * f.x.a[0] * f.x.b[0]);
}

TEST(StreamValidation, CatchesOneWrongElementAndAWrongSum) {
  const Kernel& copy = find_kernel("copy");
  Fixture f(5000, 0);
  initialise(copy, f.x, 5000, 1, false);
  double secs;
  run_once(copy, f.x, 5000, 1, true, &secs);
  f.x.c[4321] += 1e-9;
  Validation v = validate(copy, f.x, 5000, 1, 1, 0);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.message.find("array c"), std::string::npos) << v.message;

  const Kernel& dot = find_kernel("dot");
  initialise(dot, f.x, 5000, 1, false);
  double sum = run_once(dot, f.x, 5000, 1, false, &secs);
  EXPECT_TRUE(validate(dot, f.x, 5000, 1, 1, sum).passed);
  EXPECT_FALSE(validate(dot, f.x, 5000, 1, 1, sum * (1 + 1e-12)).passed);
}

TEST(StreamValidation, NanFails) {
  const Kernel& add = find_kernel("add");
  Fixture f(64, 0);
  initialise(add, f.x, 64, 1, false);
  double secs;
  run_once(add, f.x, 64, 1, false, &secs);
  f.x.a[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(validate(add, f.x, 64, 1, 1, 0).passed);
}

// nstream accumulates into a: only a replay of every repetition gives the value it reaches, so a
// validation that replays fewer (or one, as STREAM's does for kernels that do not accumulate) fails.
TEST(StreamValidation, ReplaysEveryRepetition) {
  const Kernel& nstream = find_kernel("nstream");
  Fixture f(4099, 1);
  initialise(nstream, f.x, 4099, 2, false);
  double secs;
  for (int r = 0; r < 5; ++r) run_once(nstream, f.x, 4099, 2, true, &secs);
  EXPECT_EQ(f.x.a[17], kInitA + 5 * (kInitB + kScalar * kInitC));
  EXPECT_TRUE(validate(nstream, f.x, 4099, 5, 2, 0).passed);
  EXPECT_FALSE(validate(nstream, f.x, 4099, 4, 2, 0).passed);
  EXPECT_FALSE(validate(nstream, f.x, 4099, 1, 2, 0).passed);
}

TEST(StreamStats, DropsWarmupAndOrders) {
  Stats s = time_stats({9.0, 1.0, 3.0, 2.0}, 1);
  EXPECT_EQ(s.best_s, 1.0);
  EXPECT_EQ(s.worst_s, 3.0);
  EXPECT_EQ(s.median_s, 2.0);
  EXPECT_DOUBLE_EQ(s.avg_s, 2.0);
  Stats one = time_stats({4.0}, 1);  // a single repetition is kept
  EXPECT_EQ(one.best_s, 4.0);
  EXPECT_DOUBLE_EQ(giga_per_s(24e9, 2.0), 12.0);
}
