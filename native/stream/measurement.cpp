#include "stream/measurement.hpp"

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/topology.hpp"
#include "stream/stats.hpp"

namespace bw::stream {

std::vector<driver::ArrayRole> array_roles(const Kernel& k) {
  const std::pair<char, bool> used[] = {{'a', k.uses_a}, {'b', k.uses_b}, {'c', k.uses_c}};
  const int arrays = int(k.uses_a) + int(k.uses_b) + int(k.uses_c);
  const bool written_is_read = k.writes && k.bytes_per_element / sizeof(double) == arrays + 1;
  std::vector<driver::ArrayRole> out;
  for (auto [name, uses] : used)
    if (uses) out.push_back({std::string(1, name), name != k.writes || written_is_read, name == k.writes});
  return out;
}

driver::Facts facts_of(const Kernel& k) {
  driver::Facts f;
  f.tool = "stream";
  f.executable = "bandwall-stream";
  f.unit = "GB/s";
  f.unit_scale = 1e9;
  f.figure = "median_GBps";
  f.arrays = array_roles(k);
  f.variant_key = "stream.<kernel>.<stores> (stream.dot for dot)";
  return f;
}

Measurement::Measurement(const RunOptions& o, const std::vector<int>& cpus) : o_(o) {
  const Kernel& k = find_kernel(o.kernel);
  row_ = static_cast<std::size_t>(&k - kernels().data());
  nt_ = parse_stores(o.stores) && k.writes != 0;
  reps_ = static_cast<int>(parse_int(o.reps, "--reps", 1, 1 << 24));
  arrays_ = int(k.uses_a) + int(k.uses_b) + int(k.uses_c);
  size_default_ = o.size.empty();
  const std::uint64_t size = size_default_ ? 4 * Topology::instance().llc_bytes(cpus) : parse_size(o.size, "--size");
  if (size < sizeof(double)) throw UsageError("--size '" + o.size + "' is smaller than one double (8 bytes)");
  n_ = size / sizeof(double);
  bytes_ = n_ * sizeof(double);
  check_fits_in_memory(
      static_cast<std::uint64_t>(arrays_) * bytes_,
      "kernel " + std::string(k.name) + " with " + std::to_string(arrays_) + " arrays of " + format_bytes(bytes_));
  facts_ = facts_of(k);
}

std::string Measurement::variant_key() const {
  // dot stores nothing: one entry whatever the store kind
  return "stream." + std::string(kernel().name) +
         (kernel().writes ? "." + std::string(store_kinds()[nt_ ? 0 : 1].name) : "");
}

std::string Measurement::choose_variant(const VariantRequest& r,
                                        const std::function<double(const std::string&)>& trial) {
  return driver::choose_with(dispatch(), r, trial);
}

void Measurement::allocate(const Placement& p, int) {
  placement_ = p;
  const Kernel& k = kernel();
  if (k.uses_a) x_.a = (buffers_['a'] = Buffer(bytes_, p)).as<double>();
  if (k.uses_b) x_.b = (buffers_['b'] = Buffer(bytes_, p)).as<double>();
  if (k.uses_c) x_.c = (buffers_['c'] = Buffer(bytes_, p)).as<double>();
}

void Measurement::initialise(int threads) { stream::initialise(kernel(), x_, n_, threads, placement_.serial_init()); }

std::vector<std::pair<std::string, const Buffer*>> Measurement::buffers() const {
  std::vector<std::pair<std::string, const Buffer*>> out;
  for (const auto& [name, b] : buffers_) out.emplace_back(std::string(1, name), &b);
  return out;
}

driver::Done Measurement::step(const driver::Step& s) {
  double secs = 0;
  sum_ = run_once(kernel(), x_, n_, s.threads, nt_, &secs);
  return {secs, moved()};
}

json Measurement::validate(int steps, int threads) {
  inject_error_for_tests(kernel(), x_, n_, sum_);
  const Validation v = stream::validate(kernel(), x_, n_, steps, threads, sum_);
  if (!v.passed) throw RunError("validation of " + label_ + std::string(kernel().name) + " failed: " + v.message);
  return validation_json(kernel(), v);
}

json Measurement::config() const {
  json c = kernel_config(kernel(), n_, arrays_, nt_, o_.stores, reps_, 0, size_default_);
  c.erase("threads");  // the driver's
  return c;
}

json Measurement::result(const std::vector<driver::Timing>& t) const {
  json r = bandwidth_result(kernel(), n_, t[0].seconds, reps_ > 1 ? 1 : 0, nt_, {});
  r.erase("threads_ran_on");  // the driver's
  return r;
}

json Measurement::sizes() const {
  json s = json::object();
  for (const auto& [name, b] : buffers_) s[std::string(1, name)] = b.bytes();
  return s;
}

}  // namespace bw::stream
