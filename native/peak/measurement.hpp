// The FMA peak as a measurement of the driver (common/driver.hpp): no arrays; four cases, double
// and single precision on one core and on every thread of the team, each repetition a calibrated
// run of independent FMA chains whose accumulators are checked against the value they converge to.
#pragma once
#include <map>
#include <string>

#include "common/driver.hpp"
#include "peak/fma.hpp"

namespace bw::peak {

class PeakMeasurement : public driver::Measurement {
 public:
  PeakMeasurement(double seconds, int reps);

  const driver::Facts& facts() const override { return facts_; }
  std::string variant_key() const override { return "peak.fma"; }
  std::string choose_variant(const VariantRequest& r, const std::function<double(const std::string&)>& trial) override {
    return driver::choose_with(dispatch(), r, trial);
  }
  json variant_record() const override { return isa_choice_json(); }
  std::uint64_t working_set_bytes() const override { return 0; }
  void allocate(const Placement&, int) override {}
  void initialise(int) override {}
  std::vector<driver::Case> cases() const override;
  driver::Done step(const driver::Step& s) override;
  json validate(int steps, int threads) override;
  json config() const override;
  json result(const std::vector<driver::Timing>& t) const override;
  json sizes() const override { return json::object(); }

 private:
  static Precision precision(std::size_t c) { return c < 2 ? Precision::Double : Precision::Single; }
  std::uint64_t iterations(Precision p, bool trial);
  driver::Facts facts_;
  double seconds_;
  int reps_;
  std::map<std::string, std::uint64_t> iters_;  // per variant, precision and length
  bool ok_ = true;
};

}  // namespace bw::peak
