// The DSA engines: the device's work queue (dsa) and the software model of one (dsa-model, for
// tests of the submission path on machines without DSA). Both copy blocks with Cache Control set,
// so the destination is written into the last-level cache.
#include <cstdlib>

#include "common/errors.hpp"
#include "engine/backends.hpp"
#include "engine/dsa_device.hpp"
#include "engine/dsa_model.hpp"

namespace bw::engine {
namespace {

class DsaEngine final : public Engine {
 public:
  DsaEngine(std::unique_ptr<dsa::Portal> p, bool model) : portal_(std::move(p)), model_(model) {
    if (portal_->dedicated()) credits_ = std::make_unique<dsa::Credits>(portal_->capacity());
  }
  std::unique_ptr<Queue> open(int) override {
    return std::make_unique<dsa::DsaQueue>(*portal_, credits_.get(), depth_, true);
  }
  bool supports(Kind k) const override { return k == Kind::Copy; }
  nlohmann::json info() const override {
    nlohmann::json j = portal_->info();
    j["what"] = model_ ? "software model of a DSA work queue (tests the submission code; no speed-up)"
                       : "DSA MEMMOVE with Cache Control into the last-level cache (unverified on hardware)";
    j["hardware_verified"] = false;
    return j;
  }
  void set_depth(int d) { depth_ = d; }

 private:
  std::unique_ptr<dsa::Portal> portal_;
  std::unique_ptr<dsa::Credits> credits_;
  bool model_;
  int depth_ = 4;
};

}  // namespace

Backend dsa_backend() {
  return {"dsa",
          "Intel DSA work queue (idxd): MEMMOVE into the last-level cache",
          [] {
            auto d = dsa::discover();
            return Availability{d.found, d.reason};
          },
          [](const Config& c) -> std::unique_ptr<Engine> {
            auto d = dsa::discover();
            if (!d.found) throw UsageError("dsa: unavailable: " + d.reason);
            auto e = std::make_unique<DsaEngine>(dsa::open_device(d.wq), false);
            e->set_depth(c.depth);
            return e;
          },
          {"copy"},
          false,
          "an Intel DSA device with an enabled work queue (idxd driver, /dev/dsa)"};
}

Backend dsa_model_backend() {
  return {"dsa-model",
          "software model of a DSA work queue, for testing the DSA path (no speed-up)",
          [] {
            return Availability{true, ""};
          },
          [](const Config& c) -> std::unique_ptr<Engine> {
            dsa::ModelOptions o;
            o.fault_every = 61;  // exercise partial completions in every run
            o.dedicated = c.mode == "dedicated";
            auto e = std::make_unique<DsaEngine>(std::make_unique<dsa::ModelPortal>(o), true);
            e->set_depth(c.depth);
            return e;
          },
          {"copy"},
          false,
          "",
          true};
}

}  // namespace bw::engine
