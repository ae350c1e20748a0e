#include "common/topology.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/policies.hpp"

namespace bw {
namespace {

// hwloc's data (or unified) cache types and their levels, innermost first.
constexpr std::pair<hwloc_obj_type_t, int> kCacheLevels[] = {{HWLOC_OBJ_L1CACHE, 1},
                                                             {HWLOC_OBJ_L2CACHE, 2},
                                                             {HWLOC_OBJ_L3CACHE, 3},
                                                             {HWLOC_OBJ_L4CACHE, 4},
                                                             {HWLOC_OBJ_L5CACHE, 5}};

std::vector<int> cpus_of(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  int i;
  hwloc_bitmap_foreach_begin(i, set) { out.push_back(i); }
  hwloc_bitmap_foreach_end();
  return out;
}

struct Bitmap {
  hwloc_bitmap_t b = hwloc_bitmap_alloc();
  ~Bitmap() { hwloc_bitmap_free(b); }
};

}  // namespace

Topology& Topology::instance() {
  static Topology topo([] {
    const char* env = std::getenv("BANDWALL_TOPOLOGY");
    return std::string(env ? env : "");
  }());
  static const bool forced = [] {
    const char* env = std::getenv("BANDWALL_CACHES");
    topo.force_caches(env ? env : "");
    return true;
  }();
  (void)forced;
  return topo;
}

void Topology::force_caches(const std::string& text) {
  std::map<int, std::uint64_t> sizes;
  const std::string usage = "BANDWALL_CACHES '" + text + "': give sizes by level, such as L2=1M,L3=32M";
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    const std::size_t eq = item.find('=');
    if (eq != 2 || (item[0] != 'L' && item[0] != 'l') || item[1] < '1' || item[1] > '5') throw UsageError(usage);
    const int level = item[1] - '0';
    std::uint64_t bytes = 0;
    try {
      bytes = parse_size(item.substr(3), "BANDWALL_CACHES");
    } catch (const UsageError&) {
      throw UsageError(usage);
    }
    if (bytes == 0 || sizes.count(level)) throw UsageError(usage);
    sizes[level] = bytes;
  }
  if (!text.empty() && sizes.empty()) throw UsageError(usage);
  forced_ = sizes;
  forced_text_ = sizes.empty() ? "" : "BANDWALL_CACHES=" + text;
}

Topology::Topology(const std::string& source) : source_(source) {
  hwloc_topology_init(&topo_);
  if (!source.empty()) {
    int rc;
    if (std::filesystem::exists(source))
      rc = hwloc_topology_set_xml(topo_, source.c_str());
    else
      rc = hwloc_topology_set_synthetic(topo_, source.c_str());
    if (rc != 0) {
      hwloc_topology_destroy(topo_);
      topo_ = nullptr;
      throw UsageError("topology '" + source + "' is neither an hwloc XML file nor a synthetic description");
    }
  }
  if (hwloc_topology_load(topo_) != 0) {
    hwloc_topology_destroy(topo_);
    topo_ = nullptr;
    throw RunError("hwloc could not load the topology of " + source_);
  }
}

Topology::~Topology() {
  if (topo_) hwloc_topology_destroy(topo_);
}

std::string Topology::cpu_model() const {
  hwloc_obj_t pkg = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, 0);
  for (hwloc_obj_t o = pkg ? pkg : hwloc_get_root_obj(topo_); o; o = nullptr) {
    if (const char* m = hwloc_obj_get_info_by_name(o, "CPUModel")) return m;
  }
  if (const char* m = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo_), "CPUModel")) return m;
  return source_.empty() ? "unknown" : "synthetic";
}

std::string Topology::digest() const {
  // FNV-1a over the shape: counts per type, NUMA memory, cache sizes.
  std::string shape;
  for (int d = 0; d < hwloc_topology_get_depth(topo_); ++d) {
    shape += std::to_string(hwloc_get_depth_type(topo_, d)) + ":" +
             std::to_string(hwloc_get_nbobjs_by_depth(topo_, d)) + ";";
    for (unsigned i = 0; i < hwloc_get_nbobjs_by_depth(topo_, d); ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_depth(topo_, d, i);
      if (hwloc_obj_type_is_cache(o->type)) shape += std::to_string(o->attr->cache.size) + ",";
    }
  }
  for (unsigned i = 0; i < static_cast<unsigned>(numa_nodes()); ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i);
    shape += "n" + std::to_string(n->os_index) + ":" + std::to_string(n->attr->numanode.local_memory >> 20);
  }
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : shape) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int Topology::numa_nodes() const { return std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE)); }

std::vector<int> Topology::node_os_indexes() const {
  std::vector<int> out;
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE); ++i)
    out.push_back(static_cast<int>(hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i)->os_index));
  if (out.empty()) out.push_back(0);
  return out;
}

std::vector<int> Topology::node_cpus(int node_os) const {
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE); ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i);
    if (static_cast<int>(n->os_index) == node_os) return cpus_of(n->cpuset);
  }
  throw UsageError("NUMA node " + std::to_string(node_os) + " does not exist (nodes: " + join(node_os_indexes()) + ")");
}

int Topology::node_of_cpu(int cpu) const {
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE); ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i);
    if (hwloc_bitmap_isset(n->cpuset, cpu)) return static_cast<int>(n->os_index);
  }
  return -1;
}

std::vector<int> Topology::all_cpus() const { return cpus_of(hwloc_get_root_obj(topo_)->cpuset); }

int Topology::cores() const {
  int n = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE);
  return n > 0 ? n : hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU);
}

std::uint64_t Topology::llc_bytes(const std::vector<int>& cpus) const {
  Bitmap want;
  if (cpus.empty())
    hwloc_bitmap_copy(want.b, hwloc_get_root_obj(topo_)->cpuset);
  else
    for (int c : cpus) hwloc_bitmap_set(want.b, c);
  // from the outermost level in
  for (auto it = std::rbegin(kCacheLevels); it != std::rend(kCacheLevels); ++it) {
    const auto [t, level] = *it;
    const int n = hwloc_get_nbobjs_by_type(topo_, t);
    const auto forced = forced_.find(level);
    if (n <= 0 && forced == forced_.end()) continue;
    if (n <= 0) return forced->second;  // a level hwloc does not know: one cache shared by all
    std::uint64_t total = 0;
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_type(topo_, t, i);
      if (hwloc_bitmap_intersects(o->cpuset, want.b))
        total += forced == forced_.end() ? o->attr->cache.size : forced->second;
    }
    return total;
  }
  return 0;
}

std::uint64_t Topology::cache_bytes(int level, int cpu) const {
  if (const auto forced = forced_.find(level); forced != forced_.end()) return forced->second;
  hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo_, static_cast<unsigned>(cpu));
  for (hwloc_obj_t o = pu ? pu->parent : nullptr; o; o = o->parent)
    if (hwloc_obj_type_is_cache(o->type) && o->attr->cache.depth == static_cast<unsigned>(level) &&
        o->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION)
      return o->attr->cache.size;
  return 0;
}

namespace {

// PUs of topo in hwloc logical order, restricted to allowed (all when empty).
std::vector<hwloc_obj_t> logical_pus(hwloc_topology_t topo, const std::vector<int>& allowed) {
  std::set<int> allow(allowed.begin(), allowed.end());
  std::vector<hwloc_obj_t> pus;
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU); ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i);
    if (allow.empty() || allow.count(static_cast<int>(pu->os_index))) pus.push_back(pu);
  }
  return pus;
}

}  // namespace

std::vector<int> Topology::compact_order(const std::vector<int>& allowed, int node) const {
  std::vector<int> node_set, out;
  if (node >= 0) node_set = node_cpus(node);
  for (hwloc_obj_t pu : logical_pus(topo_, allowed))
    if (node_set.empty() || std::count(node_set.begin(), node_set.end(), static_cast<int>(pu->os_index)))
      out.push_back(static_cast<int>(pu->os_index));
  return out;
}

std::vector<int> Topology::scatter_order(const std::vector<int>& allowed) const {
  using Key = std::tuple<int, int, int, int, int>;  // smt, core-in-node, node-in-package, package, logical
  std::vector<std::pair<Key, int>> keyed;
  auto rank_in = [&](hwloc_obj_t obj, hwloc_obj_t parent, hwloc_obj_type_t type) {
    if (!obj || !parent) return 0;
    int r = 0;
    for (hwloc_obj_t o = hwloc_get_next_obj_inside_cpuset_by_type(topo_, parent->cpuset, type, nullptr); o && o != obj;
         o = hwloc_get_next_obj_inside_cpuset_by_type(topo_, parent->cpuset, type, o))
      ++r;
    return r;
  };
  for (hwloc_obj_t pu : logical_pus(topo_, allowed)) {
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, pu);
    hwloc_obj_t node = nullptr;
    for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE); ++i) {
      hwloc_obj_t nn = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i);
      if (hwloc_bitmap_isset(nn->cpuset, pu->os_index)) node = nn;
    }
    int smt = core ? rank_in(pu, core, HWLOC_OBJ_PU) : 0;
    hwloc_obj_t core_parent = node ? node : pkg;
    int core_rank = core ? rank_in(core, core_parent, HWLOC_OBJ_CORE) : rank_in(pu, core_parent, HWLOC_OBJ_PU);
    int node_rank = 0;
    if (node && pkg) {
      for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE); ++i) {
        hwloc_obj_t nn = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i);
        if (nn == node) break;
        if (hwloc_bitmap_isincluded(nn->cpuset, pkg->cpuset)) ++node_rank;
      }
    } else if (node) {
      node_rank = static_cast<int>(node->logical_index);
    }
    int pkg_rank = pkg ? static_cast<int>(pkg->logical_index) : 0;
    keyed.push_back({Key{smt, core_rank, node_rank, pkg_rank, static_cast<int>(pu->logical_index)},
                     static_cast<int>(pu->os_index)});
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<int> out;
  for (auto& [k, cpu] : keyed) out.push_back(cpu);
  return out;
}

std::vector<int> Topology::spread_order(const std::vector<int>& allowed, int n) const {
  // OpenMP's spread: n threads as far apart as the compact order allows (every P/n-th CPU); all of
  // them in compact order when n is 0 or more than P.
  std::vector<int> compact = compact_order(allowed), out;
  std::size_t p = compact.size(), want = n > 0 ? static_cast<std::size_t>(n) : p;
  if (want > p) return compact;
  for (std::size_t i = 0; i < want; ++i) out.push_back(compact[i * p / want]);
  return out;
}

std::vector<int> Topology::domain_cpus(char kind, int index) const {
  hwloc_obj_type_t type = HWLOC_OBJ_MACHINE;
  std::string what;
  switch (kind) {
    case 'N': what = "node"; break;
    case 'S': type = HWLOC_OBJ_PACKAGE, what = "socket"; break;
    case 'D': type = HWLOC_OBJ_DIE, what = "die"; break;
    case 'M': type = HWLOC_OBJ_NUMANODE, what = "NUMA domain"; break;
    case 'C':  // the last level of data or unified caches
      what = "last-level cache";
      type = HWLOC_OBJ_L1CACHE;
      for (hwloc_obj_type_t t : {HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE})
        if (hwloc_get_nbobjs_by_type(topo_, t) > 0) type = t;
      break;
    default: throw UsageError(std::string("unknown CPU domain '") + kind + "' (use N, S, D, M or C)");
  }
  // A level the machine does not have (no dies, no caches known) is one domain: the whole machine.
  const int found = type == HWLOC_OBJ_MACHINE ? 0 : hwloc_get_nbobjs_by_type(topo_, type);
  const int count = std::max(found, 1);
  if (index < 0 || index >= count)
    throw UsageError(std::string("CPU domain ") + kind + std::to_string(index) + ": this machine has " +
                     std::to_string(count) + " " + what + (count == 1 ? "" : "s") + " (numbered from 0)");
  hwloc_obj_t domain =
      found > 0 ? hwloc_get_obj_by_type(topo_, type, static_cast<unsigned>(index)) : hwloc_get_root_obj(topo_);
  std::vector<std::vector<int>> by_core;  // PUs of each core of the domain, in logical order
  hwloc_obj_t last_core = nullptr;
  for (hwloc_obj_t pu = hwloc_get_next_obj_inside_cpuset_by_type(topo_, domain->cpuset, HWLOC_OBJ_PU, nullptr); pu;
       pu = hwloc_get_next_obj_inside_cpuset_by_type(topo_, domain->cpuset, HWLOC_OBJ_PU, pu)) {
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_CORE, pu);
    if (by_core.empty() || !core || core != last_core) by_core.emplace_back();
    by_core.back().push_back(static_cast<int>(pu->os_index));
    last_core = core;
  }
  std::vector<int> out;
  for (std::size_t smt = 0;; ++smt) {
    const std::size_t before = out.size();
    for (const auto& pus : by_core)
      if (smt < pus.size()) out.push_back(pus[smt]);
    if (out.size() == before) break;
  }
  return out;
}

std::vector<int> Topology::order(const std::string& policy, int n, const std::vector<int>& allowed) const {
  const auto colon = policy.find(':');
  const std::string word = policy.substr(0, colon), arg = colon == std::string::npos ? "" : policy.substr(colon + 1);
  const BindingPolicy* row = nullptr;
  for (const BindingPolicy& b : binding_policies())
    if (b.name == word && (b.arg == PolicyArg::None) == (colon == std::string::npos)) row = &b;
  if (!row) throw UsageError("unknown binding '" + policy + "' (use " + binding_syntax() + ")");
  if (!row->order) throw UsageError("binding '" + policy + "' leaves the threads unbound: it has no CPU order");
  int node = -1;
  if (row->arg == PolicyArg::Node) {
    char* end = nullptr;
    long v = std::strtol(arg.c_str(), &end, 10);
    if (arg.empty() || *end || v < 0 || v > (1 << 20))
      throw UsageError("binding '" + policy + "' needs a NUMA node number");
    node = static_cast<int>(v);
  }
  std::vector<int> out = row->order(*this, allowed, node, n);
  if (out.empty()) throw UsageError("binding '" + policy + "' leaves no CPU to run on");
  if (n > static_cast<int>(out.size()))
    throw UsageError(std::to_string(n) + " threads asked for but binding '" + policy + "' has only " +
                     std::to_string(out.size()) + " CPUs");
  if (n > 0) out.resize(static_cast<std::size_t>(n));
  return out;
}

nlohmann::json Topology::to_json() const {
  using nlohmann::json;
  json j;
  j["source"] = source();
  j["cpu_model"] = cpu_model();
  j["digest"] = digest();
  j["packages"] = std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PACKAGE));
  j["cores"] = cores();
  j["pus"] = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU);
  json nodes = json::array();
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE); ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, i);
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, n);
    nodes.push_back({{"os_index", n->os_index},
                     {"memory_bytes", n->attr->numanode.local_memory},
                     {"package", pkg ? static_cast<int>(pkg->logical_index) : 0},
                     {"cpus", cpus_of(n->cpuset)}});
  }
  j["numa_nodes"] = nodes;
  // Distances between NUMA nodes, as the OS (ACPI SLIT) reports them.
  json dist = nullptr;
  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (hwloc_distances_get_by_type(topo_, HWLOC_OBJ_NUMANODE, &nr, &d, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
      nr >= 1) {
    dist = json::array();
    for (unsigned a = 0; a < d->nbobjs; ++a) {
      json row = json::array();
      for (unsigned b = 0; b < d->nbobjs; ++b) row.push_back(d->values[a * d->nbobjs + b]);
      dist.push_back(row);
    }
    hwloc_distances_release(topo_, d);
  }
  j["distances"] = dist;
  json cores_j = json::array();
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE); ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_CORE, i);
    cores_j.push_back({{"logical_index", c->logical_index}, {"cpus", cpus_of(c->cpuset)}});
  }
  j["core_list"] = cores_j;
  json caches = json::array();
  for (auto [type, level] : kCacheLevels) {
    for (int i = 0; i < hwloc_get_nbobjs_by_type(topo_, type); ++i) {
      hwloc_obj_t c = hwloc_get_obj_by_type(topo_, type, i);
      caches.push_back({{"level", level},
                        {"size_bytes", c->attr->cache.size},
                        {"line_bytes", c->attr->cache.linesize},
                        {"cpus", cpus_of(c->cpuset)}});
    }
  }
  j["caches"] = caches;
  if (!forced_text_.empty()) j["caches_forced"] = forced_text_;
  j["llc_bytes"] = llc_bytes();
  j["pmu"] = is_this_machine() ? pmu_status() : "unknown: synthetic topology";
  j["dsa_work_queues"] = is_this_machine() ? dsa_work_queues() : std::vector<std::string>{};
  return j;
}

std::string pmu_status() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return "available";
  }
  int err = errno;
  if (err == EACCES || err == EPERM)
    return std::string("unavailable: perf_event_open refused (") + std::strerror(err) +
           "); lower /proc/sys/kernel/perf_event_paranoid";
  return std::string("unavailable: no hardware cycle counter (perf_event_open: ") + std::strerror(err) + ")";
}

std::vector<std::string> dsa_work_queues() {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator("/sys/bus/dsa/devices", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("wq", 0) == 0) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace bw
