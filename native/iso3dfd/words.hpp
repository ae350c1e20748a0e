// The words bandwall-iso3dfd's options take and its record writes (common/words.hpp: each row a name
// and its help, the first the default). The manifest exports them (kernels.iso3dfd.words), so the
// front end offers and checks the same words.
#pragma once
#include <string>
#include <vector>

#include "common/words.hpp"

namespace bw::iso3dfd {

// --init: who first touches the arrays.
const std::vector<Word>& inits();
// --schedule: the compute loop's OpenMP schedule.
const std::vector<Word>& schedules();
// --sweep-team: who sweeps what under temporal blocking.
const std::vector<Word>& sweep_teams();
// --tile-cache: which cache the sweeps' tiles are sized for.
const std::vector<Word>& tile_caches();
// --kernel: the optimised kernel or the plain reference.
const std::vector<Word>& kernel_choices();

// How a run's depth of sweep was settled (config.time_block.how); raced: a race under the decision
// rule settled it (now, beside the model, kept from an earlier run's race, or the table's race on
// this CPU).
struct DepthHow {
  const char* name;
  bool raced;
  const char* help;
};
const std::vector<DepthHow>& depth_hows();
// The row of a name; a name missing from the table is a programming error (std::logic_error).
const DepthHow& depth_how(const std::string& name);

}  // namespace bw::iso3dfd
