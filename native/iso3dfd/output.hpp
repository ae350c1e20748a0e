// What bandwall-iso3dfd prints: the seed's lines, or the JSON record.
#pragma once
#include <string>
#include <vector>

#include "common/record.hpp"
#include "iso3dfd/options.hpp"

namespace bw::iso3dfd {

// The outcome of --verify (checked = false when it was not asked for).
struct Outcome {
  bool checked = false;
  bool passed = true;
  double max_abs = 0, max_rel = 0, tolerance = 0;
};

// Interior points x timed steps (those after the trials of --threads auto) per second, in millions.
double mpoints_per_s(const Options& o, double seconds);

// What the cache blocking achieves, as a model of the traffic per point from DRAM and into L2:
// prev's blocks are read with their halo of 8 on each side unless a neighbouring block left it in
// cache.
json traffic_model(const Options& o);

// The in-core bound of the row kernel in use: its operations per output vector against the
// core's ports (rows.hpp), as cycles per vector and points per cycle per core.
json incore_model();

void print_header(const Options& o, int threads, std::size_t allocated_bytes);
void print_result(const Options& o, double seconds, const Outcome& v);
std::string failure_message(const Outcome& v);
json make_iso_record(const Options& o, int threads, const std::vector<int>& cpus, const std::string& binding,
                     double seconds, double cpu_seconds, double norm, const Outcome& v, const json& page_map,
                     const json& huge_page_share);

}  // namespace bw::iso3dfd
