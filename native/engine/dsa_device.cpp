#include "engine/dsa_device.hpp"

#include <cpuid.h>
#include <fcntl.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.hpp"

#ifdef BANDWALL_HAVE_ACCEL_CONFIG
#include <accel-config/libaccel_config.h>
#endif

namespace bw::dsa {
namespace {

// CPUID.(EAX=7,ECX=0):ECX bit 28 MOVDIR64B, bit 29 ENQCMD.
bool cpu_has(unsigned bit) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (c >> bit) & 1u;
}

__attribute__((target("enqcmd"))) bool enqcmd(void* portal, const Descriptor& d) {
  return _enqcmd(portal, &d) == 0;  // ZF set: the shared work queue did not accept it
}

__attribute__((target("movdir64b"))) void movdir64b(void* portal, const Descriptor& d) {
  _mm_sfence();  // the cleared completion record is visible before the device can write it
  _movdir64b(portal, &d);
}

class DevicePortal final : public Portal {
 public:
  DevicePortal(const WorkQueue& wq, void* portal, int fd) : wq_(wq), portal_(portal), fd_(fd) {}
  ~DevicePortal() override {
    munmap(portal_, 4096);
    close(fd_);
  }
  bool submit(const Descriptor& d) override {
    if (!wq_.dedicated) return enqcmd(portal_, d);
    movdir64b(portal_, d);
    return true;
  }
  bool dedicated() const override { return wq_.dedicated; }
  std::size_t capacity() const override { return wq_.size; }
  std::uint32_t max_transfer() const override { return wq_.max_transfer; }
  nlohmann::json info() const override {
    return {{"work_queue", wq_.path},
            {"mode", wq_.dedicated ? "dedicated" : "shared"},
            {"capacity", wq_.size},
            {"max_transfer_bytes", wq_.max_transfer},
            {"verified_on_hardware", false}};
  }

 private:
  WorkQueue wq_;
  void* portal_;
  int fd_;
};

}  // namespace

Discovery discover() {
  Discovery r;
#ifndef BANDWALL_HAVE_ACCEL_CONFIG
  r.reason = "built without libaccel-config";
  return r;
#else
  if (access("/dev/dsa", F_OK) != 0) {
    r.reason = "no enabled work queue under /dev/dsa";
    return r;
  }
  accfg_ctx* ctx = nullptr;
  if (accfg_new(&ctx) != 0) {
    r.reason = "libaccel-config could not read the idxd devices";
    return r;
  }
  std::string denied;
  accfg_device* dev;
  accfg_device_foreach(ctx, dev) {
    if (std::strncmp(accfg_device_get_devname(dev), "dsa", 3) != 0) continue;
    accfg_wq* wq;
    accfg_wq_foreach(dev, wq) {
      if (accfg_wq_get_state(wq) != ACCFG_WQ_ENABLED || accfg_wq_get_type(wq) != ACCFG_WQT_USER) continue;
      char path[256];
      if (accfg_wq_get_user_dev_path(wq, path, sizeof path) != 0) continue;
      if (access(path, R_OK | W_OK) != 0) {
        denied = path;
        continue;
      }
      r.found = true;
      r.wq = {path, accfg_wq_get_mode(wq) == ACCFG_WQ_DEDICATED, static_cast<std::size_t>(accfg_wq_get_size(wq)),
              static_cast<std::uint32_t>(std::min<std::uint64_t>(accfg_wq_get_max_transfer_size(wq), 1u << 31))};
      break;
    }
    if (r.found) break;
  }
  accfg_unref(ctx);
  if (!r.found)
    r.reason = denied.empty() ? "no enabled work queue under /dev/dsa" : "no permission to open " + denied;
  else if (!cpu_has(r.wq.dedicated ? 28 : 29)) {
    r.found = false;
    r.reason = std::string("the CPU lacks ") +
               (r.wq.dedicated ? "MOVDIR64B for the dedicated" : "ENQCMD for the shared") + " work queue " + r.wq.path;
  }
  return r;
#endif
}

std::unique_ptr<Portal> open_device(const WorkQueue& wq) {
  int fd = open(wq.path.c_str(), O_RDWR);
  if (fd < 0) throw RunError("cannot open " + wq.path + ": " + std::strerror(errno));
  void* p = mmap(nullptr, 4096, PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    close(fd);
    throw RunError("cannot map the portal of " + wq.path + ": " + std::strerror(e));
  }
  return std::make_unique<DevicePortal>(wq, p, fd);
}

}  // namespace bw::dsa
