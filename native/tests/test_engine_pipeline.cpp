// The pipelined kernels against the CPU-only chunk functions, bit for bit, over every engine that
// runs here: odd sizes and tails, unaligned arrays, queue depths 1-8, blocks of 4 KiB to 8 MiB, more
// helpers than compute threads and fewer.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/errors.hpp"
#include "engine/engine.hpp"
#include "engine/pipeline.hpp"
#include "stream/kernels.hpp"
#include "stream/runner.hpp"

using namespace bw;
using namespace bw::pipeline;

namespace {

// The helpers' CPU: the last one this process may use (another than the test's where there is one).
int helper_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  int last = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) last = c;
  return last;
}

struct Case {
  std::string engine, mode;
};

// Three arrays of random values starting `offset` elements past a 64-byte boundary (so the
// pipelined and the reference copy have the same alignment, which decides dot's head).
struct Data {
  Data(std::size_t n, std::size_t offset, unsigned seed) : len(n + offset + 512) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto& p : store) {
      p = static_cast<double*>(std::aligned_alloc(64, (len * sizeof(double) + 63) / 64 * 64));
      for (std::size_t i = 0; i < len; ++i) p[i] = u(g);
    }
    x = {store[0] + offset, store[1] + offset, store[2] + offset};
  }
  ~Data() {
    for (double* p : store) std::free(p);
  }
  std::size_t len;
  double* store[3];
  stream::Arrays x;
};

engine::Kind kind_of(const Case& c) { return c.mode == "copy" ? engine::Kind::Copy : engine::Kind::Fill; }

// Runs kernel k over [0, n) in `threads` chunks with the pipeline, and the CPU-only chunk function
// on a copy of the same data; every written element and every dot partial must be identical.
void check(const Case& c, const char* kernel, std::size_t n, std::size_t offset, int depth, std::size_t block_bytes,
           Strategy s, int threads, int helpers) {
  SCOPED_TRACE(c.engine + "/" + c.mode + " " + kernel + " n=" + std::to_string(n) + " offset=" +
               std::to_string(offset) + " depth=" + std::to_string(depth) + " block=" + std::to_string(block_bytes) +
               " threads=" + std::to_string(threads) + " helpers=" + std::to_string(helpers));
  const stream::Kernel& k = stream::find_kernel(kernel);
  Data piped(n, offset, 7), plain(n, offset, 7);
  Plan p{&k, block_bytes / sizeof(double), depth, s, true, kind_of(c)};
  const int per = static_cast<int>(engine_inputs(k, s).size());
  engine::Config cfg{std::vector<int>(static_cast<std::size_t>(helpers), helper_cpu()), threads * per, depth, c.mode};
  auto e = engine::make(c.engine, cfg);
  std::vector<Lane> lanes(static_cast<std::size_t>(threads));
  std::vector<double> got(static_cast<std::size_t>(threads)), want(static_cast<std::size_t>(threads));
  std::vector<std::thread> th;
  for (int t = 0; t < threads; ++t)
    th.emplace_back([&, t] {
      auto [b, end] = stream::chunk(n, t, threads);
      open_lane(lanes[static_cast<std::size_t>(t)], *e, p, t * per);
      for (int rep = 0; rep < 2; ++rep)  // queues are reused across repetitions
        got[static_cast<std::size_t>(t)] = run_chunk(p, piped.x, b, end, lanes[static_cast<std::size_t>(t)]);
    });
  for (auto& t : th) t.join();
  for (int t = 0; t < threads; ++t) {
    auto [b, end] = stream::chunk(n, t, threads);
    double w = k.nt(plain.x, b, end, stream::kScalar);
    if (k.writes) k.nt(plain.x, b, end, stream::kScalar);  // the same two repetitions
    want[static_cast<std::size_t>(t)] = w;
  }
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(std::memcmp(&got[t], &want[t], sizeof(double)), 0)
        << "dot partial of thread " << t << " got " << std::hexfloat << got[t] << " want " << want[t];
  for (int a = 0; a < 3; ++a)
    EXPECT_EQ(std::memcmp(piped.store[a], plain.store[a], piped.len * sizeof(double)), 0) << "array " << char('a' + a);
}

std::vector<Case> cases() {
  std::vector<Case> out = {{"none", "touch"}, {"memcpy", "copy"}, {"memcpy", "touch"}, {"dsa-model", "copy"}};
  if (engine::find("helper").probe().available) {
    out.push_back({"helper", "copy"});
    out.push_back({"helper", "touch"});
  }
  if (engine::find("dsa").probe().available) out.push_back({"dsa", "copy"});
  return out;
}

}  // namespace

class Pipeline : public ::testing::TestWithParam<Case> {};

TEST_P(Pipeline, BitIdenticalToTheCpuOnlyKernels) {
  for (const char* kernel : {"copy", "scale", "add", "triad", "dot"})
    for (Strategy s : {Strategy::All, Strategy::Split}) {
      check(GetParam(), kernel, 100003, 0, 4, 4096, s, 1, 1);
      check(GetParam(), kernel, 100003, 3, 2, 8192, s, 2, 1);
    }
}

TEST_P(Pipeline, QueueDepthsOneToEight) {
  for (int depth = 1; depth <= 8; ++depth) {
    check(GetParam(), "triad", 40000 + 17 * depth, 1, depth, 4096, Strategy::All, 1, 1);
    check(GetParam(), "dot", 40000 + 17 * depth, 5, depth, 4096, Strategy::Split, 1, 1);
  }
}

TEST_P(Pipeline, BlocksFromFourKibToEightMib) {
  for (std::size_t block : {4096ul, 65536ul, 1ul << 20, 8ul << 20}) {
    const std::size_t n = (8ul << 20) / 8 + 1001;  // a bit more than one 8 MiB block
    check(GetParam(), "scale", n, 1, 2, block, Strategy::All, 1, 1);
    check(GetParam(), "dot", n, 2, 2, block, Strategy::All, 1, 1);
  }
}

TEST_P(Pipeline, HelpersAndComputeThreadsInAnyRatio) {
  for (auto [threads, helpers] : {std::pair{2, 5}, std::pair{3, 1}, std::pair{1, 4}}) {
    check(GetParam(), "triad", 300007, 1, 3, 8192, Strategy::All, threads, helpers);
    check(GetParam(), "dot", 300007, 0, 3, 8192, Strategy::Split, threads, helpers);
  }
}

TEST_P(Pipeline, TinyArraysShorterThanTheHead) {
  // Every offset from a 64-byte boundary: the head differs at each vector width (run the suite under
  // each BANDWALL_MAX_ISA to see every variant's).
  for (std::size_t n : {0ul, 1ul, 3ul, 7ul, 9ul, 17ul, 513ul})
    for (std::size_t offset = 0; offset < 8; ++offset)
      for (const char* kernel : {"triad", "dot"}) check(GetParam(), kernel, n, offset, 4, 4096, Strategy::All, 1, 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, Pipeline, ::testing::ValuesIn(cases()), [](const auto& i) {
  return i.param.engine == "dsa-model" ? "dsa_model_" + i.param.mode : i.param.engine + "_" + i.param.mode;
});

TEST(EngineRegistry, EveryBackendOnceAndUnknownNamesRefused) {
  std::vector<std::string> names;
  for (const auto& b : engine::backends()) names.emplace_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dsa", "dsa-model", "helper", "memcpy", "none"}));
  try {
    engine::find("blitter");
    FAIL() << "unknown engine accepted";
  } catch (const UsageError& e) {
    // The test-only dsa-model is hidden: users are told the engines they can pick.
    EXPECT_NE(std::string(e.what()).find("known: dsa, helper, memcpy, none)"), std::string::npos) << e.what();
  }
}

TEST(EngineRegistry, UnavailableEngineSaysWhy) {
  const auto& b = engine::find("dsa");
  auto a = b.probe();
  if (a.available) GTEST_SKIP() << "this machine has a DSA work queue";
  EXPECT_FALSE(a.reason.empty());
  try {
    engine::make("dsa", {});
    FAIL() << "an unavailable engine was made";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "dsa: unavailable: " + a.reason);
  }
}

TEST(EngineRegistry, DsaCopiesOnlyAndNoneFillsOnly) {
  auto m = engine::make("dsa-model", {});
  EXPECT_TRUE(m->supports(engine::Kind::Copy));
  EXPECT_FALSE(m->supports(engine::Kind::Fill));
  auto z = engine::make("none", {});
  EXPECT_FALSE(z->supports(engine::Kind::Copy));
  EXPECT_TRUE(z->supports(engine::Kind::Fill));
}
