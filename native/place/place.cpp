// bandwall-place: allocates arrays under a placement policy (bw::Placement), touches them from bound
// OpenMP threads in a static schedule (or from the master thread alone), and prints where the pages
// went (placement.page_map), which CPU each thread ran on, the process's memory policy and CPU set,
// and how much of each array transparent huge pages back. Placement tests and users read it alike.
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <sstream>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"
#include "common/topology.hpp"
#include "place/memstate.hpp"

namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) throw bw::UsageError("--arrays '" + text + "' has an empty name");
    for (auto& n : names)
      if (n == item) throw bw::UsageError("--arrays '" + text + "' names '" + item + "' twice");
    names.push_back(item);
  }
  if (names.empty()) throw bw::UsageError("--arrays names no array");
  return names;
}

// Writes every element in the static schedule of the compute loops; returns the CPU of the master
// thread when serial.
int touch(double* a, std::size_t n, bool serial) {
  if (serial) {
    for (std::size_t i = 0; i < n; ++i) a[i] = 1.0;
    return sched_getcpu();
  }
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = 1.0;
  return -1;
}

// Node of each of the first n pages from ptr, in address order (-1 where none), to show the order
// in which a policy hands out nodes (interleave's round robin). Each page goes through bw::page_map,
// so pages hidden by NUMA balancing's hinting marks are resolved as there.
std::vector<int> page_sequence(const void* ptr, std::size_t bytes, std::size_t n) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  n = std::min(n, bytes / page);
  std::vector<int> out;
  for (std::size_t i = 0; i < n; ++i) {
    auto m = bw::page_map(static_cast<const char*>(ptr) + i * page, page, 1);
    int node = -1;
    for (auto& [k, v] : m.items())
      if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos) node = std::stoi(k);
    out.push_back(node);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-place", [&] {
    CLI::App app{"bandwall-place: allocate arrays under a placement policy and show where their pages are"};
    std::string placement_text = "first-touch", cpus, bind = "compact", size_text = "64M", arrays = "a,b,c";
    std::string touch_mode = "auto";
    int threads = 0;
    std::size_t sequence = 0;
    app.add_option("--placement", placement_text, bw::placement_syntax());
    app.add_option("--threads", threads, "threads that touch the arrays (0: one per CPU of --cpus/--bind)");
    app.add_option("--cpus", cpus, "CPU of each thread, in order (wins over --bind), e.g. 2,3,0");
    app.add_option("--bind", bind, "binding policy: " + bw::binding_syntax());
    app.add_option("--size", size_text, "bytes per array (64M, 1G, ...)");
    app.add_option("--arrays", arrays, "names of the arrays, comma separated");
    app.add_option("--sequence", sequence, "also list the node of each of the first N pages of every array");
    app.add_option("--touch", touch_mode, "auto (serial for the serial policy, else parallel), parallel, serial, none");
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    if (threads < 0) throw bw::UsageError("--threads must not be negative");
    if (touch_mode != "auto" && touch_mode != "parallel" && touch_mode != "serial" && touch_mode != "none")
      throw bw::UsageError("unknown --touch '" + touch_mode + "' (use auto, parallel, serial or none)");
    auto placement = bw::Placement::parse(placement_text);
    auto names = split_names(arrays);
    std::uint64_t bytes = bw::parse_size(size_text, "--size");
    if (bytes < sizeof(double)) throw bw::UsageError("--size " + size_text + " is smaller than one element");
    bw::check_fits_in_memory(bytes * names.size(), "arrays");
    if (touch_mode == "auto") touch_mode = placement.serial_init() ? "serial" : "parallel";

    auto allowed = bw::allowed_cpus();  // the process's CPU set, before threads are bound
    auto binding = bw::resolve_binding(threads, cpus, bind);
    auto seen = bw::apply_binding(binding);
    auto& topo = bw::Topology::instance();
    std::vector<int> seen_nodes;
    for (int c : seen) seen_nodes.push_back(topo.node_of_cpu(c));

    std::vector<bw::Buffer> buffers;
    for (std::size_t i = 0; i < names.size(); ++i) buffers.emplace_back(bytes, placement);
    int master_cpu = -1;
    std::size_t n = bytes / sizeof(double);
    if (touch_mode != "none")
      for (auto& b : buffers) master_cpu = touch(b.as<double>(), n, touch_mode == "serial");

    bw::json page_map = bw::json::object(), huge = bw::json::object();
    bool complete = true;
    for (std::size_t i = 0; i < names.size(); ++i) {
      page_map[names[i]] = bw::page_map(buffers[i].data(), bytes);
      huge[names[i]] = bw::huge_page_bytes(buffers[i].data());
      if (touch_mode != "none" && (page_map[names[i]].contains("absent") || page_map[names[i]].contains("unknown")))
        complete = false;
    }
    bw::json result = {{"thread_cpus", seen},
                       {"thread_nodes", seen_nodes},
                       {"requested_cpus", binding.cpus},
                       {"allowed_cpus", allowed},
                       {"memory_policy", bw::memory_policy()},
                       {"thp", {{"enabled", bw::thp_mode()}, {"huge_page_bytes", huge}}},
                       {"numa_balancing", bw::numa_balancing()},
                       {"touch", touch_mode}};
    if (sequence > 0) {
      bw::json seq = bw::json::object();
      for (std::size_t i = 0; i < names.size(); ++i) seq[names[i]] = page_sequence(buffers[i].data(), bytes, sequence);
      result["page_sequence"] = seq;
    }
    if (master_cpu >= 0) {
      result["master_cpu"] = master_cpu;
      result["master_node"] = topo.node_of_cpu(master_cpu);
    }
    bw::json config = {{"placement", placement.str()},
                       {"threads", binding.threads},
                       {"binding", binding.policy},
                       {"bytes_per_array", bytes},
                       {"arrays", names},
                       {"touch", touch_mode}};
    bw::json validation = bw::validation_checked(complete, "every touched page of every array is found on a NUMA node");
    if (!complete) validation["message"] = "touched pages are missing from the page map";
    bw::json sizes = bw::json::object();
    for (auto& name : names) sizes[name] = bytes;
    auto record = bw::make_record("place", config, result, validation,
                                  bw::provenance(binding.threads, seen, binding.policy, placement.str(), sizes, 1));
    record["placement"] = {{"policy", placement.str()}, {"page_map", page_map}};
    bw::emit(record);
    return complete ? bw::kExitOk : bw::kExitRunFailed;
  });
}
