// The command line of bandwall-iso3dfd: the seed's positional arguments
//   n1 n2 n3 nb_iter n1_block n2_block n3_block [affinity] [nb_threads]
// followed by options. Every check happens here, before anything is allocated.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "iso3dfd/iso3dfd.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

enum class KernelChoice { Optimised, Reference };

struct Options {
  Grid grid;
  int iterations = 0;
  std::string row_pitch = "auto";     // --row-pitch as given (the grid's p1 holds the floats)
  std::string plane_pitch = "auto";   // --plane-pitch as given (the grid's p2 holds the floats)
  std::string array_offset = "auto";  // --array-offset as given (the grid's offset holds the floats)
  Blocks blocks;                      // 0 in a dimension: "auto", chosen at start-up (iso3dfd/autoblocks.hpp)
  Blocks blocks_requested;
  // Of the first thread's CPU (hwloc; 0: unknown), for the record's model of the L1 misses.
  std::uint64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  bool block_search = false;  // "search" in a block argument: time candidates before choosing
  // --threads/--cpus/--bind (common/harness.hpp); the seed's positional [affinity] [nb_threads]
  // fill --bind and --threads. affinity is what the record calls the binding asked for.
  ThreadOptions thread_options;
  std::string affinity = "compact";
  bool serial_init = false;  // --init serial (or --placement serial)
  std::string init = "first-touch";
  Schedule schedule = Schedule::Static;
  Placement placement;
  bool verify = false;
  bool json = false;
  KernelChoice kernel = KernelChoice::Optimised;
  // --time-block: time steps per sweep (iso3dfd/timeblock.hpp); 0: auto (the depth an earlier
  // run's race on this machine chose beyond noise, else the model's proposal if a short race on the
  // run's data shows it faster beyond noise, else 1); measure: auto, racing whatever is cached.
  int time_block = 0;
  bool time_block_measure = false;
  // --sweep-team: who sweeps what under temporal blocking (iso3dfd/timeblock.hpp): slabs (one a
  // thread), shared (the team on one wavefront) or auto (the model's choice, on one NUMA node).
  std::string sweep_team = "auto";
  // --tile-cache: which cache the sweeps' tiles are sized for (iso3dfd/timemodel.hpp's TileCache):
  // auto (the cache this CPU's table entry on sweeps names, else the model's), model, L2 or L3.
  std::string tile_cache = "auto";
  std::string isa = "auto";  // --isa: the row kernel's instruction set (checked against this CPU)
  // --row-shape: default (bandwall's choice: kept by bandwall tune, else the table of measured
  // choices' row for this CPU, else a race kept on this machine (common/knob_race.hpp), else the
  // variant's compiled default), measure (race now), compiled (the variant's compiled default at the
  // radius) or the name of a register shape (rows.hpp's shape_name), checked against the variant chosen
  std::string shape = "default";
  // --row-shape measure:A,B,...: the shapes raced (shape is then "measure"), the first the race's
  // default; empty: the variant's default and the shapes the table's rows chose.
  std::vector<std::string> shape_candidates;
  std::string shape_why;  // why the variant was chosen for the shape (--isa auto or measure), or empty
  // How the shape that ran was chosen: "given" (--row-shape), "tuned" (kept by bandwall tune on this
  // machine), "table" (the table of measured choices' row for this CPU, radius and variant), "raced"
  // (this run's race), "kept" (an earlier run's race on this machine) or "default" (the variant's
  // default at the radius), and whence; shape_race: the race's record (null: none considered).
  std::string shape_how = "default";
  std::string shape_from;
  nlohmann::json shape_race;
  // --swept-shape: the register shape the sweeps of temporal blocking run: auto (kept by bandwall
  // tune, else the table of measured choices' swept_shapes for this CPU, radius and variant, else the
  // step shape), same (the step shape) or a shape's name; swept_shape_how and swept_shape_from say
  // which, as for the shape.
  std::string swept_shape = "auto";
  std::string swept_shape_how = "same";
  std::string swept_shape_from;
  // --prefetch: the rows ahead the row kernel prefetches and the cache they fill (rows.hpp's
  // Prefetch), or nothing with prefetch_request auto (the one bandwall tune kept, else the table of
  // measured choices' for this CPU and radius, else a race kept on this machine, else rows.hpp's
  // default), measure (race now) or compiled (rows.hpp's default); prefetch_how, prefetch_from and
  // prefetch_race say which, as for the shape; prefetch_given: the text given.
  std::optional<Prefetch> prefetch;
  std::string prefetch_given;
  std::string prefetch_request = "auto";
  std::string prefetch_how = "default";
  std::string prefetch_from;
  nlohmann::json prefetch_race;
  bool fault = false;  // BANDWALL_ISO3DFD_FAULT=1: perturb the optimised kernel (tests of --verify)

  // Bytes the run allocates: prev, next and vel, plus the reference's prev and next with --verify.
  std::uint64_t bytes_needed() const;
};

// Whether --row-shape (or --swept-shape) names a register shape rather than a way to choose one.
bool names_a_shape(const std::string& shape);

// Parses argv; throws UsageError with one line for any bad input. Returns false when help was
// printed (exit 0).
bool parse_options(int argc, char** argv, Options& out);

}  // namespace bw::iso3dfd
