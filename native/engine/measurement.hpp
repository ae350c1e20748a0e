// A STREAM kernel pipelined with a copy engine (seed 002) as a measurement of the driver
// (common/driver.hpp): the stream measurement's arrays, initialisation and validation, with the
// engine's queues opened for the team and one pipelined repetition as the step.
#pragma once
#include <memory>
#include <vector>

#include "engine/options.hpp"
#include "engine/pipeline.hpp"
#include "stream/measurement.hpp"

namespace bw::pipeline {

class Measurement : public stream::Measurement {
 public:
  Measurement(const Options& o, Setup s);
  ~Measurement() override;

  const driver::Facts& facts() const override { return facts_; }
  void allocate(const Placement& p, int threads) override;
  driver::Done step(const driver::Step& s) override;
  json config() const override;
  json result(const std::vector<driver::Timing>& t) const override;
  // As STREAM validates, and for dot also the pipelined sum against the CPU-only kernel's on the same
  // data and chunks, bit for bit (the pipeline takes the kernel's own steps in its own order).
  json validate(int steps, int threads) override;
  std::string trial_note() const override {
    return "the arrays were placed and the engine's queues opened for the largest team before the trials";
  }

  const Setup& setup() const { return s_; }

 private:
  driver::Facts facts_;
  Options o_;
  Setup s_;
  std::vector<char> inputs_;
  std::unique_ptr<engine::Engine> engine_;
  std::vector<Lane> lanes_;
  std::vector<LaneTimes> lane_times_;
  std::vector<double> partial_;
  int team_ = 0;  // of the last step
};

}  // namespace bw::pipeline
