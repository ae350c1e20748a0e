// bandwall-mpi-stream: seed 003's flat-MPI STREAM. Every rank runs one STREAM kernel (bwstream's
// kernels and validation) on one thread bound to its own core, on arrays it touches first, at the
// same time as the others: each repetition starts after a barrier and lasts as long as the slowest
// rank, so the aggregate bandwidth is all ranks' bytes over the slowest rank's time. Rank 0 prints
// one JSON record.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/isa.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "mpi/ranks.hpp"
#include "mpi/words.hpp"
#include "stream/kernels.hpp"
#include "stream/record.hpp"
#include "stream/runner.hpp"
#include "stream/stats.hpp"

using namespace bw::stream;

namespace {

struct Options {
  std::string kernel = "triad", stores = bw::stream::store_kinds().front().name, size, reps = "20",
              bind = bw::mpi::rank_binding_default("bandwall-mpi-stream"), pages = "system";
};

bool parse(int argc, char** argv, Options& o) {
  CLI::App app{
      "bandwall-mpi-stream: flat-MPI STREAM; every rank runs the kernel on its own core and memory at the same "
      "time; rank 0 prints the aggregate bandwidth"};
  app.add_option("--kernel", o.kernel, "the STREAM kernel: " + kernel_names())->capture_default_str();
  app.add_option("--stores", o.stores, "store kind, as bandwall-stream's")->capture_default_str();
  app.add_option("--size", o.size, "bytes per array per rank (default 4x the node's LLC shared by its ranks)");
  app.add_option("--reps", o.reps, "repetitions (the first is dropped)");
  app.add_option("--bind", o.bind, "the CPUs of each rank: " + bw::words_help(bw::mpi::rank_bindings()))
      ->capture_default_str();
  app.add_option("--pages", o.pages, "page size asked for: " + bw::words_help(bw::page_kinds()))->capture_default_str();
  return bw::parse_command_line(app, argc, argv);
}

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

int nodes_in_job(const std::string& host) {
  auto hosts = bw::mpi::gather(bw::json(host));
  int n = 0;
  if (bw::mpi::rank() == 0) {
    std::vector<std::string> names;
    for (auto& h : hosts) names.push_back(h.get<std::string>());
    std::sort(names.begin(), names.end());
    n = static_cast<int>(std::unique(names.begin(), names.end()) - names.begin());
  }
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return n;
}

int run(const Options& o) {
  const Kernel& k = find_kernel(o.kernel);
  const bool nt = bw::stream::parse_stores(o.stores) && k.writes != 0;
  const int reps = static_cast<int>(bw::parse_int(o.reps, "--reps", 1, 1 << 24));
  bw::Placement placement = bw::Placement::parse("first-touch");
  placement.pages = bw::parse_pages(o.pages);
  const bw::mpi::Local local = bw::mpi::local_ranks();
  const bw::Topology& topo = bw::Topology::instance();
  std::uint64_t size =
      o.size.empty() ? 4 * topo.llc_bytes() / static_cast<std::uint64_t>(local.size) : bw::parse_size(o.size, "--size");
  if (size < sizeof(double)) throw bw::UsageError("--size '" + o.size + "' is smaller than one double (8 bytes)");
  const std::size_t n = size / sizeof(double);
  const std::size_t bytes = n * sizeof(double);
  const int arrays = int(k.uses_a) + int(k.uses_b) + int(k.uses_c);
  bw::check_fits_in_memory(
      static_cast<std::uint64_t>(arrays) * bytes * static_cast<std::uint64_t>(local.size),
      std::to_string(local.size) + " ranks with " + std::to_string(arrays) + " arrays of " + bw::format_bytes(bytes));

  const std::vector<int> cpus = bw::mpi::rank_cpus(o.bind);
  const bw::Binding binding =
      o.bind == "none" ? bw::resolve_binding(1, "", "none") : bw::resolve_binding(1, bw::format_cpu_list(cpus), "");
  const std::vector<int> seen = bw::apply_binding(binding);
  std::map<char, bw::Buffer> buffers;
  Arrays x;
  if (k.uses_a) x.a = (buffers['a'] = bw::Buffer(bytes, placement)).as<double>();
  if (k.uses_b) x.b = (buffers['b'] = bw::Buffer(bytes, placement)).as<double>();
  if (k.uses_c) x.c = (buffers['c'] = bw::Buffer(bytes, placement)).as<double>();
  initialise(k, x, n, 1, false);

  std::vector<double> mine(static_cast<std::size_t>(reps)), slowest(mine.size());
  double sum = 0;
  for (auto& t : mine) {
    MPI_Barrier(MPI_COMM_WORLD);
    sum = run_once(k, x, n, 1, nt, &t);
  }
  MPI_Allreduce(mine.data(), slowest.data(), reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const Validation v = validate(k, x, n, reps, 1, sum);
  int ok = v.passed ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!v.passed) std::fprintf(stderr, "bandwall-mpi-stream: rank %d: %s\n", bw::mpi::rank(), v.message.c_str());
  if (!all_ok) throw bw::mpi::SharedRunError("validation of " + std::string(k.name) + " failed on some rank");

  const std::string host = hostname();
  const int nodes = nodes_in_job(host);
  const std::size_t dropped = reps > 1 ? 1 : 0;
  const double moved = static_cast<double>(n) * k.bytes_per_element;
  const Stats own = time_stats(mine, dropped);
  bw::json page_maps = bw::json::object();
  for (auto& [name, buf] : buffers) page_maps[std::string(1, name)] = bw::page_map(buf.data(), buf.bytes(), 1024);
  bw::json part = {{"rank", bw::mpi::rank()},
                   {"host", host},
                   {"cpus", bw::format_cpu_list(cpus)},
                   {"thread_cpus", seen},
                   {"thread_nodes", {topo.node_of_cpu(seen[0])}},
                   {"best_GBps", giga_per_s(moved, own.best_s)},
                   {"page_map", page_maps}};
  auto parts = bw::mpi::gather(part);
  if (bw::mpi::rank() != 0) return 0;

  const int ranks = bw::mpi::size();
  const Stats st = time_stats(slowest, dropped);
  const double total = moved * ranks;
  std::vector<int> all_cpus;
  for (auto& p : parts)
    for (int c : p["thread_cpus"]) all_cpus.push_back(c);
  std::sort(all_cpus.begin(), all_cpus.end());
  all_cpus.erase(std::unique(all_cpus.begin(), all_cpus.end()), all_cpus.end());
  bw::json result = {{"best_GBps", giga_per_s(total, st.best_s)},
                     {"median_GBps", giga_per_s(total, st.median_s)},
                     {"min_GBps", giga_per_s(total, st.worst_s)},
                     {"best_GBps_per_node", giga_per_s(total, st.best_s) / nodes},
                     {"times_s", slowest},
                     {"dropped_reps", dropped},
                     {"bytes_per_element", k.bytes_per_element},
                     {"ranks", parts}};
  bw::json config = {{"kernel", k.name},
                     {"stores", bw::stream::store_kinds()[nt ? 0 : 1].name},
                     {"size_per_array_bytes", bytes},
                     {"elements", n},
                     {"reps", reps},
                     {"ranks", ranks},
                     {"nodes", nodes},
                     {"ranks_per_node", local.size},
                     {"bind", o.bind},
                     {"isa", isa()},
                     {"isa_ceiling", bw::isa_json()["ceiling"]},
                     {"mpi_library", bw::mpi::library_version()}};
  bw::json validation =
      bw::validation_checked(true, "every rank compared every element of its arrays with its exact value");
  validation["epsilon"] = kEpsilon;
  validation["ranks_validated"] = ranks;
  bw::json sizes = bw::json::object();
  for (auto& [name, buf] : buffers) sizes[std::string(1, name)] = bytes;
  auto rec = bw::make_record("mpi-stream", config, result, validation,
                             bw::provenance(ranks, all_cpus, o.bind, placement.str(), sizes, reps));
  rec["placement"] = {{"policy", placement.str()}, {"pages", bw::to_string(placement.pages)}};
  bw::emit(rec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bw::mpi::guarded_mpi_main("bandwall-mpi-stream", argc, argv, [&] {
    Options o;
    if (!parse(argc, argv, o)) return 0;
    return run(o);
  });
}
