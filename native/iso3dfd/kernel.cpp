// The optimised kernel: OpenMP over cache blocks (static or dynamic), each block handed to the
// row kernel of the instruction set chosen at start-up (rows.hpp: AVX-512, AVX2 + FMA, or the
// compiler-vectorised loops at the build's baseline).
#include <omp.h>
#include <xmmintrin.h>

#include <charconv>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {
namespace {

const RowVariant* active() { return &row_dispatch().active(); }

// The shape --row-shape named and the variant it belongs to (nullptr: each variant's first),
// resolved once by select_shape: run() asks for it on every call.
struct Selected {
  const RowVariant* variant = nullptr;
  const RowShape* shape = nullptr;
};
Selected& selected() {
  static Selected s;
  return s;
}
// The shape the sweeps of temporal blocking run (select_swept_shape; nullptr: the step shape).
Selected& selected_swept() {
  static Selected s;
  return s;
}

}  // namespace

const RowShape* find_shape(const RowVariant& v, const std::string& name, int radius) {
  if (name == "default") return &v.default_shape(radius);
  for (const RowShape& s : v.shape_list())
    if (shape_name(s) == name) return &s;
  return nullptr;
}

std::string select_isa(const std::string& isa) {
  const RowVariant* v = row_dispatch().find(isa);
  if (!v) throw std::invalid_argument(row_dispatch().refusal(isa));
  return row_dispatch().select(isa).isa;
}

nlohmann::json isa_choice_json() { return row_dispatch().choice_json(); }

std::string kernel_isa() { return active()->isa; }

std::string shape_name(const RowShape& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%dx%d%s", s.planes, s.vectors, s.ring ? "-ring" : s.split ? "-split" : "");
  std::string name = buf;
  if (s.rows > 1) name += "-y" + std::to_string(s.rows);
  if (s.x_loads) {
    std::snprintf(buf, sizeof buf, "-x%x", s.x_loads);
    name += buf;
  }
  return name;
}

std::string shape_names(const RowVariant& v) {
  std::string names;
  for (const RowShape& s : v.shape_list()) names += (names.empty() ? "" : ", ") + shape_name(s);
  return names;
}

namespace {

const RowShape& generic_shape() { return row_variants().back()->shapes[0]; }

// Whether a vector kernel's whole-vector loads stay inside the arrays of g: they start on the vector
// boundary at or before a row's first point, reach one vector beyond either end of the row's
// vectors, and R planes and rows about it, unmasked (only the stores and next and vel are masked).
// The first such load lies R (n1 + 1) - 2L + 1 floats or more from the array's start (the last as
// far from its end): inside when R (n1 + 1) >= 2L. Tiny rows at a small radius are not.
bool vectors_fit(const Grid& g, int lanes) {
  return static_cast<std::size_t>(g.radius) * (g.n1 + 1) >= 2 * static_cast<std::size_t>(lanes);
}

}  // namespace

const RowShape& active_shape(int radius) {
  const Selected& s = selected();
  const RowShape& shape = s.variant == active() && s.shape ? *s.shape : active()->default_shape(radius);
  // at a radius the vector kernels are not compiled for, the generic loops run: their shape is the one
  // the models and the record describe
  return shape.box(radius) ? shape : generic_shape();
}

void select_shape(const std::string& name) {
  const RowVariant& v = *active();
  if (name == "default") {  // each radius's default (active_shape)
    selected() = {};
    return;
  }
  const RowShape* s = find_shape(v, name, kSeedRadius);  // a name is the same shape at every radius
  if (!s)
    throw std::invalid_argument("--row-shape " + name + " is not a register shape of the " + v.isa +
                                " row kernel (default, " + shape_names(v) + ")");
  selected() = {&v, s};
}

const RowShape& swept_shape(int radius) {
  const Selected& s = selected_swept();
  if (s.variant != active() || !s.shape || !s.shape->box(radius)) return active_shape(radius);
  return *s.shape;
}

void select_swept_shape(const std::string& name) {
  const RowVariant& v = *active();
  if (name == "same") {
    selected_swept() = {};
    return;
  }
  const RowShape* s = find_shape(v, name, kSeedRadius);
  if (!s)
    throw std::invalid_argument("--swept-shape " + name + " is not a register shape of the " + v.isa +
                                " row kernel (same, default, " + shape_names(v) + ")");
  selected_swept() = {&v, s};
}

namespace {
std::optional<Prefetch>& selected_prefetch() {
  static std::optional<Prefetch> p;
  return p;
}
}  // namespace

std::optional<Prefetch> parse_prefetch(std::string_view text) {
  if (text == "none") return Prefetch{0};
  const std::size_t colon = text.find(':');
  const std::string_view rows = text.substr(0, colon);
  int n = -1;
  const auto [end, err] = std::from_chars(rows.data(), rows.data() + rows.size(), n);
  if (err != std::errc() || end != rows.data() + rows.size() || n < 0 || n > kMaxPrefetchRows) return std::nullopt;
  Prefetch p{n};
  if (colon == std::string_view::npos) return p;
  const std::string_view cache = text.substr(colon + 1);
  if (cache == "L1" || cache == "l1")
    p.cache = PrefetchCache::L1;
  else if (cache == "L2" || cache == "l2")
    p.cache = PrefetchCache::L2;
  else
    return std::nullopt;
  return p;
}

const char* cache_name(PrefetchCache c) {
  return c == PrefetchCache::L1 ? "L1" : c == PrefetchCache::L2 ? "L2" : "none";
}

std::string prefetch_name(const Prefetch& p) {
  return p.rows == 0 ? "0" : std::to_string(p.rows) + ":" + cache_name(p.cache);
}

Prefetch prefetch_setting(int r) { return selected_prefetch().value_or(default_prefetch(r)); }

int prefetch_rows(int r) { return prefetch_setting(r).rows; }

void select_prefetch(std::optional<Prefetch> p) {
  if (p && (p->rows < 0 || p->rows > kMaxPrefetchRows))
    throw std::invalid_argument("--prefetch " + std::to_string(p->rows) + ": at most " +
                                std::to_string(kMaxPrefetchRows) + " rows ahead");
  selected_prefetch() = p;
}

int register_planes(int radius) { return active_shape(radius).planes; }

bool register_split(int radius) { return active_shape(radius).split; }

bool register_ring(int radius) { return active_shape(radius).ring; }

std::string kernel_method() { return active()->method; }

BoxFn active_box(const Grid& g) {
  return radius_path(g) == "templated" ? active_shape(g.radius).box(g.radius) : generic_shape().box(g.radius);
}

BoxFn swept_box(const Grid& g) {
  return radius_path(g) == "templated" ? swept_shape(g.radius).box(g.radius) : generic_shape().box(g.radius);
}

std::string radius_path(const Grid& g) {
  const RowShape& s = active_shape(g.radius);
  return !s.any_radius && s.box(g.radius) && vectors_fit(g, active()->lanes) ? "templated" : "generic";
}

void flush_denormals() { _mm_setcsr(_mm_getcsr() | 0x8040); }  // FTZ | DAZ

void run(Fields& f, const Grid& g, const Blocks& b, Schedule s, int threads, int steps, const Coefficients& c) {
  const BoxFn box = active_box(g);
  // static: each thread the blocks of its own slab of planes (the part of the arrays its
  // first-touch initialisation placed); dynamic: every block to whichever thread is free.
  std::vector<std::vector<Box>> mine;
  const auto all = s == Schedule::Dynamic ? decompose(g, b) : std::vector<Box>{};
  const long nboxes = static_cast<long>(all.size());
#pragma omp parallel num_threads(threads)
  {
    if (s == Schedule::Static) {
#pragma omp single
      {  // by the team's real size, which OMP_THREAD_LIMIT may make smaller than threads
        const auto z = slabs(g, omp_get_num_threads());
        for (std::size_t t = 0; t + 1 < z.size(); ++t) mine.push_back(decompose_planes(g, b, z[t], z[t + 1], false));
      }
    }
    flush_denormals();
    const float* vel = f.vel;
    float* prev = f.prev;
    float* next = f.next;
    const std::size_t me = static_cast<std::size_t>(omp_get_thread_num());
    for (int t = 0; t < steps; ++t) {
      if (s == Schedule::Static) {
        if (me < mine.size())
          for (const Box& bx : mine[me]) box(c, prev, next, vel, g, bx);
#pragma omp barrier
      } else {
#pragma omp for schedule(dynamic, 1)
        for (long i = 0; i < nboxes; ++i) box(c, prev, next, vel, g, all[static_cast<std::size_t>(i)]);
      }
      std::swap(prev, next);
    }
  }
  if (steps % 2) std::swap(f.prev, f.next);
}

}  // namespace bw::iso3dfd
