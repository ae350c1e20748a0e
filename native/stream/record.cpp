#include "stream/record.hpp"

#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "stream/stats.hpp"

namespace bw::stream {

const std::vector<StoreKind>& store_kinds() {
  static const std::vector<StoreKind> kinds = {
      {"nt", true, "non-temporal stores: the written array goes to memory without being read first"},
      {"regular", false, "cached stores: each line written is read first (write-allocate)"},
  };
  return kinds;
}

bool parse_stores(const std::string& text) { return find_word(store_kinds(), text, "store kind").nt; }

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--kernel", o.kernel, "the STREAM kernel: " + kernel_names())->capture_default_str();
  add_thread_options(app, o.threads, true);
  std::string kinds;
  for (const StoreKind& k : store_kinds()) kinds += std::string(kinds.empty() ? "" : "; ") + k.name + ": " + k.help;
  app.add_option("--stores", o.stores, kinds)->capture_default_str();
  app.add_option("--size", o.size,
                 "bytes per array with units (512M, 2G); default 4x the LLC of the CPUs that compute");
  app.add_option("--reps", o.reps, "repetitions; the first is dropped when there are several")->capture_default_str();
  add_memory_options(app, o.memory);
}

json bandwidth_result(const Kernel& k, std::size_t n, const std::vector<double>& times, std::size_t dropped, bool nt,
                      const std::vector<int>& threads_ran_on) {
  const Stats st = time_stats(times, dropped);
  const double moved = static_cast<double>(n) * k.bytes_per_element;
  const double wa = (!nt && k.writes != 0) ? k.write_allocate_bytes_per_element : 0.0;
  const double moved_wa = static_cast<double>(n) * (k.bytes_per_element + wa);
  const double flops = static_cast<double>(n) * k.flops_per_element;
  return {{"best_GBps", giga_per_s(moved, st.best_s)},
          {"median_GBps", giga_per_s(moved, st.median_s)},
          {"avg_GBps", giga_per_s(moved, st.avg_s)},
          {"min_GBps", giga_per_s(moved, st.worst_s)},
          {"max_GBps", giga_per_s(moved, st.best_s)},
          {"best_GFlops", giga_per_s(flops, st.best_s)},
          {"times_s", times},
          {"dropped_reps", dropped},
          {"bytes_per_element", k.bytes_per_element},
          {"flops_per_element", k.flops_per_element},
          {"write_allocate_bytes_per_element", k.write_allocate_bytes_per_element},
          {"traffic",
           {{"write_allocate_counted_in_GBps", false},
            {"write_allocate_occurs", wa > 0},
            {"without_write_allocate", {{"bytes_per_rep", moved}, {"best_GBps", giga_per_s(moved, st.best_s)}}},
            {"with_write_allocate", {{"bytes_per_rep", moved_wa}, {"best_GBps", giga_per_s(moved_wa, st.best_s)}}}}},
          {"threads_ran_on", threads_ran_on}};
}

json kernel_config(const Kernel& k, std::size_t n, int arrays, bool nt, const std::string& stores_requested, int reps,
                   int threads, bool size_default) {
  return {{"kernel", k.name},
          {"formula", k.formula},
          {"size_per_array_bytes", n * sizeof(double)},
          {"elements", n},
          {"arrays", arrays},
          {"stores", store_kinds()[nt ? 0 : 1].name},
          {"stores_requested", stores_requested},
          {"reps", reps},
          {"threads", threads},
          {"isa", isa()},
          {"vector_bits", vector_bits()},
          {"size_default", size_default}};
}

json validation_json(const Kernel& k, const Validation& v) {
  json checks = json::object();
  for (const auto& a : v.arrays)
    checks[std::string(1, a.name)] = {{"expected", a.expected}, {"avg_rel_error", a.avg_rel_error}, {"wrong", a.wrong}};
  json validation = validation_checked(
      v.passed,
      "every element of the written array (dot: the sum) against its exact value, relative error below epsilon");
  validation["epsilon"] = kEpsilon;
  validation["arrays"] = checks;
  if (k.writes == 0)
    validation["dot"] = {{"expected", v.dot_expected}, {"got", v.dot_got}, {"rel_error", v.dot_rel_error}};
  return validation;
}

json kernels_json() {
  json out = json::array();
  for (const auto& k : kernels())
    out.push_back({{"name", k.name},
                   {"formula", k.formula},
                   {"bytes_per_element", k.bytes_per_element},
                   {"write_allocate_bytes_per_element", k.write_allocate_bytes_per_element},
                   {"flops_per_element", k.flops_per_element},
                   {"stores", k.writes != 0}});
  return out;
}

}  // namespace bw::stream
