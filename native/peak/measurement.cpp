#include "peak/measurement.hpp"

#include "common/errors.hpp"
#include "common/machine.hpp"

namespace bw::peak {

namespace {

// A variant's trial chain: long enough to time, short enough for rounds of every variant.
constexpr double kTrialSeconds = 5e-3;

}  // namespace

PeakMeasurement::PeakMeasurement(double seconds, int reps) : seconds_(seconds), reps_(reps) {
  facts_.tool = "peak";
  facts_.executable = "bandwall-peak";
  facts_.unit = "GFlop/s";
  facts_.unit_scale = 1e9;
  facts_.figure = "total_gflops_dp";
  facts_.variant_key = "peak.fma";
}

std::vector<driver::Case> PeakMeasurement::cases() const {
  return {{"per_core_gflops_dp", true},
          {"total_gflops_dp", false},
          {"per_core_gflops_sp", true},
          {"total_gflops_sp", false}};
}

std::uint64_t PeakMeasurement::iterations(Precision p, bool trial) {
  const std::string key = std::string(variant().isa) + (p == Precision::Double ? "dp" : "sp") + (trial ? "t" : "");
  auto it = iters_.find(key);
  if (it == iters_.end()) it = iters_.emplace(key, calibrate(p, trial ? kTrialSeconds : seconds_)).first;
  return it->second;
}

driver::Done PeakMeasurement::step(const driver::Step& s) {
  const Precision p = precision(s.case_index);
  const std::uint64_t iters = iterations(p, s.phase != driver::Phase::Timed);
  const Repetition r = repetition(p, s.threads, iters);
  ok_ = ok_ && r.checksum_ok;
  // every thread's flops over the slowest thread's time
  return {r.slowest_s, flops_per_iteration(p) * static_cast<double>(iters) * s.threads};
}

json PeakMeasurement::validate(int, int) {
  if (!ok_) throw RunError("FMA chain produced a wrong checksum (the kernel is broken)");
  return validation_checked(true, "the accumulators of every FMA chain against the value they converge to (1)");
}

json PeakMeasurement::config() const {
  const Variant& v = variant();
  json c = {
      {"isa", v.isa},  {"vector_bits", v.vector_bits}, {"fma_instruction", v.fma},     {"accumulators", v.accumulators},
      {"reps", reps_}, {"seconds_per_rep", seconds_},  {"microarch", microarch_json()}};
  // The FMAs of this width a core issues per cycle (the machine model's row): with the peak it
  // gives the clock the cores ran at.
  std::string why;
  if (auto ports = ports_at(v.vector_bits, &why))
    c["fma_per_cycle"] = ports->fma;
  else
    c["fma_per_cycle"] = "unavailable: " + why;
  return c;
}

json PeakMeasurement::result(const std::vector<driver::Timing>& t) const {
  json r = json::object();
  for (const driver::Timing& x : t) {
    const std::vector<double> rates = x.rates();
    double best = 0;
    for (double v : rates) best = std::max(best, v);
    r[x.name] = best;
    r[x.name + "_reps"] = rates;
  }
  r["lanes_dp"] = lanes(Precision::Double);
  r["lanes_sp"] = lanes(Precision::Single);
  return r;
}

}  // namespace bw::peak
