// The ISO3DFD stencil as a measurement of the driver (common/driver.hpp): prev, next and vel under a
// placement, first-touch (or serial) initialisation by the static schedule's slabs, one time step
// as the step (the article's nb_iter steps are the repetitions), the self-check of the last step and
// --verify's comparison with the plain reference as the validation. The cache blocks follow the row
// kernel's variant: the model proposes them for the variant that runs (iso3dfd/autoblocks.hpp).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/driver.hpp"
#include "common/llc_probe.hpp"
#include "iso3dfd/autoblocks.hpp"
#include "iso3dfd/caches.hpp"
#include "iso3dfd/options.hpp"
#include "iso3dfd/output.hpp"
#include "iso3dfd/selfcheck.hpp"
#include "iso3dfd/timeblock.hpp"
#include "iso3dfd/timemodel.hpp"

namespace bw::iso3dfd {

// What the cache file of settled races says of itself (common/choice_cache.hpp).
inline constexpr const char* kTimeBlocksAbout =
    "Time steps per sweep of bandwall iso3dfd --time-block auto that a race on this machine settled beyond noise, "
    "per grid, threads, kernel, blocks and team (docs: guides/iso3dfd). Delete this file, or run with "
    "--time-block measure, to race again.";

driver::Facts facts();

// The prefetch setting a "prefetch" field of the table of measured choices or of a kept choice
// names (a number of rows, or the setting's written form: rows.hpp's parse_prefetch), or nothing.
std::optional<Prefetch> prefetch_of(const nlohmann::json& value);

class Measurement : public driver::Measurement {
 public:
  // o: the parsed options (its blocks are filled as they are chosen); cpu: the first CPU of the
  // binding, whose caches the block model reads.
  Measurement(Options& o, int cpu);
  ~Measurement() override;

  const driver::Facts& facts() const override { return facts_; }
  std::string variant_key() const override;
  std::string choose_variant(const VariantRequest& r, const std::function<double(const std::string&)>& trial) override;
  json variant_record() const override { return isa_choice_json(); }
  void variant_changed(int threads, bool final) override;
  std::uint64_t working_set_bytes() const override { return arrays_bytes(o_.grid); }
  void allocate(const Placement& p, int threads) override;
  void initialise(int threads) override;
  std::vector<std::pair<std::string, const Buffer*>> buffers() const override;
  int steps_per_call() const override { return tiles_.depth; }
  int settling_steps() const override { return knob_steps_ + race_steps_; }
  void ready(int threads) override;
  driver::Done step(const driver::Step& s) override;
  json validate(int steps, int threads) override;
  json config() const override;
  json result(const std::vector<driver::Timing>& t) const override;
  json sizes() const override { return {{"n1", o_.grid.n1}, {"n2", o_.grid.n2}, {"n3", o_.grid.n3}}; }
  json placement_extra() const override;
  std::size_t page_map_samples() const override { return std::size_t{1} << 20; }
  std::string trial_note() const override {
    return "the grid was placed by the largest team before the trials; each trial is one time step";
  }

 private:
  driver::Facts facts_;
  Options& o_;
  int cpu_;
  json blocks_choice_, time_block_;
  TimeTiles tiles_;
  int race_steps_ = 0;
  int knob_steps_ = 0;      // the steps race_knobs ran
  std::string size_class_;  // where the run's data live (common/size_class.hpp), from the variant's choice
  TimeBlockModel model_;
  LlcProbe llc_;            // whether the team's CPUs share a last-level cache, where the model may choose the team
  int table_proposal_ = 0;  // the model's depth with the team free, as the table's races ran: their entry's key
  MachineCaches caches_;    // what the model plans with (iso3dfd/caches.hpp)

  // --time-block: the depth given, or auto's choice: the model's proposal raced against single steps
  // on the run's data, within three quarters of the run's steps (plan_race), which the race advances
  // (they count as the run's); config.time_block says which and why.
  void choose_time_block(int threads);
  // The key of this run in the cache of settled races: grid, threads and their CPUs, kernel and
  // shape, blocks, schedule, initialisation, placement and pages, the team asked for, one NUMA node
  // or several, and the cache sizes BANDWALL_CACHES forced, if any.
  std::string time_block_key(int threads, bool one_node) const;
  // Takes the depth a decisive earlier race on this CPU left in the cache under key, when that race
  // was at least as deep as this run would race (would_race) and its depth and team fit this run;
  // false (nothing changed) otherwise, also for any field of the wrong type.
  bool use_cached_time_block(const std::string& cache, const std::string& key, int threads, Teams teams,
                             int would_race);
  // The table's depth, which the run sweeps at from its first step, checked on this machine: one
  // round of a race per run (a warm-up step, then one sweep of the depth and as many single steps,
  // which leg first alternating from run to run), decided on with the rounds earlier checks like it
  // kept under the run's key (pool_race), by the decision rule. Sweeps faster beyond noise: the
  // depth is kept as confirmed (later runs take it from the cache, and the kept depth's own check
  // follows it). Slower beyond noise, or undecided over kPooledRoundsToSettle rounds: this run goes
  // step by step from here, and later runs too (kept as settled; the cache comes before the table).
  // Otherwise the rounds are kept for the next run like it. config.time_block.check says which; a
  // run too short for a round (its steps count as the run's) checks nothing.
  void check_table_depth(const std::string& cache, const std::string& key, int threads);
  // The blocks of the row kernel now active, unless the command line gave all three.
  void choose_blocks_for_variant(int threads, bool final);
  // The register shape of the variant now active: --row-shape's, else the one bandwall tune kept
  // on this machine for the radius (variant_key) and the variant (the cache folder's
  // iso3dfd-shapes file), else the table of measured choices' for this CPU's micro-architecture,
  // else the variant's default at the radius.
  void choose_shape();
  // The shape and the prefetch distance that choose_shape and choose_prefetch left to the compiled
  // default (nothing tuned, no row of the table), or that --row-shape or --prefetch measure: raced on
  // the run's first steps, at most half of them (they count as the run's), against the candidates
  // below, and kept (common/knob_race.hpp); config.row_shape.race and config.prefetch.race say how.
  void race_knobs(int threads);
  // The variant's compiled default at the radius, then the shapes the rows of the table of measured
  // choices chose for the variant at any radius (that this variant has at the run's).
  std::vector<std::string> shape_candidates() const;
  // Where the variant was chosen beyond noise by speed, or by the model (not a table row, not --isa,
  // not a race within noise, which left the default): one shape of
  // each other vector variant that runs the radius on its vector path, as "isa shape": the one a
  // settled race of its own kept here (where: the race key's size class and threads), else the one
  // other than its compiled default (which the variant's race timed already) that the table's rows
  // chose most often for it at the radius, else at any radius.
  std::vector<std::string> other_variant_candidates(const std::string& where);
  // The compiled default's rows ahead, then the rows' distances for the variant at any radius.
  std::vector<std::string> prefetch_candidates() const;
  // The steps the depth's race and check may plan on: the run's, less race_knobs'.
  int steps_left() const { return o_.iterations - knob_steps_; }
  // The shape of the sweeps (--swept-shape; rows.hpp's select_swept_shape), as choose_shape.
  void choose_swept_shape();
  // The share of L2 the blocks' window may fill: the table's for this CPU, radius and variant, else
  // the model's default (autoblocks.hpp).
  L2Share l2_share() const;
  // The team the table of measured choices names for this CPU, radius and variant (slabs or shared; empty:
  // none, the model's) and whence, for --sweep-team auto on one NUMA node.
  std::pair<std::string, std::string> table_team() const;
  // What the table of measured choices says of sweeps for this CPU, radius and variant (its "sweeps"
  // object: {"avx512": {"depth": 1 or the depth that paid, "slower": sweeps slower beyond noise in
  // two races, "tile_cache": "L2" or "L3" where tiles sized for that cache raced best, "decision":
  // {"why"}, ...}}): the depth (0: no entry), slower, the tiles' cache (empty: the model's), whence,
  // and the entry's decision in words.
  struct TableSweeps {
    int depth = 0;
    bool slower = false;
    // depth 1 where the model proposed this depth (0: none said): the bench's races could not
    // tell that depth from single steps
    int undecided = 0;
    // the depth the model proposed where the bench raced (0: none said); the races then included
    // shallower depths, so a run whose model proposes the same takes the table's depth
    int proposed = 0;
    // from the row's entry for the probe's verdict (sweeps_by_llc), raced with the team the run's
    // model takes: matched by the run's own proposal
    bool by_llc = false;
    // an entry measured with another number of threads than the run's, which then says nothing
    // (config.time_block.table with applies false; null otherwise)
    json other_team;
    std::string tile_cache;
    std::string from, why;
  };
  // This CPU's table entry on sweeps for the run's radius and variant, when measured with `threads`.
  TableSweeps table_sweeps(int threads) const;
  // The cache the sweeps' tiles are sized for (--tile-cache; auto: the table's sweeps entry), into
  // caches_.caches.tiles, and config.time_block.tile_cache: {"requested", "used", "how", "from"}.
  json choose_tile_cache(int threads);
  // The rows ahead the row kernel prefetches, in the same order as the shape: --prefetch's, else
  // the one bandwall tune kept beside the shape, else the table's row for this CPU, radius and
  // variant (its "prefetch" object: {"avx512": {"prefetch": rows, ...}}), else rows.hpp's default.
  void choose_prefetch();
  // A depth kept by an earlier run's race, checked against what this run timed (its calls' rates,
  // sorted): contradicted when every timed call ran slower than every single step of that race, and
  // then forgotten. Null when the depth was not a kept one.
  json recheck_kept_depth(const std::vector<double>& sorted_rates) const;
  // Advances n steps as the chosen depth does (n at most the depth).
  void advance(int n, int threads);
  Buffer prev_, next_, vel_;
  Fields f_{};
  PageSplit split_;
  Coefficients c_;
  std::unique_ptr<SelfCheck> check_;
  double cpu_s_ = 0, norm_ = 0;
};

}  // namespace bw::iso3dfd
