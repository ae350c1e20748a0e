// Memory placement (a row of placement_policies(), common/policies.hpp: first-touch, serial,
// bind:N, interleave[:L], preferred:N) with its nodes, and the page map of an array. Apart from the
// policy, the page size asked for: huge (madvise MADV_HUGEPAGE: transparent huge pages of 2 MiB
// where the kernel allows them), base (MADV_NOHUGEPAGE: 4 KiB pages) or system (whatever
// /sys/kernel/mm/transparent_hugepage/enabled says).
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/policies.hpp"

namespace bw {

enum class Pages { System, Huge, Base };

// "huge", "base" or "system"; throws UsageError for anything else.
Pages parse_pages(const std::string& text);
// The page sizes a run may ask for, each with what it means (--pages; the manifest's "pages").
struct PageKind {
  const char* name;
  Pages pages;
  const char* help;
};
const std::vector<PageKind>& page_kinds();
std::string to_string(Pages p);

struct Placement {
  const PlacementPolicy* policy = &placement_policies()[0];  // first-touch
  std::vector<int> nodes;                                    // for bind, interleave, preferred
  Pages pages = Pages::System;

  // Throws UsageError for unknown words or NUMA nodes that do not exist.
  static Placement parse(const std::string& text);
  std::string str() const;
  // True when the kernel must initialise from the master thread only.
  bool serial_init() const { return policy->serial_init; }
  std::string_view name() const { return policy->name; }
};

// Page-aligned memory of bytes, not yet touched, with the placement's memory policy applied.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::size_t bytes, const Placement& placement);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Share of the pages of [ptr, ptr+bytes) on each NUMA node ("0", "1", ...) and "absent" for pages
// not yet present. Each base page is asked for (move_pages), so transparent huge pages count by
// the 4 KiB pages they hold. At most max_pages evenly spaced pages are asked for. Pages move_pages
// calls absent although present (kernels that hide pages marked for a NUMA balancing hinting fault)
// are looked up in /proc/self/pagemap; "unknown" counts those whose node it does not reveal
// (frame numbers need CAP_SYS_ADMIN).
nlohmann::json page_map(const void* ptr, std::size_t bytes, std::size_t max_pages = 1 << 20);

// How the pages of each array moved between the map taken right after initialisation (placed) and
// one taken after the run (after), both of page_map(): {"numa_balancing": the kernel's setting
// (/proc/sys/kernel/numa_balancing: true, false, or null when unreadable), "page_map_after_run":
// after, "moved_share": {array: the net share of its present pages that changed node, half the
// summed change of the nodes' shares: a lower bound, as pages swapped between two nodes cancel},
// and "note" when a share above 5% moved}. An array with no page present at initialisation moves nothing: its map is
// after's (placed is updated to it).
nlohmann::json pages_moved(nlohmann::json& placed, const nlohmann::json& after);

// What the kernel granted of the page size asked for: the share of the resident memory of the
// mapping(s) holding [ptr, ptr+bytes) that is in transparent huge pages (AnonHugePages / Rss of
// /proc/self/smaps). Adjacent buffers with the same advice may share one mapping and so one share.
// null when nothing is resident or smaps cannot be read.
nlohmann::json huge_page_share(const void* ptr, std::size_t bytes);

// Size of a transparent huge page (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size; 2 MiB when
// it cannot be read).
std::size_t huge_page_bytes();

// How a buffer split among threads at byte offsets was made to keep each part on its thread's
// node whatever page size the kernel grants.
struct PageSplit {
  std::string mode;  // "huge pages whole to one thread", "base pages at N cuts" or "base pages throughout"
  std::size_t huge_page_bytes = 0;
  std::size_t smallest_part_bytes = 0;
  int pages_split = 0;  // huge-page ranges advised to base pages because a cut falls inside
  nlohmann::json to_json() const;
};

// Before first touch: cuts are the byte offsets (ascending, inside (0, bytes)) where one thread's
// part of [ptr, ptr+bytes) ends and the next one's begins. A huge page a cut falls inside would go
// whole to whichever thread touches it first, so it is advised to base pages (MADV_NOHUGEPAGE);
// when some part is smaller than a huge page, the whole buffer is. Huge pages that lie inside one
// part keep the advice the buffer had.
PageSplit split_pages_at(void* ptr, std::size_t bytes, const std::vector<std::size_t>& cuts);

}  // namespace bw
