// The words the MPI tools' options take (common/words.hpp: a name and its help a row), header-only
// and free of MPI so that bandwall-manifest, which links no MPI, exports them to the front end.
#pragma once
#include <vector>

#include "common/words.hpp"

namespace bw::mpi {

// --bind of bandwall-mpi-stream and bandwall-iso3dfd-mpi: the CPUs of each rank (ranks.hpp's
// rank_cpus). Each tool has its own default (rank_binding_defaults), not the table's first.
inline const std::vector<Word>& rank_bindings() {
  static const std::vector<Word> rows = {
      {"numa", "the node's ranks dealt round-robin to its NUMA nodes, sharing a node's CPUs"},
      {"core", "one CPU per rank, the node's ranks spread over its NUMA nodes"},
      {"none", "every CPU the rank may use"},
  };
  return rows;
}

// The rank binding each MPI tool takes without --bind.
struct RankBindingDefault {
  const char* tool;
  const char* binding;
};
inline const std::vector<RankBindingDefault>& rank_binding_defaults() {
  static const std::vector<RankBindingDefault> rows = {
      {"bandwall-mpi-stream", "core"},
      {"bandwall-iso3dfd-mpi", "numa"},
  };
  return rows;
}
inline const char* rank_binding_default(const char* tool) {
  for (const auto& d : rank_binding_defaults())
    if (std::string(d.tool) == tool) return d.binding;
  return rank_bindings().front().name;
}

// --scaling of bandwall-iso3dfd-mpi.
inline const std::vector<Word>& scalings() {
  static const std::vector<Word> rows = {
      {"strong", "the grid is shared by the ranks"},
      {"weak", "the grid is each rank's"},
  };
  return rows;
}

}  // namespace bw::mpi
