// The row kernels of the optimised ISO3DFD engine, one per instruction set, chosen at run time.
//
// Each variant lives in its own translation unit compiled with its own target flags
// (rows_avx512.cpp, rows_avx2.cpp; rows_generic.cpp at the build's baseline), so one binary
// carries them all whatever -march it was built for; the CPU this process runs on decides which
// may run (common/isa.hpp). Adding a variant is one file and one line in rows.cpp.
#pragma once
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/dispatch.hpp"
#include "common/machine.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

// One cache block of one time step: next = 2 prev - next + vel * lap(prev) on the box.
using BoxFn = void (*)(const Coefficients& c, const float* prev, float* next, const float* vel, const Grid& g,
                       const Box& b);

// What the row kernel issues per output vector (lanes points) for one register shape, derived
// from the description that shape's code follows (iso3dfd/rows_kernel.hpp's row_counts): loads
// (vector loads, coefficient broadcasts included), FMAs and multiplies, adds, and shuffles.
struct RowCounts {
  double loads = 0, fmas = 0, adds = 0, shuffles = 0;
};

// What the operation mix of a shape took on this core (iso3dfd/rows_mix.hpp): seconds per output
// vector, and per FMA of a stream of FMAs alone (the clock in the model's FMA pipes).
struct MixTiming {
  double vector_s = 0, fma_s = 0;
};
// Times a shape's mix at one radius for about `seconds` a timing, the best of reps.
using MixFn = MixTiming (*)(double seconds, int reps);

// A register block: planes along z x vectors along x computed together; x_loads: the x distances
// (bit K-1 for K) whose pairs come from unaligned loads instead of lane shifts. counts all zero:
// not counted (the generic variant, left to the compiler).
// boxes[i] and counts[i] are the shape's at radius kKernelRadii[i]; any_radius, when set, is one
// block function for every radius (the generic variant's loops).
struct RowShape {
  int planes = 1, vectors = 1;
  std::array<BoxFn, kKernelRadii.size()> boxes{};
  BoxFn any_radius = nullptr;
  unsigned x_loads = 0;
  std::array<RowCounts, kKernelRadii.size()> counts{};
  bool split = false;  // two passes per block (iso3dfd/rows_kernel.hpp)
  bool ring = false;   // the second pass marches along z with a ring of 2R+1 planes
  int rows = 1;        // a split shape's first pass: rows of a plane computed together (a y window)
  // mixes[i]: the operation mix of counts[i] as this core runs it (iso3dfd/rows_mix.hpp)
  std::array<MixFn, kKernelRadii.size()> mixes{};
  // The block function at radius r, or nullptr when this shape is not compiled for it.
  BoxFn box(int r) const {
    if (any_radius) return any_radius;
    const int i = kernel_radius_index(r);
    return i < 0 ? nullptr : boxes[static_cast<std::size_t>(i)];
  }
  // The operation mix at radius r (nullptr: not counted, or not compiled for it).
  MixFn mix(int r) const {
    const int i = kernel_radius_index(r);
    return i < 0 ? nullptr : mixes[static_cast<std::size_t>(i)];
  }
  // The counts at radius r (all zero: not counted, or not compiled for it).
  RowCounts counts_at(int r) const {
    const int i = kernel_radius_index(r);
    return i < 0 ? RowCounts{} : counts[static_cast<std::size_t>(i)];
  }
};

struct RowVariant {
  const char* isa;     // avx512, avx2 or generic (common/isa.hpp's names)
  int lanes;           // floats per vector
  const char* method;  // how the x neighbours and the register block are made, for the record
  // shapes[0] is the one run() uses; the others are for the tests. A plain array: a variant is
  // initialised at compile time (constinit), since no code of its file may run at start-up on a
  // CPU that lacks its instruction set.
  const RowShape* shapes;
  int nshapes;
  // The shape run() uses at each radius of kKernelRadii, as an index into shapes (all 0: the first
  // at every radius, as the generic variant's one shape): one pass of more vectors pays where the
  // 2R + 1 rows of a plane stay in L1 anyway, a split where they do not. A vector variant fills it
  // with default_shapes (iso3dfd/rows_kernel.hpp), one row per radius, checked at compile time.
  std::array<int, kKernelRadii.size()> default_at{};
  std::span<const RowShape> shape_list() const { return {shapes, static_cast<std::size_t>(nshapes)}; }
  // The shape run() uses at radius r unless another is selected (the first at any other radius).
  const RowShape& default_shape(int r) const {
    const int i = kernel_radius_index(r);
    return shapes[i < 0 ? 0 : default_at[static_cast<std::size_t>(i)]];
  }
};

// The in-core bound of a variant on this CPU, from its counts and the ports of this CPU's machine
// model at the variant's vector width (common/machine.hpp): cycles per output vector (the busiest
// of load ports, FMA pipes, add pipes and all FP pipes) and which of them it is. cycles_per_vector
// is 0 when there is no bound, and unavailable says why (no counts, or no model of this CPU).
struct IncoreBound {
  double cycles_per_vector = 0;
  std::string bound_by, unavailable;
  Ports ports;
};
// shape: whose counts (nullptr: the variant's first shape's); radius: the stencil's.
IncoreBound incore_bound(const RowVariant& v, const CpuId& cpu = cpuid(), const RowShape* shape = nullptr,
                         int radius = kSeedRadius);

// The operation mix of a shape at a radius as this core runs it (iso3dfd/rows_mix.hpp): seconds per
// output vector, and cycles per vector by the clock of this CPU's model's FMA pipes (0 with no
// model of this CPU; then unavailable says why). seconds_per_vector is 0 when the variant's
// operations are not counted (the generic variant; unavailable says so).
struct IncoreMix {
  double seconds_per_vector = 0, cycles_per_vector = 0;
  double clock_ghz = 0;  // the clock the FMAs alone ran at, by the model's FMA pipes
  std::string unavailable;
};
IncoreMix incore_mix(const RowVariant& v, const RowShape& shape, int radius, const CpuId& cpu = cpuid());

// The dispatch of the row kernels (common/dispatch.hpp): the variants built into this binary, best
// first (generic is always there), and the one active now.
Dispatch<RowVariant>& row_dispatch();
const std::vector<const RowVariant*>& row_variants();

// The block function run() uses on grid g: the active register shape's, or the generic variant's
// loops where the active variant is not compiled for g's radius or its rows are too short for whole
// vectors at that radius (radius_path says which).
BoxFn active_box(const Grid& g);
// How g's radius runs, for the record: "templated" (the active vector variant's kernel, compiled for
// this radius) or "generic" (the generic variant's loops: the active variant is the generic one, the
// vector kernels are not compiled for the radius (they are for kKernelRadii), or R (n1 + 1) is less
// than two vectors, where their whole-vector loads would reach outside the arrays).
std::string radius_path(const Grid& g);

// How many rows ahead the row kernel prefetches next, vel and prev's leading plane (0: none), at
// radius r unless selected otherwise: at radius 1 and 2 a vector issues few loads, and the three
// prefetches cost more load slots than they save (without them 1.25x at radius 1 with the grid in
// L2, level within noise with it in memory, Zen 4); at larger radii one row ahead gains about 50%
// on one core, two or four rows less (bench/results/2026-11-26-zen4.md). The table of measured
// choices overrides it per CPU and radius (Measurement::choose_prefetch).
constexpr int default_prefetch_rows(int r) { return r > 2 ? 1 : 0; }
constexpr int kMaxPrefetchRows = 8;

// The cache those prefetches fill: L1 (prefetcht0) or L2 (prefetcht1). L2 by default: the rows a
// row ahead (3 lines a vector) reach L1 when the kernel loads them, and meanwhile L1 keeps the y and
// z rows the kernel reads again; on AMD Zen 4 (256^3, two threads) step by step ran 1.11x at radius
// 3 and 1.24x at 2 with L2 (bench/results/2026-12-05-l2-prefetch-zen4.md). The table of measured
// choices sets it per CPU and radius with the distance (bench/iso3dfd_kernel_choices.py races both).
enum class PrefetchCache { L1, L2, Off };  // Off: the row kernel's own, for block functions that issue none
constexpr PrefetchCache kDefaultPrefetchCache = PrefetchCache::L2;

// A prefetch setting: rows ahead (0: none) and the cache. Its one written form, for --prefetch, the
// table of measured choices, kept choices and races: "none" or "0", "N" (N rows into the default
// cache) or "N:L1" / "N:L2" (either case); prefetch_name writes "0" or "N:L1" / "N:L2".
struct Prefetch {
  int rows = 0;
  PrefetchCache cache = kDefaultPrefetchCache;
  bool operator==(const Prefetch&) const = default;
};
// The setting text names, or nothing when it names none of those forms (or more than
// kMaxPrefetchRows rows).
std::optional<Prefetch> parse_prefetch(std::string_view text);
std::string prefetch_name(const Prefetch& p);
const char* cache_name(PrefetchCache c);
constexpr Prefetch default_prefetch(int r) { return {default_prefetch_rows(r), kDefaultPrefetchCache}; }

// What run() prefetches at radius r: the setting selected (select_prefetch), else the default.
Prefetch prefetch_setting(int r);
int prefetch_rows(int r);
// A setting selects it for every radius; nothing returns to each radius's default.
void select_prefetch(std::optional<Prefetch> p);

// A shape's name: planes x vectors, then -split or -ring (a split shape whose second pass is a
// ring), then -y and the rows its first pass computes together (more than one), then -x and the
// hexadecimal mask of the x distances loaded: 4x2-split, 8x2-ring-y4, 3x2-x81.
std::string shape_name(const RowShape& s);
// The names of a variant's shapes, its first (the default) first.
std::string shape_names(const RowVariant& v);
// The shape of v named name ("default": v's default at radius), or nullptr.
const RowShape* find_shape(const RowVariant& v, const std::string& name, int radius);
// The register shape run() uses on a grid of radius (the grid's: the one owner of the radius): the
// one select_shape chose, while its variant is the active one; otherwise the active variant's
// default at that radius.
const RowShape& active_shape(int radius);
// The register shape the sweeps of temporal blocking run (timeblock.cpp) on a grid of radius: the one
// select_swept_shape chose, while its variant is the active one; otherwise active_shape(radius). Tiles
// held in cache meet the row kernel's in-core speed, where another shape may be faster than the one
// step by step from memory runs best with (the table's swept_shapes, per CPU and radius).
const RowShape& swept_shape(int radius);
// The block function of the sweeps, as active_box for run().
BoxFn swept_box(const Grid& g);
// Chooses the active variant's shape named name for the sweeps ("same": the step shape,
// active_shape; "default": the variant's default at each radius); throws std::invalid_argument with
// one line when the active variant has none of that name.
void select_swept_shape(const std::string& name);
// Chooses the active variant's shape named name ("default": its default at each radius); throws
// std::invalid_argument with one line when the active variant has none of that name.
void select_shape(const std::string& name);

// The variant named isa if it is built in and this CPU can run it, otherwise nullptr; "auto"
// names the best such variant.
const RowVariant* find_row_variant(const std::string& isa);

// Why find_row_variant(isa) gave nullptr, in one line.
std::string row_variant_refusal(const std::string& isa);

// Hides a pointer's value from the optimiser, so that a pointer walked row by row stays one
// register instead of being rewritten as 16 base + k * stride addresses (which do not fit in the
// general registers and spill).
template <class T>
[[gnu::always_inline]] inline void opaque(T*& p) {
  asm("" : "+r"(p));
}

}  // namespace bw::iso3dfd
