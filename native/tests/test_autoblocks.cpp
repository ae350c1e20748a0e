#include <gtest/gtest.h>

#include "iso3dfd/autoblocks.hpp"

using namespace bw::iso3dfd;

namespace {
std::string small_why(const Grid& g) { return model_blocks(g, Blocks{}, 32 << 10, 512 << 10, 2, false).why; }
}  // namespace

// The model's y block from the L2 size: the largest multiple of 8 whose window of prev fits half
// of it, at least 24; given dimensions kept; whole rows along x.
TEST(AutoBlocks, ModelFollowsTheL2) {
  const Grid g{272, 272, 272};
  // 20 planes (a register shape of 4) x (y + 16) rows x 272 floats: y = 32 fits half of 2 MiB
  // (1020 KiB), 40 does not.
  CacheModel big = model_blocks(g, Blocks{}, 48 << 10, 2 << 20, 4, false);
  EXPECT_EQ(big.blocks.b1, 272u);
  EXPECT_EQ(big.blocks.b2, 32u);
  EXPECT_EQ(big.blocks.b3, 128u);
  EXPECT_LE(big.window_bytes, 1 << 20);
  EXPECT_GT(window_bytes(g, Blocks{272, 40, 128}, 4), 1 << 20);
  // Half of 1 MiB (Zen 5) and of 512 KiB (Zen 3) hold only y = 8; the model keeps 24, and says why.
  for (std::uint64_t l2 : {std::uint64_t{1} << 20, std::uint64_t{512} << 10}) {
    CacheModel small = model_blocks(g, Blocks{}, 32 << 10, l2, 2, false);
    EXPECT_EQ(small.blocks.b2, 24u) << l2;
    EXPECT_NE(small.why.find("raised to 24"), std::string::npos) << small.why;
    EXPECT_FALSE(small.y_window_in_l1);  // 2 planes x 17 rows of 272 floats: 36 KiB
  }
  // 1 plane: its 17 rows (18 KiB) and the 16 z rows and 2 rows of next and vel streamed between two
  // uses of a line (35 rows of 272 floats, 37 KiB) fit Zen 5's 48 KiB L1d, not a 32 KiB one.
  EXPECT_FALSE(model_blocks(g, Blocks{}, 32 << 10, 1 << 20, 1, false).y_window_in_l1);
  EXPECT_TRUE(model_blocks(g, Blocks{}, 48 << 10, 1 << 20, 1, false).y_window_in_l1);
  // A split shape walks one plane's 17 rows and a row of partial sums in its first pass (19 KiB).
  EXPECT_TRUE(model_blocks(g, Blocks{}, 32 << 10, 1 << 20, 4, true).y_window_in_l1);
  // Shorter rows, larger y blocks (4608 (y + 16) bytes <= 256 KiB up to y 40); clipped to the interior.
  EXPECT_EQ(model_blocks(Grid{64, 272, 272}, Blocks{}, 32 << 10, 512 << 10, 2, false).blocks.b2, 40u);
  EXPECT_EQ(model_blocks(Grid{64, 40, 272}, Blocks{}, 32 << 10, 512 << 10, 2, false).blocks.b2, 24u);
  // A split shape re-reads only the halo rows from L2 for a small y block: the model goes down to 8.
  EXPECT_EQ(model_blocks(g, Blocks{}, 32 << 10, 1 << 20, 4, true).blocks.b2, 8u);
  // Unknown L2: 24; given dimensions stay.
  EXPECT_EQ(model_blocks(g, Blocks{}, 0, 0, 2, false).blocks.b2, 24u);
  CacheModel given = model_blocks(g, Blocks{100, 0, 50}, 32 << 10, 1 << 20, 2, false);
  EXPECT_EQ(given.blocks.b1, 100u);
  // The window it names is the one it sizes: rows of the x block and its halos (100 + 16 floats).
  CacheModel narrow = model_blocks(g, Blocks{100, 0, 0}, 32 << 10, 512 << 10, 2, false);
  EXPECT_NE(narrow.why.find("rows of 116 floats"), std::string::npos) << narrow.why;
  EXPECT_NE(small_why(g).find("rows of 272 floats"), std::string::npos) << small_why(g);
  EXPECT_EQ(given.blocks.b3, 50u);
}

// The share of L2 the window may fill (a CPU's row of the table of measured choices may give its
// own): the y block follows it, and the model says it.
TEST(AutoBlocks, ShareOfL2FromTheTable) {
  const Grid g{272, 272, 272};
  // 20 planes x (y + 16) rows x 272 floats = 21760 (y + 16) bytes: 2 MiB x 0.5 holds y 32, x 0.75
  // y 56, x 0.25 y 8 (a split shape is not raised to 24).
  EXPECT_EQ(model_blocks(g, Blocks{}, 48 << 10, 2 << 20, 4, true).blocks.b2, 32u);
  EXPECT_EQ(model_blocks(g, Blocks{}, 48 << 10, 2 << 20, 4, true, false, 0.75).blocks.b2, 56u);
  EXPECT_EQ(model_blocks(g, Blocks{}, 48 << 10, 2 << 20, 4, true, false, 0.25).blocks.b2, 8u);
  const CacheModel m = model_blocks(g, Blocks{}, 48 << 10, 2 << 20, 4, true, false, 0.75);
  EXPECT_NE(m.why.find("fits 75% of the 2048 KiB L2"), std::string::npos) << m.why;
  EXPECT_LE(m.window_bytes, 0.75 * (2 << 20));
}

TEST(AutoBlocks, CandidatesAndSearchGrid) {
  const Grid g{272, 272, 272};
  EXPECT_EQ(y_candidates(g, 24), (std::vector<std::size_t>{16, 24, 32, 48}));
  EXPECT_EQ(y_candidates(g, 96), (std::vector<std::size_t>{16, 24, 32, 48, 96}));
  EXPECT_EQ(y_candidates(Grid{272, 37, 272}, 24), (std::vector<std::size_t>{16, 21}));  // interior 21
  const Grid s = search_grid(g, 48, 2);
  EXPECT_EQ(s.n1, 272u);                                    // the run's rows
  EXPECT_EQ(s.n2, 16u + 96u);                               // twice the largest candidate
  EXPECT_EQ(s.n3, 16u + 2u * 32u);                          // 32 planes per thread
  EXPECT_LE(search_grid(Grid{40, 30, 20}, 48, 8).n3, 20u);  // never larger than the run's grid
}

TEST(AutoBlocks, L1FillsCountTheRowsThatComeFromL2) {
  const Grid g{272, 272, 272};
  // 4 planes of whole rows: the y window (68 rows) cannot stay in 32 KiB, so the 16 y rows and the
  // centre come again for every point (68 bytes), the z window brings (2 x 4 + 14) / 4 rows (22
  // bytes), and next, vel and next's write-back 12.
  const L1Fills whole = l1_fills(g, Blocks{272, 24, 128}, 4, 32 << 10);
  EXPECT_FALSE(whole.y_window_in_l1);
  EXPECT_DOUBLE_EQ(whole.rows_needed, 68 + 22 + 8);
  EXPECT_DOUBLE_EQ(whole.y, 68.0);
  EXPECT_DOUBLE_EQ(whole.z, 22.0);
  EXPECT_DOUBLE_EQ(whole.update, 12.0);
  EXPECT_DOUBLE_EQ(whole.total(), 102.0);
  // Blocks of 64 floats along x: 98 rows of 256 bytes fit, and each row of prev comes once per y
  // block with its 16 halo rows: 4 x 40 / 24 bytes.
  const L1Fills narrow = l1_fills(g, Blocks{64, 24, 128}, 4, 32 << 10);
  EXPECT_TRUE(narrow.y_window_in_l1);
  EXPECT_DOUBLE_EQ(narrow.y, 4.0 * 40 / 24);
  EXPECT_DOUBLE_EQ(narrow.total(), 4.0 * 40 / 24 + 22 + 12);
  // Split in two passes, 4 planes of whole rows: the first pass's 17 rows and a row of partial sums
  // fit; the partial sums cost 12 bytes (written, read for ownership and written back, read again)
  // and the second pass reads the centre again.
  const L1Fills split = l1_fills(g, Blocks{272, 24, 128}, 4, 32 << 10, true);
  EXPECT_TRUE(split.y_window_in_l1);
  EXPECT_DOUBLE_EQ(split.rows_needed, 18);
  EXPECT_DOUBLE_EQ(split.total(), 4.0 * 40 / 24 + 22 + 16 + 12);
  EXPECT_LT(split.total(), whole.total());
  // A ring over chunks of 8 planes: the second pass brings each plane of prev once and the 16 about
  // the chunk (4 x 24 / 8 bytes), the centre among them, so its update costs next and vel alone.
  const L1Fills ring = l1_fills(g, Blocks{272, 24, 128}, 8, 32 << 10, true, true);
  EXPECT_TRUE(ring.y_window_in_l1);
  EXPECT_DOUBLE_EQ(ring.z, 4.0 * 24 / 8);
  EXPECT_DOUBLE_EQ(ring.update, 12.0);
  EXPECT_DOUBLE_EQ(ring.total(), 4.0 * 40 / 24 + 12 + 12 + 12);
  EXPECT_LT(ring.total(), split.total());
  // No L1d size known: the window is not assumed to fit.
  EXPECT_FALSE(l1_fills(g, Blocks{64, 24, 128}, 4, 0).y_window_in_l1);
}
