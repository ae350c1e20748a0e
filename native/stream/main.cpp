// bandwall-stream: one STREAM kernel of the table (stream/kernels.cpp) on bound OpenMP threads with a
// placement policy; prints one JSON record with bandwidth statistics, traffic accounting,
// validation and the page map of every array. A failed validation exits 1 and prints no record.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <map>
#include <optional>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/harness.hpp"
#include "common/isa.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "stream/kernels.hpp"
#include "stream/runner.hpp"
#include "stream/stats.hpp"

namespace {

struct Options {
  std::string kernel = "triad", stores = "nt", size, reps = "20", isa = "auto";
  bw::ThreadOptions threads;
  bw::MemoryOptions memory;
  bool list = false;
};

bw::json kernel_table() {
  bw::json out = bw::json::array();
  for (const auto& k : bw::stream::kernels())
    out.push_back({{"name", k.name},
                   {"formula", k.formula},
                   {"bytes_per_element", k.bytes_per_element},
                   {"write_allocate_bytes_per_element", k.write_allocate_bytes_per_element},
                   {"flops_per_element", k.flops_per_element},
                   {"stores", k.writes != 0}});
  return out;
}

int run(const Options& o) {
  using namespace bw::stream;
  select_isa(o.isa);
  const Kernel& k = find_kernel(o.kernel);
  if (o.stores != "nt" && o.stores != "regular")
    throw bw::UsageError("unknown store kind '" + o.stores + "' (use nt or regular)");
  const bool nt = o.stores == "nt" && k.writes != 0;
  int reps = static_cast<int>(bw::parse_int(o.reps, "--reps", 1, 1 << 24));
  bw::Placement placement = o.memory.resolve();
  bw::Binding binding = o.threads.resolve();
  std::vector<int> cpus = binding.cpus.empty() ? bw::allowed_cpus() : binding.cpus;

  const int arrays = int(k.uses_a) + int(k.uses_b) + int(k.uses_c);
  std::uint64_t size = o.size.empty() ? 4 * bw::Topology::instance().llc_bytes(cpus) : bw::parse_size(o.size, "--size");
  if (size < sizeof(double)) throw bw::UsageError("--size '" + o.size + "' is smaller than one double (8 bytes)");
  const std::size_t n = size / sizeof(double);
  const std::size_t bytes = n * sizeof(double);
  bw::check_fits_in_memory(
      static_cast<std::uint64_t>(arrays) * bytes,
      "kernel " + std::string(k.name) + " with " + std::to_string(arrays) + " arrays of " + bw::format_bytes(bytes));

  std::vector<int> seen = bw::apply_binding(binding);
  std::map<char, bw::Buffer> buffers;
  Arrays x;
  if (k.uses_a) x.a = (buffers['a'] = bw::Buffer(bytes, placement)).as<double>();
  if (k.uses_b) x.b = (buffers['b'] = bw::Buffer(bytes, placement)).as<double>();
  if (k.uses_c) x.c = (buffers['c'] = bw::Buffer(bytes, placement)).as<double>();
  initialise(k, x, n, binding.threads, placement.serial_init());

  std::vector<double> times(static_cast<std::size_t>(reps));
  double sum = 0;
  for (auto& t : times) sum = run_once(k, x, n, binding.threads, nt, &t);
  if (std::getenv("BANDWALL_STREAM_INJECT_ERROR")) {  // for tests of the failure path only
    double* w = k.writes == 'a' ? x.a : k.writes == 'b' ? x.b : k.writes == 'c' ? x.c : nullptr;
    if (w)
      w[n / 2] += 1.0;
    else
      sum += 1.0;
  }
  Validation v = validate(k, x, n, reps, binding.threads, sum);
  if (!v.passed) throw bw::RunError("validation of " + std::string(k.name) + " failed: " + v.message);

  const std::size_t dropped = reps > 1 ? 1 : 0;
  Stats st = time_stats(times, dropped);
  const double moved = static_cast<double>(n) * k.bytes_per_element;
  const double wa = (!nt && k.writes != 0) ? k.write_allocate_bytes_per_element : 0.0;
  const double moved_wa = static_cast<double>(n) * (k.bytes_per_element + wa);
  const double flops = static_cast<double>(n) * k.flops_per_element;

  bw::json result = {
      {"best_GBps", giga_per_s(moved, st.best_s)},
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
      {"threads_ran_on", seen}};
  bw::json config = {{"kernel", k.name},
                     {"formula", k.formula},
                     {"size_per_array_bytes", bytes},
                     {"elements", n},
                     {"arrays", arrays},
                     {"stores", nt ? "nt" : "regular"},
                     {"stores_requested", o.stores},
                     {"reps", reps},
                     {"threads", binding.threads},
                     {"isa", isa()},
                     {"isa_requested", o.isa},
                     {"vector_bits", vector_bits()},
                     {"size_default", o.size.empty()}};
  bw::json checks = bw::json::object();
  for (auto& a : v.arrays)
    checks[std::string(1, a.name)] = {{"expected", a.expected}, {"avg_rel_error", a.avg_rel_error}, {"wrong", a.wrong}};
  bw::json validation = bw::validation_checked(
      true, "every element of the written array (dot: the sum) against its exact value, relative error below epsilon");
  validation["epsilon"] = kEpsilon;
  validation["arrays"] = checks;
  if (k.writes == 0)
    validation["dot"] = {{"expected", v.dot_expected}, {"got", v.dot_got}, {"rel_error", v.dot_rel_error}};
  bw::json page_maps = bw::json::object(), sizes = bw::json::object(), huge = bw::json::object();
  for (auto& [name, buf] : buffers) {
    page_maps[std::string(1, name)] = bw::page_map(buf.data(), buf.bytes(), 4096);
    huge[std::string(1, name)] = bw::huge_page_share(buf.data(), buf.bytes());
    sizes[std::string(1, name)] = bytes;
  }

  auto rec =
      bw::make_record("stream", config, result, validation,
                      bw::provenance(binding.threads, binding.cpus, binding.policy, placement.str(), sizes, reps));
  rec["placement"] = {{"policy", placement.str()},
                      {"pages", bw::to_string(placement.pages)},
                      {"huge_page_share", huge},
                      {"page_map", page_maps}};
  bw::emit(rec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-stream", [&] {
    CLI::App app{"bandwall-stream: one STREAM kernel, one JSON record"};
    Options o;
    app.add_option("--kernel", o.kernel, bw::stream::kernel_names())->capture_default_str();
    bw::add_thread_options(app, o.threads);
    app.add_option("--stores", o.stores, "nt (non-temporal) or regular")->capture_default_str();
    app.add_option("--size", o.size, "bytes per array with units (512M, 2G); default 4x the LLC of the CPUs used");
    app.add_option("--reps", o.reps, "repetitions; the first is dropped when there are several")->capture_default_str();
    bw::add_memory_options(app, o.memory);
    bw::add_isa_option(app, o.isa);
    app.add_flag("--list-kernels", o.list, "print the kernel table (JSON) and exit");
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    if (o.list) {
      bw::emit(kernel_table());
      return 0;
    }
    return run(o);
  });
}
