#include "common/placement.hpp"

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <filesystem>
#include <fstream>
#include <optional>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/smaps.hpp"
#include "common/topology.hpp"

namespace bw {
namespace {

int parse_node(const std::string& text, const std::string& whole) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("placement '" + whole + "' needs a NUMA node number, got '" + text + "'");
  if (text.size() > 6) throw UsageError("NUMA node " + text + " in placement '" + whole + "' does not exist");
  int node = std::stoi(text);
  auto nodes = Topology::instance().node_os_indexes();
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) {
    throw UsageError("NUMA node " + text + " in placement '" + whole + "' does not exist (nodes: " + join(nodes) + ")");
  }
  return node;
}

}  // namespace

Placement Placement::parse(const std::string& text) {
  const auto colon = text.find(':');
  const bool has_arg = colon != std::string::npos;
  const std::string word = text.substr(0, colon), arg = has_arg ? text.substr(colon + 1) : "";
  for (const PlacementPolicy& row : placement_policies()) {
    if (row.name != word || (row.arg == PolicyArg::None && has_arg) || (row.arg == PolicyArg::Node && !has_arg))
      continue;
    Placement p;
    p.policy = &row;
    if (row.arg == PolicyArg::Node) p.nodes = {parse_node(arg, text)};
    if (row.arg == PolicyArg::NodesOrEvery && !has_arg) p.nodes = Topology::instance().node_os_indexes();
    if (row.arg == PolicyArg::NodesOrEvery && has_arg) {
      std::stringstream ss(arg);
      std::string item;
      while (std::getline(ss, item, ',')) p.nodes.push_back(parse_node(item, text));
      if (p.nodes.empty()) throw UsageError("placement '" + text + "' names no NUMA node");
    }
    return p;
  }
  throw UsageError("unknown placement '" + text + "' (use " + placement_syntax() + ")");
}

std::string Placement::str() const {
  return policy->arg == PolicyArg::None ? std::string(policy->name) : std::string(policy->name) + ":" + join(nodes);
}

namespace {

// Maps bytes of anonymous memory; from 2 MiB on, aligned to 2 MiB so that transparent huge pages
// cover the whole buffer and a static split into 2 MiB multiples puts each huge page on the node of
// the thread that owns it (an unaligned buffer lets a huge page straddle two threads' parts and land
// on whichever node touches it first).
void* map_aligned(std::size_t bytes) {
  const std::size_t huge = std::size_t{2} << 20;
  std::size_t extra = bytes >= huge ? huge : 0;
  void* raw = mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) throw RunError("cannot map " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  if (!extra) return raw;
  auto start = reinterpret_cast<std::uintptr_t>(raw);
  auto aligned = (start + huge - 1) & ~(huge - 1);
  if (aligned > start) munmap(raw, aligned - start);
  if (std::size_t tail = start + bytes + extra - (aligned + bytes))
    munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

Buffer::Buffer(std::size_t bytes, const Placement& placement) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = map_aligned(bytes);
  ptr_ = p;
  const int mode = placement.policy->mode;
  // Advice only: where transparent huge pages are off ("never") the kernel keeps base pages;
  // huge_page_share() says what it granted.
  if (placement.pages == Pages::Huge) madvise(p, bytes, MADV_HUGEPAGE);
  if (placement.pages == Pages::Base) madvise(p, bytes, MADV_NOHUGEPAGE);
  if (mode >= 0) {
    if (numa_available() < 0) throw RunError("placement " + placement.str() + " needs NUMA support in the kernel");
    struct bitmask* mask = numa_allocate_nodemask();
    for (int n : placement.nodes) numa_bitmask_setbit(mask, static_cast<unsigned>(n));
    long rc = mbind(p, bytes, mode, mask->maskp, mask->size + 1, 0);
    int err = errno;
    numa_free_nodemask(mask);
    if (rc != 0) throw RunError("mbind for placement " + placement.str() + " failed: " + std::strerror(err));
  }
}

const std::vector<PageKind>& page_kinds() {
  static const std::vector<PageKind> kinds = {
      {"huge", Pages::Huge, "transparent huge pages asked for (madvise MADV_HUGEPAGE)"},
      {"base", Pages::Base, "4 KiB pages (madvise MADV_NOHUGEPAGE)"},
      {"system", Pages::System, "whatever /sys/kernel/mm/transparent_hugepage/enabled says"},
  };
  return kinds;
}

Pages parse_pages(const std::string& text) { return find_word(page_kinds(), text, "page size").pages; }

std::string to_string(Pages p) {
  for (const PageKind& k : page_kinds())
    if (k.pages == p) return k.name;
  return "?";
}

nlohmann::json huge_page_share(const void* ptr, std::size_t bytes) {
  const SmapsTotals t = smaps_totals(ptr, bytes);
  if (t.rss_bytes == 0) return nullptr;
  return static_cast<double>(t.anon_huge_bytes) / static_cast<double>(t.rss_bytes);
}

Buffer::~Buffer() {
  if (ptr_) munmap(ptr_, bytes_);
}

Buffer::Buffer(Buffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) munmap(ptr_, bytes_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

namespace {

// Node of each page frame, from the memory blocks the kernel lists under each node; empty when
// /sys does not say.
class FrameNodes {
 public:
  FrameNodes() {
    std::ifstream bs("/sys/devices/system/memory/block_size_bytes");
    std::string hex;
    if (!(bs >> hex)) return;
    block_ = std::stoull(hex, nullptr, 16);
    namespace fs = std::filesystem;
    std::error_code ec;
    for (auto& node : fs::directory_iterator("/sys/devices/system/node", ec)) {
      std::string name = node.path().filename();
      if (name.rfind("node", 0) != 0 || name.find_first_not_of("0123456789", 4) != std::string::npos) continue;
      int n = std::stoi(name.substr(4));
      for (auto& mem : fs::directory_iterator(node.path(), ec)) {
        std::string m = mem.path().filename();
        if (m.rfind("memory", 0) == 0 && m.size() > 6 && m.find_first_not_of("0123456789", 6) == std::string::npos)
          blocks_[std::stoull(m.substr(6))] = n;
      }
    }
  }
  int node(std::uint64_t pfn, std::size_t page) const {
    if (!block_) return -1;
    auto it = blocks_.find(pfn * page / block_);
    return it == blocks_.end() ? -1 : it->second;
  }

 private:
  std::uint64_t block_ = 0;
  std::map<std::uint64_t, int> blocks_;
};

// Status of a page move_pages could not resolve. Kernels whose page walk skips entries that
// automatic NUMA balancing has made inaccessible (a NUMA hinting fault pending) report such pages
// as not present (-ENOENT, base pages) or as special (-EFAULT, huge pages), as they do for untouched
// pages and the shared zero page. /proc/self/pagemap still shows the page as present and mapped
// by this process alone (the zero page is not), and, when privileged, its frame.
// Returns the node, -ENOENT for a page that holds no memory of this array, or -1 for present on an
// unknown node.
int resolve_missing(int fd, std::uintptr_t addr, std::size_t page, const FrameNodes& frames) {
  std::uint64_t entry = 0;
  if (fd < 0 || pread(fd, &entry, sizeof entry, static_cast<off_t>(addr / page * sizeof entry)) != sizeof entry)
    return -ENOENT;
  bool present = entry >> 63 & 1, swapped = entry >> 62 & 1, exclusive = entry >> 56 & 1;
  if (!present) return swapped ? -1 : -ENOENT;
  if (!exclusive) return -ENOENT;
  std::uint64_t pfn = entry & ((std::uint64_t{1} << 55) - 1);
  int n = pfn ? frames.node(pfn, page) : -1;
  return n >= 0 ? n : -1;
}

}  // namespace

namespace {

// The shares of a page map's NUMA nodes among its present pages (absent and unknown left out).
std::map<std::string, double> node_shares(const nlohmann::json& map) {
  std::map<std::string, double> out;
  double total = 0;
  for (const auto& [key, share] : map.items())
    if (key != "absent" && key != "unknown" && share.is_number()) out[key] = share.get<double>(), total += out[key];
  for (auto& [key, share] : out) share = total > 0 ? share / total : 0.0;
  return out;
}

}  // namespace

nlohmann::json pages_moved(nlohmann::json& placed, const nlohmann::json& after) {
  nlohmann::json out = {{"page_map_after_run", after}, {"moved_share", nlohmann::json::object()}};
  std::ifstream f("/proc/sys/kernel/numa_balancing");
  int balancing = -1;
  out["numa_balancing"] = (f >> balancing) ? nlohmann::json(balancing != 0) : nlohmann::json(nullptr);
  std::string moved;
  for (const auto& [name, map] : after.items()) {
    const auto before = placed.contains(name) ? node_shares(placed[name]) : std::map<std::string, double>{};
    if (before.empty()) {
      placed[name] = map;
      continue;
    }
    auto now = node_shares(map);
    double diff = 0;
    for (const auto& [node, share] : before) diff += std::abs(share - (now.count(node) ? now[node] : 0.0));
    for (const auto& [node, share] : now)
      if (!before.count(node)) diff += share;
    const double share = std::clamp(0.5 * diff, 0.0, 1.0);
    out["moved_share"][name] = share;
    if (share > 0.05) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", 100 * share);
      moved += (moved.empty() ? "" : ", ") + name + " " + pct;
    }
  }
  if (!moved.empty())
    out["note"] =
        "pages moved to other nodes during the run (" + moved + ")" +
        (balancing > 0 ? ": the kernel's automatic NUMA balancing (kernel.numa_balancing=" + std::to_string(balancing) +
                             ") migrates pages toward the threads that read them, so page_map is the "
                             "placement as initialised and page_map_after_run what the timed steps ended on"
                       : std::string());
  return out;
}

nlohmann::json page_map(const void* ptr, std::size_t bytes, std::size_t max_pages) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto base = reinterpret_cast<std::uintptr_t>(ptr) & ~(page - 1);
  std::size_t total = (reinterpret_cast<std::uintptr_t>(ptr) + bytes - base + page - 1) / page;
  std::size_t step = std::max<std::size_t>(1, (total + max_pages - 1) / max_pages);
  std::vector<void*> pages;
  for (std::size_t i = 0; i < total; i += step) pages.push_back(reinterpret_cast<void*>(base + i * page));
  std::vector<int> status(pages.size(), 0);
  std::map<std::string, std::size_t> count;
  const std::size_t chunk = 16384;
  for (std::size_t i = 0; i < pages.size(); i += chunk) {
    std::size_t n = std::min(chunk, pages.size() - i);
    if (move_pages(0, n, pages.data() + i, nullptr, status.data() + i, 0) != 0)
      throw RunError(std::string("move_pages failed: ") + std::strerror(errno));
  }
  int pagemap = -1;
  std::optional<FrameNodes> frames;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    int s = status[i];
    if (s == -ENOENT || s == -EFAULT) {
      if (!frames) {
        frames.emplace();
        pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
      }
      s = resolve_missing(pagemap, reinterpret_cast<std::uintptr_t>(pages[i]), page, *frames);
    }
    if (s >= 0)
      ++count[std::to_string(s)];
    else if (s == -1)
      ++count["unknown"];
    else
      ++count["absent"];
  }
  if (pagemap >= 0) close(pagemap);
  nlohmann::json out = nlohmann::json::object();
  for (auto& [k, c] : count) out[k] = static_cast<double>(c) / static_cast<double>(pages.size());
  return out;
}

}  // namespace bw

namespace bw {

std::size_t huge_page_bytes() {
  static const std::size_t size = [] {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    std::size_t v = 0;
    return in >> v && v > 0 ? v : std::size_t{2} << 20;
  }();
  return size;
}

nlohmann::json PageSplit::to_json() const {
  return {{"mode", mode},
          {"huge_page_bytes", huge_page_bytes},
          {"smallest_part_bytes", smallest_part_bytes},
          {"huge_pages_split", pages_split}};
}

PageSplit split_pages_at(void* ptr, std::size_t bytes, const std::vector<std::size_t>& cuts) {
  PageSplit out;
  out.huge_page_bytes = huge_page_bytes();
  const std::size_t huge = out.huge_page_bytes;
  std::size_t prev = 0, smallest = bytes;
  for (std::size_t c : cuts) {
    smallest = std::min(smallest, c - prev);
    prev = c;
  }
  smallest = std::min(smallest, bytes - prev);
  out.smallest_part_bytes = smallest;
  auto* base = static_cast<char*>(ptr);
  const auto start = reinterpret_cast<std::uintptr_t>(ptr);
  if (!cuts.empty() && smallest < huge) {
    madvise(ptr, bytes, MADV_NOHUGEPAGE);
    out.mode = "base pages throughout: a thread's part is smaller than a huge page";
    return out;
  }
  for (std::size_t c : cuts) {
    const std::uintptr_t at = start + c;
    if (at % huge == 0) continue;
    const std::uintptr_t lo = std::max(at / huge * huge, start), hi = std::min(lo + huge, start + bytes);
    if (lo % huge == 0 && hi - lo == huge) {
      madvise(base + (lo - start), hi - lo, MADV_NOHUGEPAGE);
      ++out.pages_split;
    }
  }
  out.mode =
      out.pages_split ? "base pages in the huge pages that thread parts share" : "huge pages whole to one thread";
  return out;
}

}  // namespace bw
