#include "iso3dfd/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/args.hpp"
#include "common/isa.hpp"
#include "common/errors.hpp"
#include "common/policies.hpp"
#include "iso3dfd/rows.hpp"
#include "iso3dfd/timemodel.hpp"
#include "iso3dfd/words.hpp"

namespace bw::iso3dfd {
namespace {

// A block dimension, or 0 for "auto" and "search" (chosen for this CPU at start-up from the model
// of its caches, with search also by a short measured search: iso3dfd/autoblocks.hpp).
std::size_t block(const std::string& text, const char* name, const char* dim_name, std::size_t dim) {
  if (text == "auto" || text == "search") return 0;
  long v = parse_int(text, name, 0, kMaxDim);
  if (v == 0) throw UsageError(std::string(name) + " must be at least 1 (blocks of zero points do not exist)");
  if (static_cast<std::size_t>(v) > dim)
    throw UsageError(std::string(name) + " " + text + " is larger than " + dim_name + " " + std::to_string(dim));
  return static_cast<std::size_t>(v);
}

}  // namespace

std::uint64_t Options::bytes_needed() const { return arrays_bytes(grid) + (verify ? 2 * array_bytes(grid, 0) : 0); }

bool names_a_shape(const std::string& shape) {
  return shape != "default" && shape != "measure" && shape != "compiled" && shape != "auto" && shape != "same";
}

bool parse_options(int argc, char** argv, Options& o) {
  CLI::App app{
      "bandwall-iso3dfd: the isotropic 3D finite-difference stencil of Intel's NUMA 3DFD article, 16th order in "
      "space by default, any even order from 2 to 16 with --radius"};
  std::vector<std::string> pos;
  std::string init = "first-touch", schedule = "static", placement = "first-touch", kernel = "optimised",
              pages = "huge", isa = "auto", time_block = "auto", radius = std::to_string(kSeedRadius);
  app.add_option("n1 n2 n3 nb_iter n1_block n2_block n3_block [affinity] [nb_threads]", pos,
                 "grid with halo, steps, cache blocks (each a number, auto: from this CPU's caches, or search: "
                 "refined by a short measured search), a binding policy (as --bind), threads (as --threads)")
      ->required();
  add_thread_options(app, o.thread_options, true);
  app.add_option("--radius", radius, radius_help());
  app.add_option("--row-pitch", o.row_pitch,
                 "floats from one row of the arrays to the next: auto (default: n1 rounded up to an odd number of "
                 "64-byte lines, and the arrays led by as many floats as start every row's interior on a line), packed "
                 "(n1) or a number of floats from n1 up (no lead: x = 0 at the arrays' start)");
  app.add_option("--plane-pitch", o.plane_pitch,
                 "floats from one plane of the arrays to the next: auto (default: its rows rounded up to an odd "
                 "number of 64-byte lines, so that the planes of a z window fall in different cache sets), packed "
                 "(row pitch x n2) or a number of floats from that up");
  app.add_option("--array-offset", o.array_offset,
                 "floats each array starts after the one before it (next after prev, vel after next): auto (default: "
                 "a third of a 4 KiB page in whole lines, so that the same point of the three arrays falls in "
                 "different cache sets) or a number of floats from 0 to 1008, a multiple of 16");
  app.add_option("--init", init, "who first touches the arrays: " + words_help(inits()));
  app.add_option("--schedule", schedule, "OpenMP schedule of the compute loop: " + words_help(schedules()));
  app.add_option("--placement", placement, placement_syntax());
  app.add_option("--pages", pages,
                 "huge (default: transparent huge pages asked for, which the z neighbours 16 planes apart need), "
                 "base (4 KiB pages) or system");
  app.add_flag("--verify", o.verify, "compare the result with the plain reference (exit 1 when it differs)");
  app.add_flag("--json", o.json, "print the JSON record instead of the article's output lines");
  app.add_option("--isa", isa, isa_syntax());
  app.add_option("--row-shape", o.shape,
                 "register shape of the row kernel: default (kept by bandwall tune, else the table of measured "
                 "choices for this CPU and radius, else a race on this run's data against the shapes the "
                 "table's rows chose, kept for later runs, else the variant's compiled default), measure (race now), "
                 "measure:A,B,... (race those shapes now, the first as the default), "
                 "compiled (the variant's compiled default), or a name of the chosen variant's shapes, planes x "
                 "vectors with -split (two passes) or -ring (the second pass marching along z), e.g. 4x2-split or "
                 "8x2-ring; a name the variant lacks is refused with the list");
  app.add_option("--swept-shape", o.swept_shape,
                 "register shape of the row kernel in the sweeps of temporal blocking (--time-block above 1), whose "
                 "tiles stay in cache: auto (default: kept by bandwall tune, else the table of measured choices for "
                 "this CPU and radius, else the step shape), same (the step shape) or a shape's name as for "
                 "--row-shape");
  std::string prefetch = "auto";
  app.add_option("--prefetch", prefetch,
                 "rows ahead the row kernel prefetches next, vel and prev's leading plane, and the cache they "
                 "fill: auto (default: kept by bandwall tune, else the table of measured choices for this CPU and "
                 "radius, else a race on this run's data against the settings the table's rows chose, kept for "
                 "later runs, else the compiled default: none at radius 1 and 2 and one row beyond, into L2), "
                 "measure (race now), compiled (the compiled default), none, or a number of rows 1-" +
                     std::to_string(kMaxPrefetchRows) +
                     " with :L1 or :L2 for the cache (L2 when left out), as 2:L1 (ring shapes prefetch along their "
                     "column instead; a split shape's first pass, at any number but none, also brings its second "
                     "pass's rows from memory)");
  app.add_option(
      "--time-block", time_block,
      "time steps per sweep while a tile stays in cache: a number (1: step by step), auto (default): the depth "
      "an earlier run's race on this machine chose beyond noise (kept in the cache folder), else the depth the "
      "model proposes when a short race on this run's data shows it faster beyond noise (a run too short to race "
      "it races a shallower one, and the model calibrated by that race says how deep), or measure: race now "
      "whatever the cache says");
  app.add_option("--sweep-team", o.sweep_team, "who sweeps what under temporal blocking: " + words_help(sweep_teams()));
  app.add_option("--tile-cache", o.tile_cache,
                 "which cache the tiles of temporal blocking are sized for: " + words_help(tile_caches()));
  app.add_option("--kernel", kernel, words_help(kernel_choices()));
  if (!parse_command_line(app, argc, argv)) return false;
  if (pos.size() < 7 || pos.size() > 9)
    throw UsageError("expected n1 n2 n3 nb_iter n1_block n2_block n3_block [affinity] [nb_threads], got " +
                     std::to_string(pos.size()) + " positional arguments");
  const int r = parse_radius(radius);
  o.grid =
      Grid{parse_dimension(pos[0], "n1", r), parse_dimension(pos[1], "n2", r), parse_dimension(pos[2], "n3", r), r};
  o.grid.p1 = parse_row_pitch(o.row_pitch, o.grid.n1);
  o.grid.p2 = parse_plane_pitch(o.plane_pitch, o.grid.pitch(), o.grid.n2);
  o.grid.lead = o.row_pitch == "auto" ? line_lead(o.grid.pitch(), r) : 0;
  o.grid.offset = parse_array_offset(o.array_offset);
  o.iterations = static_cast<int>(parse_int(pos[3], "nb_iter", 0, 1000000));
  o.blocks = Blocks{block(pos[4], "n1_block", "n1", o.grid.n1), block(pos[5], "n2_block", "n2", o.grid.n2),
                    block(pos[6], "n3_block", "n3", o.grid.n3)};
  o.blocks_requested = o.blocks;
  o.block_search = pos[4] == "search" || pos[5] == "search" || pos[6] == "search";
  ThreadOptions& t = o.thread_options;
  if (pos.size() >= 8) {
    if (app.count("--bind") || app.count("--cpus"))
      throw UsageError("the affinity is given twice: as the 8th argument ('" + pos[7] + "') and as --bind or --cpus");
    if (pos[7].empty()) throw UsageError("affinity '' is empty (use a binding policy: " + binding_syntax() + ")");
    t.bind = pos[7];
  }
  if (pos.size() == 9) {
    if (app.count("--threads"))
      throw UsageError("the thread count is given twice: as the 9th argument ('" + pos[8] + "') and as --threads");
    t.threads = std::to_string(parse_int(pos[8], "nb_threads", 1, 4096));
  }
  t.resolve();  // a bad list or policy is refused here, before anything is allocated
  o.affinity = t.cpus.empty() ? t.bind : "list";

  o.init = parse_word(inits(), init, "init");
  o.schedule =
      parse_word(schedules(), schedule, "schedule") == schedules()[0].name ? Schedule::Static : Schedule::Dynamic;
  o.placement = Placement::parse(placement);
  o.placement.pages = parse_pages(pages);
  o.serial_init = o.init != inits()[0].name || o.placement.serial_init();
  o.kernel = parse_word(kernel_choices(), kernel, "kernel") == kernel_choices()[0].name ? KernelChoice::Optimised
                                                                                        : KernelChoice::Reference;

  const TimeBlockRequest tb = parse_time_block(time_block);
  o.time_block = tb.depth;
  o.time_block_measure = tb.measure;
  if (o.kernel == KernelChoice::Reference && o.time_block > 1)
    throw UsageError("--time-block " + time_block + ": the reference kernel runs step by step (use --time-block 1)");

  o.sweep_team = parse_word(sweep_teams(), o.sweep_team, "--sweep-team");
  o.tile_cache = parse_word(tile_caches(), o.tile_cache, "--tile-cache");

  if (!find_row_variant(isa)) throw UsageError(row_variant_refusal(isa));
  o.isa = isa;
  // --row-shape measure:A,B,...: two shapes at least, each once; they name the variant as one shape does.
  const std::string row_shape = o.shape;
  if (row_shape.rfind("measure:", 0) == 0) {
    std::string list = row_shape.substr(8);
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      const std::string name = list.substr(at, comma - at);
      if (!names_a_shape(name) || name.empty())
        throw UsageError("--row-shape " + row_shape + ": '" + name + "' is not the name of a register shape");
      if (std::find(o.shape_candidates.begin(), o.shape_candidates.end(), name) != o.shape_candidates.end())
        throw UsageError("--row-shape " + row_shape + ": " + name + " is named twice");
      o.shape_candidates.push_back(name);
      at = comma + 1;
    }
    if (o.shape_candidates.size() < 2)
      throw UsageError("--row-shape " + row_shape + ": a race needs two shapes at least (measure:A,B)");
    o.shape = "measure";
  }
  // A shape belongs to one variant: with auto or measure, the widest this CPU runs that has every
  // shape named (no race, no cached choice: the shapes decide); a variant named must have them.
  const bool swept_named = o.swept_shape != "auto" && o.swept_shape != "same";
  const bool shape_named = names_a_shape(o.shape) || !o.shape_candidates.empty();
  if (shape_named || swept_named) {
    const std::string flag = shape_named ? "--row-shape " + row_shape : "--swept-shape " + o.swept_shape;
    if (o.kernel == KernelChoice::Reference) throw UsageError(flag + ": the reference kernel has no register shape");
    auto has_row_shape = [&](const RowVariant& c) {
      if (o.shape_candidates.empty()) return find_shape(c, o.shape, o.grid.radius) != nullptr;
      return std::all_of(o.shape_candidates.begin(), o.shape_candidates.end(),
                         [&](const std::string& n) { return find_shape(c, n, o.grid.radius) != nullptr; });
    };
    auto has = [&](const RowVariant& c) {
      return (!shape_named || has_row_shape(c)) && (!swept_named || find_shape(c, o.swept_shape, o.grid.radius));
    };
    const bool both = shape_named && swept_named;
    const std::string named = both ? "--row-shape " + row_shape + " and --swept-shape " + o.swept_shape : flag;
    const RowVariant* v = find_row_variant(isa);
    if (isa == "auto" || isa == "measure") {
      v = nullptr;
      for (const RowVariant* c : row_variants())
        if (find_row_variant(c->isa) && has(*c)) {
          v = c;
          break;
        }
      if (!v)
        throw UsageError(named +
                         (both ? " are not register shapes of one row kernel this CPU runs ("
                               : " is not a register shape of any row kernel this CPU runs (") +
                         std::string(find_row_variant("auto")->isa) + ": default, " +
                         shape_names(*find_row_variant("auto")) + ")");
      o.isa = v->isa;
      o.shape_why = "--isa " + isa + " with " + named + ": the " + v->isa +
                    " row kernel, the widest this CPU runs that has " + (both ? "both" : "that shape");
    } else if (!has(*v)) {
      throw UsageError(named + (both ? " are not both register shapes of the " : " is not a register shape of the ") +
                       v->isa + " row kernel (default, " + shape_names(*v) + ")");
    }
  }

  if ((o.shape == "measure" || o.shape == "compiled") && o.kernel == KernelChoice::Reference)
    throw UsageError("--row-shape " + o.shape + ": the reference kernel has no register shape");
  o.prefetch_request = prefetch == "auto" || prefetch == "measure" || prefetch == "compiled" ? prefetch : "given";
  if (o.prefetch_request == "given") {
    o.prefetch = parse_prefetch(prefetch);
    o.prefetch_given = prefetch;
    if (!o.prefetch)
      throw UsageError("--prefetch " + prefetch + ": expected auto, measure, compiled, none or a number of rows 0-" +
                       std::to_string(kMaxPrefetchRows) + ", optionally :L1 or :L2 (the cache they fill)");
  }
  if ((o.prefetch || o.prefetch_request != "auto") && o.kernel == KernelChoice::Reference)
    throw UsageError("--prefetch " + prefetch + ": the reference kernel does not prefetch");

  const char* fault = std::getenv("BANDWALL_ISO3DFD_FAULT");
  std::string f = fault ? fault : "";
  if (f != "" && f != "0" && f != "1") throw UsageError("BANDWALL_ISO3DFD_FAULT='" + f + "' must be 0 or 1");
  o.fault = f == "1";
  return true;
}

}  // namespace bw::iso3dfd
