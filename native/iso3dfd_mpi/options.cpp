#include "iso3dfd_mpi/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/policies.hpp"
#include "iso3dfd/timemodel.hpp"
#include "mpi/words.hpp"

namespace bw::iso3dfd::mpi {

namespace {

std::size_t block(const std::string& text, const char* name) {
  long v = parse_int(text, name, 0, kMaxDim);
  if (v == 0) throw UsageError(std::string(name) + " must be at least 1 (blocks of zero points do not exist)");
  return static_cast<std::size_t>(v);
}

const char* kAxis[3] = {"x", "y", "z"};

std::array<std::size_t, 3> interior(const Grid& g) {
  const std::size_t h = g.halo();
  return {g.n1 - 2 * h, g.n2 - 2 * h, g.n3 - 2 * h};
}

// Why dims cannot cut the global grid for sweeps of `depth` steps ("" when they can).
std::string refusal(const Grid& global, const std::array<int, 3>& dims, int depth) {
  const auto n = interior(global);
  const std::size_t halo = global.halo() * static_cast<std::size_t>(depth);
  for (int d = 0; d < 3; ++d) {
    if (dims[d] == 1) continue;
    const std::size_t least = n[d] / static_cast<std::size_t>(dims[d]);
    if (least < halo)
      return std::to_string(dims[d]) + " ranks along " + kAxis[d] + " leave a rank " + std::to_string(least) +
             " interior points there, fewer than the halo of " + std::to_string(halo) + " its neighbours need" +
             (depth > 1
                  ? " for sweeps of " + std::to_string(depth) + " steps (" + std::to_string(global.radius) + " a step)"
                  : "") +
             " (use fewer ranks along " + kAxis[d] + (depth > 1 ? ", a shallower --time-block" : "") +
             " or a larger grid)";
  }
  return "";
}

double halo_bytes_of(const Grid& global, const std::array<int, 3>& dims) {
  const auto n = interior(global);
  double e[3];
  for (int d = 0; d < 3; ++d) e[d] = std::ceil(static_cast<double>(n[d]) / dims[d]);
  double bytes = 0;
  for (int d = 0; d < 3; ++d)
    if (dims[d] > 1) bytes += 2.0 * global.radius * e[(d + 1) % 3] * e[(d + 2) % 3] * sizeof(float);
  return bytes;
}

std::array<int, 3> parse_dims(const std::string& text, int ranks) {
  std::array<int, 3> d{};
  std::size_t start = 0;
  for (int k = 0; k < 3; ++k) {
    const std::size_t x = text.find('x', start);
    if ((k < 2) != (x != std::string::npos))
      throw UsageError("--dims '" + text + "' is not three whole numbers like 2x2x2 (or auto)");
    d[k] = static_cast<int>(parse_int(text.substr(start, k < 2 ? x - start : std::string::npos), "--dims", 1, 4096));
    start = x + 1;
  }
  if (d[0] * d[1] * d[2] != ranks)
    throw UsageError("--dims " + text + " makes " + std::to_string(d[0] * d[1] * d[2]) + " ranks, but " +
                     std::to_string(ranks) + " run");
  return d;
}

// The global grid and the cuts of each dimension, or why the shape cannot cut it.
void decompose(Options& o, const std::string& dims_text) {
  const std::size_t h = o.grid.halo();
  if (dims_text.empty()) {
    o.dims = {1, 1, o.ranks};
  } else if (dims_text == "auto") {
    o.dims_how = "auto";
  } else {
    o.dims = parse_dims(dims_text, o.ranks);
    o.dims_how = "given";
  }
  if (o.scaling == Scaling::Weak) {
    // every rank's extents are the given grid's whatever the shape: the fewest faces, z-slabs
    if (o.dims_how == "auto") o.dims = {1, 1, o.ranks};
    const auto n = interior(o.grid);
    o.global =
        Grid{n[0] * static_cast<std::size_t>(o.dims[0]) + 2 * h, n[1] * static_cast<std::size_t>(o.dims[1]) + 2 * h,
             n[2] * static_cast<std::size_t>(o.dims[2]) + 2 * h, o.grid.radius};
  } else {
    o.global = o.grid;
    if (o.dims_how == "auto") {
      o.dims = least_halo_dims(o.global, o.ranks, o.time_block);
      if (o.dims[0] == 0)
        throw UsageError(std::to_string(o.ranks) + " ranks cannot share grid " + std::to_string(o.grid.n1) + "x" +
                         std::to_string(o.grid.n2) + "x" + std::to_string(o.grid.n3) +
                         " in any shape that leaves every rank the halo of " +
                         std::to_string(o.grid.radius * o.time_block) + " points along each dimension it cuts");
    }
  }
  const std::string why = refusal(o.global, o.dims, o.time_block);
  if (!why.empty()) throw UsageError(why);
  const auto n = interior(o.global);
  for (int d = 0; d < 3; ++d) o.cuts[d] = cut(n[d], o.dims[d], o.global.radius);
}

}  // namespace

std::vector<std::size_t> cut(std::size_t extent, int p, int radius) {
  const std::size_t parts = static_cast<std::size_t>(std::max(p, 1));
  std::vector<std::size_t> c(parts + 1);
  for (std::size_t i = 0; i <= parts; ++i) c[i] = static_cast<std::size_t>(radius) + extent * i / parts;
  return c;
}

double halo_bytes(const Grid& global, const std::array<int, 3>& dims) { return halo_bytes_of(global, dims); }

std::vector<std::array<int, 3>> shapes_by_halo(const Grid& global, int ranks, int depth) {
  std::vector<std::array<int, 3>> found;
  // z outermost and descending, so that among equal halos the first found has the most ranks along z
  for (int pz = ranks; pz >= 1; --pz)
    for (int py = ranks / pz; py >= 1; --py) {
      if (ranks % (pz * py)) continue;
      const std::array<int, 3> d{ranks / (pz * py), py, pz};
      if (refusal(global, d, depth).empty()) found.push_back(d);
    }
  std::stable_sort(found.begin(), found.end(),
                   [&](const auto& a, const auto& b) { return halo_bytes_of(global, a) < halo_bytes_of(global, b); });
  return found;
}

json plan_json(const Options& o) {
  json shapes = json::array();
  if (o.scaling == Scaling::Strong)
    for (const auto& d : shapes_by_halo(o.global, o.ranks, o.time_block))
      shapes.push_back({{"dims", d}, {"halo_bytes", halo_bytes_of(o.global, d)}});
  return {{"ranks", o.ranks},
          {"dims", o.dims},
          {"dims_how", o.dims_how},
          {"global", {o.global.n1, o.global.n2, o.global.n3}},
          {"radius", o.global.radius},
          {"depth", o.time_block},
          {"halo_bytes", halo_bytes_of(o.global, o.dims)},
          {"shapes", shapes}};
}

bool wants_plan(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--plan" || a.rfind("--plan=", 0) == 0) return true;
  }
  return false;
}

std::array<int, 3> least_halo_dims(const Grid& global, int ranks, int depth) {
  const auto found = shapes_by_halo(global, ranks, depth);
  return found.empty() ? std::array<int, 3>{0, 0, 0} : found.front();
}

bool parse_options(int argc, char** argv, int ranks, Options& o) {
  CLI::App app{
      "bandwall-iso3dfd-mpi: ISO3DFD (Intel's NUMA 3DFD article) decomposed over a 3-D grid of MPI ranks "
      "(z-slabs by default), MPI+OpenMP, halo exchange of R layers (the stencil's radius) on every shared face "
      "overlapped with the interior update; prints one JSON record from rank 0"};
  std::vector<std::string> pos;
  std::string scaling = "strong", pages = "huge", radius = std::to_string(kSeedRadius);
  app.add_option("n1 n2 n3 nb_iter n1_block n2_block n3_block [nb_threads]", pos,
                 "grid with halo (strong: the whole grid; weak: one rank's part), steps, cache blocks, threads "
                 "per rank")
      ->required();
  app.add_option("--bind", o.bind,
                 "the CPUs of each rank: " + words_help(bw::mpi::rank_bindings()) + "; or a thread binding (" +
                     binding_syntax() + ") whose order of the CPUs the node's ranks divide in contiguous parts")
      ->capture_default_str();
  app.add_option("--cpus", o.cpus,
                 std::string("the CPUs of the node's ranks, divided in contiguous parts in rank order (wins over "
                             "--bind): ") +
                     cpus_help());
  app.add_option("--scaling", scaling, words_help(bw::mpi::scalings()))->capture_default_str();
  app.add_option("--pages", pages, "page size asked for: " + words_help(page_kinds()))->capture_default_str();
  app.add_option("--radius", radius, radius_help() + "; over ranks also the layers exchanged a step");
  app.add_flag("--verify", o.verify,
               "gather the wavefield on rank 0 and compare it with one process running the same grid (exit 1 "
               "when it differs)");
  std::string time_block = "1";
  app.add_option(
      "--time-block", time_block,
      "time steps per sweep: a number (1: step by step, the R-layer halo exchanged every step and overlapped with "
      "the inner update; N: halos R N deep exchanged once a sweep, each rank sweeping its part and N - 1 steps of "
      "its halo again), or auto: the depth the time-block model proposes for a rank's part (the shallowest over "
      "ranks, at most what the parts' halos and three quarters of the steps allow), run only when a race against "
      "single steps on the run's data, every round timed by the slowest rank, shows it faster beyond noise "
      "(measure: the same; nothing is kept over ranks). The default is 1, not auto as in one process: auto "
      "gives every rank halos as deep as the depth it races for the whole run, and no race is kept between runs");
  std::string dims;
  app.add_option("--dims", dims,
                 "ranks along x, y and z (PxQxR, their product the rank count), or auto: the shape of least halo "
                 "bytes a rank; default 1x1xN (z-slabs)");
  bool no_overlap = false;
  app.add_flag("--no-overlap", no_overlap, "exchange the halo after the whole update instead of during it");
  std::string plan;
  app.add_option("--plan", plan,
                 "print how N ranks would share the grid (JSON: the shape, its halo bytes a rank, every shape "
                 "that holds the halo, least halo bytes first) and exit, without MPI; exit 2 with the reason when "
                 "no shape does");
  if (!parse_command_line(app, argc, argv)) return false;
  if (!plan.empty()) ranks = o.plan = static_cast<int>(parse_int(plan, "--plan", 1, 1 << 20));
  if (pos.size() < 7 || pos.size() > 8)
    throw UsageError("expected n1 n2 n3 nb_iter n1_block n2_block n3_block [nb_threads], got " +
                     std::to_string(pos.size()) + " positional arguments");
  o.time_block_requested = time_block;
  if (const TimeBlockRequest tb = parse_time_block(time_block); tb.automatic()) {
    o.time_block = 1;  // how: "default"
  } else {
    o.time_block = tb.depth;
    if (app.count("--time-block")) o.time_block_how = "user";
  }
  o.ranks = ranks;
  const int r = parse_radius(radius);
  o.grid =
      Grid{parse_dimension(pos[0], "n1", r), parse_dimension(pos[1], "n2", r), parse_dimension(pos[2], "n3", r), r};
  o.iterations = static_cast<int>(parse_int(pos[3], "nb_iter", 0, 1000000));
  o.blocks = Blocks{block(pos[4], "n1_block"), block(pos[5], "n2_block"), block(pos[6], "n3_block")};
  if (pos.size() == 8) o.threads = static_cast<int>(parse_int(pos[7], "nb_threads", 1, 4096));
  o.scaling = parse_word(bw::mpi::scalings(), scaling, "scaling") == bw::mpi::scalings()[0].name ? Scaling::Strong
                                                                                                 : Scaling::Weak;
  o.placement = Placement::parse("first-touch");
  o.placement.pages = parse_pages(pages);
  // a sweep of several steps needs the whole deep halo before it starts: nothing to overlap
  o.overlap = !no_overlap && o.time_block == 1;
  if (app.count("--dims") && dims.empty()) throw UsageError("--dims is empty (use PxQxR or auto)");
  decompose(o, dims);
  return true;
}

}  // namespace bw::iso3dfd::mpi
