// The check every run makes of its own answer, cheaply: a few hundred points of the last step,
// spread over the grid (a lattice reaching the halo, the edges of cache blocks, the source),
// recomputed with the scalar formula from the fields of the step before. The step updates next in
// place, so the values of next it overwrites are kept for the sampled points before it runs;
// prev of the step before is what f.next holds after it (the step only reads it).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

class SelfCheck {
 public:
  // Chooses the sampled points of grid g cut into blocks b.
  SelfCheck(const Grid& g, const Blocks& b);

  // Call before the last step: keeps next at the sampled points.
  void before_last_step(const Fields& f);
  // Call after it: recomputes the sampled points of f.prev from f.next, the kept values and vel
  // with the coefficients c (unperturbed); returns whether every one agrees to float rounding.
  bool after_last_step(const Fields& f, const Coefficients& c);

  std::size_t points() const { return index_.size(); }
  bool checked() const { return checked_; }
  bool passed() const { return wrong_ == 0; }
  // For the record's validation.self_check, and the one line of a failure.
  json to_json() const;
  std::string failure_message() const;

 private:
  Grid g_;
  std::vector<std::size_t> index_;  // sampled points, as indexes into the fields
  std::vector<float> older_;        // next at those points before the last step
  bool kept_ = false, checked_ = false;
  std::size_t wrong_ = 0;
  double max_rel_ = 0;
  double seconds_ = 0;     // time both calls took
  std::size_t worst_ = 0;  // index of the point with the largest error
};

}  // namespace bw::iso3dfd
