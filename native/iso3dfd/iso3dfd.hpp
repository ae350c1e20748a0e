// The ISO3DFD engine: the isotropic acoustic stencil of seed 000 at any radius R from 1 to 8
// (space order 2R; the seed's is R = 8, its HALF_LENGTH), its blocked and vectorised kernel, a
// plain reference, initialisation and the field norms.
//
// Layout as in the seed: prev, next and vel are n1*n2*n3 floats each, x (n1) fastest; n1..n3
// include the halo of R points on each side. The interior [R, n-R) of every dimension is updated;
// the halo stays zero. One step: next = 2*prev - next + vel*lap(prev) in place, then prev <-> next.
#pragma once
#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/placement.hpp"

namespace bw::iso3dfd {

// The stencil's radius (half its space order): the seed's (its HALF_LENGTH) is the default and the
// largest; the vector row kernels are compiled for kKernelRadii (iso3dfd/rows_kernel.hpp): every
// radius from 1 to kMaxRadius, so no space order falls back to the generic variant's loops unless
// its rows are too short for whole vectors (radius_path).
inline constexpr int kSeedRadius = 8;
inline constexpr int kMaxRadius = 8;
inline constexpr std::array<int, 8> kKernelRadii{1, 2, 3, 4, 5, 6, 7, 8};
// The place of radius r in kKernelRadii, or -1 when the vector kernels are not compiled for it.
constexpr int kernel_radius_index(int r) {
  for (std::size_t i = 0; i < kKernelRadii.size(); ++i)
    if (kKernelRadii[i] == r) return static_cast<int>(i);
  return -1;
}
// The smallest dimension at radius r: the halo on each side and one interior point.
constexpr std::size_t min_dim(int r) { return 2 * static_cast<std::size_t>(r) + 1; }
// Largest dimension accepted: keeps every index product far from 64-bit overflow.
inline constexpr long kMaxDim = 1L << 20;

// A grid dimension from the command line (n1, n2 or n3): UsageError, naming it, when it is not a
// whole number from min_dim(radius) to kMaxDim.
std::size_t parse_dimension(const std::string& text, const char* name, int radius);
// --radius from the command line: UsageError when it is not a whole number from 1 to kMaxRadius.
int parse_radius(const std::string& text);
// --radius's help: the radii taken, the default and those the vector kernels are compiled for (kKernelRadii).
std::string radius_help();

// Accounting per interior point and step, kept beside the kernel (all reports derive from it).
//  flops: per distance k, 5 adds over the 6 neighbours, 1 multiply, 1 add into the sum (7 R), the
//  centre's multiply (1), and 2*prev - next + vel*lap (4): 7 R + 5, 61 at the seed's radius, as the
//  seed counts; bytes: prev, vel and next read once and next written once (no write-allocate: next
//  is read before it is written) when the blocking keeps the 2R+1-plane window of prev in cache,
//  at every radius.
constexpr int flops_per_point(int radius) { return 7 * radius + 5; }
inline constexpr int kBytesPerPoint = 16;

// Physical constants of the seed.
inline constexpr float kDxyz = 50.0f;
inline constexpr float kDt = 0.002f;
inline constexpr float kVelocity = 2250000.0f * kDt * kDt;  // v^2 dt^2

// c[0] is the centre coefficient (already counted for 3 dimensions); c[k] for distance k (zero
// beyond the radius); all scaled by 1/dxyz^2. The weights of the central difference of the second
// derivative of order 2R (Fornberg's), exact in double and then rounded; the seed's radius keeps
// the seed's own printed coefficients, so its output does not change.
using Coefficients = std::array<float, kMaxRadius + 1>;
Coefficients coefficients(int radius = kSeedRadius);
// The same weights unscaled, in double, one dimension: w[0] the centre, w[k] distance k.
std::array<double, kMaxRadius + 1> fd_weights(int radius);

// The whole allocation (halo included) and the stencil's radius, which is its halo on each side.
struct Grid {
  std::size_t n1 = 0, n2 = 0, n3 = 0;
  int radius = kSeedRadius;
  // Floats from one row's start to the next's (0: n1, rows packed): a padded pitch (row_pitch) starts
  // every row on a 64-byte line; the floats past n1 stay zero and are never computed.
  std::size_t p1 = 0;
  std::size_t pitch() const { return p1 ? p1 : n1; }
  // Floats from one plane's start to the next's (0: pitch() n2, planes packed): a padded plane
  // (plane_pitch) keeps planes off one another's cache sets; the floats past the last row stay zero.
  std::size_t p2 = 0;
  std::size_t plane() const { return p2 ? p2 : pitch() * n2; }
  // Floats each array holds before its first point (line_lead): 0, or as many as start the interior
  // of every row on a 64-byte line.
  std::size_t lead = 0;
  // Floats each array starts after the one before it within its buffer's first 4 KiB page
  // (array_offset): prev at its lead, next one offset and vel two offsets further (modulo the page),
  // so the same point of the three arrays lies at different addresses within a page.
  std::size_t offset = 0;
  // Floats before array k's first point (0: prev, 1: next, 2: vel): all in the buffer's first page,
  // which the first point's first touch places.
  std::size_t lead_of(int k) const { return lead + static_cast<std::size_t>(k) * offset % 1024; }
  std::size_t halo() const { return static_cast<std::size_t>(radius); }
  // Floats each array holds from its first point on, every row's and plane's padding included.
  std::size_t points() const { return plane() * n3; }
  std::size_t interior() const { return (n1 - 2 * halo()) * (n2 - 2 * halo()) * (n3 - 2 * halo()); }
  std::size_t index(std::size_t x, std::size_t y, std::size_t z) const { return z * plane() + y * pitch() + x; }
};

// The row pitch --row-pitch auto gives n1 floats: the smallest odd multiple of 16 floats (64-byte
// lines) not below n1. On a line, a row's vectors are whole lines in every row and plane, so no y
// or z neighbour's load straddles two lines (on the Zen 4 guest, one thread, radius 2 and 3 ran
// 1.2-1.4x faster with 272 floats a row than packed in 260 and 262); an odd count of lines keeps
// rows 4 KiB apart off one another's addresses (a pitch of 256 floats ran 0.69-0.87x of 264 at radius 4).
std::size_t padded_pitch(std::size_t n1);
// --row-pitch: auto (padded_pitch), packed (n1) or a number of floats not below n1; UsageError in one
// line otherwise.
std::size_t parse_row_pitch(const std::string& text, std::size_t n1);
// The lead a padded layout gives arrays of rows pitch floats apart at radius R: where the pitch is a
// whole number of 64-byte lines, the floats that put x = R, every row's first interior point, at a
// line's start (16 - R for R below 16), else 0. A row's interior is then whole vectors from its
// first point (256 points: 16 AVX-512 vectors, where x = 0 on a line cuts them into 15 whole and two
// masked, and a V-vector shape runs single vectors at the ends): on the Zen 4 guest, one thread,
// 128 x 64 x 64 in L3, step by step, 1.03-1.27x at radius 4 and 1.10-1.37x at radius 8; from memory
// (256^3) level within the host's noise.
std::size_t line_lead(std::size_t pitch, int radius);

// The plane pitch --plane-pitch auto gives rows of pitch floats, n2 of them: pitch n2 rounded up to
// an odd number of 64-byte lines. An odd count of lines puts the 2R + 1 planes a z window reads at
// one (x, y) in as many different sets of L1 and L2 (a multiple of 64 lines put all of them in one
// set of L1's 64); padded rows alone cannot, since n2 is even on most grids.
std::size_t padded_plane(std::size_t pitch, std::size_t n2);
// --plane-pitch: auto (padded_plane), packed (pitch n2) or a number of floats not below pitch n2;
// UsageError in one line otherwise.
std::size_t parse_plane_pitch(const std::string& text, std::size_t pitch, std::size_t n2);

// The offset --array-offset auto gives: a third of a 4 KiB page in whole 64-byte lines (336 floats,
// 1344 bytes), so that next starts a third and vel two thirds of a page after prev. Each buffer
// starts on a page (huge pages: 2 MiB), so without an offset the same point of prev, next and vel
// shares its address's low 21 bits: the three fall in one set of L1 and L2, and a store to next
// aliases the loads of prev and vel 4 KiB apart that follow it. On the Intel Emerald Rapids guest,
// 2 threads, alternated whole runs: 1.04x-1.25x offset 0 at radius 1-8 on 256^3 with its halo,
// whose rows end in a masked part vector; level on interiors of whole vectors. Measured on that
// CPU only (docs/guides/iso3dfd-layout.md; bench/iso3dfd_layouts.py --layouts auto,no-offset).
inline constexpr std::size_t kArrayOffset = 336;
// --array-offset: auto (kArrayOffset) or a number of floats, a multiple of 16 (whole lines, so that
// a vector aligned in one array is aligned in all), 0 to 1008 (within a page); UsageError in one
// line otherwise.
std::size_t parse_array_offset(const std::string& text);

struct Blocks {
  std::size_t b1 = 0, b2 = 0, b3 = 0;
};

// Planes along z the active row kernel computes together (its register shape, rows.hpp; a ring's
// chunk), whether it runs a block in two passes (a split shape, iso3dfd/rows_kernel.hpp) and
// whether the second pass marches along z with a ring of planes in registers.
// At radius: the grid's, whose default shape the kernel takes (rows.hpp's active_shape).
int register_planes(int radius);
bool register_split(int radius);
bool register_ring(int radius);

// Bytes of the window of prev a block of g must keep in the core's L2: within a block the kernel
// walks z planes (its register shape) at a time, and the 2 R + planes planes of prev
// around them (the block's x and y extents with their halo) are reused from plane to plane.
double window_bytes(const Grid& g, const Blocks& b, int planes);

enum class Schedule { Static, Dynamic };

// One cache block: [x0,x1) x [y0,y1) x [z0,z1).
struct Box {
  std::size_t x0, x1, y0, y1, z0, z1;
};

// Where blocks of b1 points cut the interior of a row along x: the first block's start, every
// cut, the last block's end.
std::vector<std::size_t> x_cuts(const Grid& g, std::size_t b1);

// The blocks of the interior in the seed's order (z outer, then y, then x); with to_edges the
// blocks on the border extend to the edge of the array, so the list covers every point (this is
// the decomposition the first-touch initialisation uses).
std::vector<Box> decompose(const Grid& g, const Blocks& b, bool to_edges = false);

// The same for the interior planes [z0, z1) only (to_edges extends z to the array's edge only
// where z0 or z1 is the interior's).
std::vector<Box> decompose_planes(const Grid& g, const Blocks& b, std::size_t z0, std::size_t z1, bool to_edges);

// The static schedule's split of the interior among threads: thread t owns the planes
// [s[t], s[t+1]) (threads + 1 bounds, as equal as whole planes allow). Each thread computes the
// blocks of its own slab, and the first-touch initialisation touches the same slab (halo planes
// included at either end), so a thread's part of every array is one contiguous range of memory.
std::vector<std::size_t> slabs(const Grid& g, int threads);

struct Fields {
  float* prev;
  float* next;
  float* vel;
};

// Bytes of the buffer holding array k of g (0: prev, 1: next, 2: vel), from its start to its last
// point (lead_of(k) floats before the first), and of the three together; the fields in three such
// buffers, each array at its lead_of.
std::size_t array_bytes(const Grid& g, int k);
std::size_t arrays_bytes(const Grid& g);
Fields fields_in(const bw::Buffer& prev, const bw::Buffer& next, const bw::Buffer& vel, const Grid& g);

// Zeroes prev and next, sets vel, then writes the seed's source (nested cubes of 1, 10, ... 1e4
// around (n1/4, n2/4, n3/2), clipped to the interior so the halo stays zero). serial: the master
// thread touches everything; otherwise each thread initialises the blocks the static schedule of
// the compute loop gives it (the seed's initialize_FT, by slabs: see slabs()).
// With huge pages, the page a slab boundary falls inside is advised to base pages first, or
// every page when a thread's slab is smaller than a huge page (common/placement.hpp); the return
// value says which was done (mode "serial" for serial).
bw::PageSplit initialise(const Fields& f, const Grid& g, const Blocks& b, bool serial, int threads);

// The seed's source alone (for tests and the reference).
void add_source(float* prev, const Grid& g);

// Advances steps time steps with the blocked, vectorised kernel on threads OpenMP threads; on
// return f.prev holds the latest wavefield. coeff lets tests perturb the kernel.
void run(Fields& f, const Grid& g, const Blocks& b, Schedule s, int threads, int steps, const Coefficients& c);

// The plain reference: unblocked, scalar loops, one thread. f.prev holds the latest wavefield.
void run_reference(Fields& f, const Grid& g, int steps, const Coefficients& c);

// Sets flush-to-zero and denormals-are-zero for the calling thread (as the seed's compiler does by
// default): the tail of the wave decays into denormal floats, which cost the FPU ~100x per
// operation. Both kernels call it; results differ from IEEE denormal arithmetic below 1.2e-38.
void flush_denormals();

// The instruction set of the optimised kernel's row kernel. At start-up it is the best one this
// binary carries and this CPU runs (avx512, avx2 or generic); select_isa("auto" or a name)
// changes it for the whole process and returns the name chosen, or throws std::invalid_argument
// with one line when the binary or the CPU lacks it.
std::string select_isa(const std::string& isa);
// config.isa_choice: the row kernel's variant, how it was chosen and on what figures.
nlohmann::json isa_choice_json();
std::string kernel_isa();
// How the chosen row kernel makes its x neighbours and register block, for the record.
std::string kernel_method();

// L2 norm, double accumulation.
double l2_norm(const float* a, std::size_t n);

struct Difference {
  double max_abs = 0;  // max |a - ref|
  double max_rel = 0;  // max |a - ref| / max |ref| (normwise, so points near zero do not dominate)
};
Difference compare(const float* a, const float* ref, std::size_t n);

}  // namespace bw::iso3dfd
