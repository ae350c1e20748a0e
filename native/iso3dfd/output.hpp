// What bandwall-iso3dfd prints: the seed's lines, or the JSON record.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "iso3dfd/options.hpp"
#include "iso3dfd/timemodel.hpp"

namespace bw::iso3dfd {

// The outcome of --verify (checked = false when it was not asked for).
struct Outcome {
  bool checked = false;
  bool passed = true;
  double max_abs = 0, max_rel = 0, tolerance = 0;
};

// Interior points x steps per second, in millions.
double mpoints_per_s(const Options& o, int steps, double seconds);

// What the cache blocking achieves, as a model of the traffic per point from DRAM and into L2:
// prev's blocks are read with their halo of 8 on each side unless a neighbouring block left it in
// cache.
json traffic_model(const Options& o, const TimeBlockModel& t);

// The in-core bound of the row kernel in use: its operations per output vector against the
// core's ports (rows.hpp), as cycles per vector and points per cycle per core: the sweeps' shape
// (swept_shape) for a run that swept; with its operation mix as this core ran it (mix) and the
// shape's block function itself on a block of g's rows in L2 (kernel_in_l2, iso3dfd/in_l2.hpp; l2_bytes:
// the first thread's L2, 0 unknown).
json incore_model(const Grid& g, std::uint64_t l2_bytes, bool swept = false);

void print_header(const Options& o, int threads, std::size_t allocated_bytes);
// The article's result lines, from the run's record.
void print_result(const json& record);
std::string failure_message(const Outcome& v);

// The record's config (without what the measuring driver adds: threads, isa choice) and result.
json iso_config(const Options& o);
// t: the temporal blocking that ran (depth 1: step by step); bytes_per_point is then its memory
// bytes per point and step.
json iso_result(const Options& o, int steps, double seconds, double cpu_seconds, double norm,
                const TimeBlockModel& t = TimeBlockModel{});
// The validation part: --verify's comparison when it ran, else "nothing to check".
json verify_validation(const Outcome& v);

}  // namespace bw::iso3dfd
