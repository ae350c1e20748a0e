#include "iso3dfd/words.hpp"

#include <stdexcept>

namespace bw::iso3dfd {

const std::vector<Word>& inits() {
  static const std::vector<Word> rows = {
      {"first-touch", "each thread first touches the blocks it computes"},
      {"serial", "the master thread initialises everything (the NUMA article's mistake)"},
  };
  return rows;
}

const std::vector<Word>& schedules() {
  static const std::vector<Word> rows = {
      {"static", "each thread the same blocks every step, those it first touched"},
      {"dynamic", "blocks handed out as threads free up, wherever their pages are"},
  };
  return rows;
}

const std::vector<Word>& sweep_teams() {
  static const std::vector<Word> rows = {
      {"auto",
       "the model's choice, slabs on several NUMA nodes or where the team's CPUs measure two last-level caches"},
      {"slabs", "a slab of planes a thread"},
      {"shared", "the team on one wavefront, one window in the shared cache"},
  };
  return rows;
}

const std::vector<Word>& tile_caches() {
  static const std::vector<Word> rows = {
      {"auto",
       "the cache the table of measured choices found tiles faster in for this CPU, radius and variant, else the "
       "model's"},
      {"model", "the tiles whose window costs the model least: in L2, else in the last-level cache"},
      {"L2", "tiles whose window L2 holds (a depth without one takes the model's)"},
      {"L3", "tiles whose window the last-level cache holds and L2 does not (a depth without one takes the model's)"},
  };
  return rows;
}

const std::vector<Word>& kernel_choices() {
  static const std::vector<Word> rows = {
      {"optimised", "the blocked, vectorised kernel"},
      {"reference", "the plain reference loops, timed instead"},
  };
  return rows;
}

const std::vector<DepthHow>& depth_hows() {
  static const std::vector<DepthHow> rows = {
      {"race", true, "a race on this run's data under the decision rule"},
      {"race and model", true, "a race on this run's data said sweeps pay, the model calibrated by it how deep"},
      {"cached", true, "an earlier run's race on this machine, kept in the cache folder"},
      {"table", true, "the table of measured choices for this CPU, radius and variant (a bench's race on the CPU)"},
      {"model", false, "the model alone (no race ran, or it could not decide)"},
      {"user", false, "given on the command line"},
      {"reference", false, "the reference kernel runs step by step"},
  };
  return rows;
}

const DepthHow& depth_how(const std::string& name) {
  for (const DepthHow& h : depth_hows())
    if (name == h.name) return h;
  throw std::logic_error("no depth how '" + name + "' in iso3dfd/words.cpp");
}

}  // namespace bw::iso3dfd
