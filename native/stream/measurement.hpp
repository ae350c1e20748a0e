// A STREAM kernel as a measurement of the driver (common/driver.hpp): its arrays under a placement,
// STREAM's initial values, one repetition over the team as the step, STREAM's validation, and the
// stream record's config and result. bandwall-pipeline's measurement extends it (engine/).
#pragma once
#include <map>
#include <string>

#include "common/driver.hpp"
#include "stream/kernels.hpp"
#include "stream/record.hpp"
#include "stream/runner.hpp"

namespace bw::stream {

// The arrays a kernel reads and writes (its table row: bytes per element count one read of every
// array it reads and one write of the one it writes, so a written array is also read when they
// count one more).
std::vector<driver::ArrayRole> array_roles(const Kernel& k);

// The measurement's facts for a kernel (the arrays depend on it).
driver::Facts facts_of(const Kernel& k);

class Measurement : public driver::Measurement {
 public:
  // o: the kernel, store kind, size (default 4x the LLC of cpus) and repetitions.
  Measurement(const RunOptions& o, const std::vector<int>& cpus);

  const driver::Facts& facts() const override { return facts_; }
  std::string variant_key() const override;
  std::string choose_variant(const VariantRequest& r, const std::function<double(const std::string&)>& trial) override;
  json variant_record() const override { return isa_choice_json(); }
  std::uint64_t working_set_bytes() const override { return static_cast<std::uint64_t>(arrays_) * bytes_; }
  void allocate(const Placement& p, int threads) override;
  void initialise(int threads) override;
  std::vector<std::pair<std::string, const Buffer*>> buffers() const override;
  driver::Done step(const driver::Step& s) override;
  json validate(int steps, int threads) override;
  json config() const override;
  json result(const std::vector<driver::Timing>& t) const override;
  json sizes() const override;

  int reps() const { return reps_; }

 protected:
  const Kernel& kernel() const { return kernels()[row_]; }
  double moved() const { return static_cast<double>(n_) * kernel().bytes_per_element; }  // bytes of a step
  Arrays x_;
  std::size_t n_ = 0;
  bool nt_ = true;
  double sum_ = 0;     // dot's sum of the last step
  std::string label_;  // before the kernel's name in messages ("pipelined ")

 private:
  driver::Facts facts_;
  RunOptions o_;
  std::size_t row_ = 0;  // the kernel's row in every variant's table
  std::size_t bytes_ = 0;
  int arrays_ = 0, reps_ = 1;
  bool size_default_ = true;
  Placement placement_;
  std::map<char, Buffer> buffers_;
};

}  // namespace bw::stream
