// Finding a DSA work queue through libaccel-config and submitting to its portal with ENQCMD
// (shared work queue) or MOVDIR64B (dedicated). Unverified on hardware: the machines this was
// written on have no DSA; the submission code above the portal is tested against the model.
#pragma once
#include <memory>
#include <string>

#include "engine/dsa_queue.hpp"

namespace bw::dsa {

struct WorkQueue {
  std::string path;  // /dev/dsa/wqD.Q
  bool dedicated = false;
  std::size_t size = 0;
  std::uint32_t max_transfer = 0;
};

// The first enabled user work queue this process may open, or why there is none
// ("no enabled work queue under /dev/dsa", "built without libaccel-config", ...).
struct Discovery {
  bool found = false;
  WorkQueue wq;
  std::string reason;
};
Discovery discover();

// Opens and maps the work queue's portal; RunError when it cannot.
std::unique_ptr<Portal> open_device(const WorkQueue& wq);

}  // namespace bw::dsa
