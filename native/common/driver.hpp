// The one measuring sequence of every measurement (bandwall-stream, bandwall-pipeline,
// bandwall-iso3dfd, bandwall-peak): a measurement implements the interface below (its arrays, their
// allocation under a placement and initialisation, one timed step, its validation, its config and
// result fields) and states its facts as data; run() does the rest for all of them alike:
//
//   bind the threads; allocate and initialise; choose the instruction-set variant (the table, the
//   model, or interleaved trials on the run's own data under the decision rule, after which the
//   data are initialised again), and let the settings that follow the variant (blocks) follow it;
//   choose the threads (--threads auto: interleaved trials under the decision rule, the trial steps
//   counted by the validation); time the repetitions; validate; map the pages; build the record.
//
// Adding a measurement is one class and one main() that parses its options and calls run().
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/dispatch.hpp"
#include "common/harness.hpp"
#include "common/isa_choice.hpp"
#include "common/placement.hpp"
#include "common/record.hpp"

namespace bw::driver {

// An array a measurement uses, and what its step does with it.
struct ArrayRole {
  std::string name;
  bool read = false, written = false;
};

// What a measurement is, as data: the manifest prints these for the front end
// (python/bandwall/core/manifest.py), so no Python module types them.
struct Facts {
  std::string tool;         // the record's "tool"
  std::string executable;   // bandwall-stream
  std::string unit;         // of the figure of merit: GB/s, MPoints/s, GFlop/s
  double unit_scale = 1e9;  // amount / seconds / unit_scale is a rate in unit
  std::string figure;       // the result field the front end reads as the figure of merit
  std::vector<ArrayRole> arrays;
  bool helper_cpus = false;     // takes CPUs beyond its threads (a copy engine's helpers)
  bool steps_are_reps = false;  // the run's steps are its repetitions: trials are taken from them
  std::string variant_key;      // the pattern of its key in the table of measured choices ("" none)
  json to_json() const;
};

// One thing a measurement times; most have one, the FMA peak four (precision x one core or all).
struct Case {
  std::string name;
  bool one_thread = false;  // on the first thread of the team only
};

enum class Phase { Variant, Threads, Timed };

struct Step {
  std::size_t case_index = 0;
  int threads = 1;
  Phase phase = Phase::Timed;
  bool last = false;  // the last timed step
  int count = 1;      // time steps this call advances (steps_are_reps: more than one per sweep)
};

// What one step did: its seconds (what the step itself times, without its own bookkeeping) and its
// amount of work in the unit's numerator (bytes, points, flops).
struct Done {
  double seconds = 0, amount = 0;
};

// The timed repetitions of one case.
struct Timing {
  std::string name;
  double scale = 1e9;
  std::vector<double> seconds, amounts;
  std::vector<double> rates() const;
};

class Measurement {
 public:
  virtual ~Measurement() = default;
  virtual const Facts& facts() const = 0;

  // Variants (none by default). choose makes the variant a request means active: the measurement's
  // dispatch (choose_with below) times one with trial(name) when it must.
  virtual std::string variant_key() const { return ""; }
  virtual std::string choose_variant(const VariantRequest& request,
                                     const std::function<double(const std::string&)>& trial) {
    (void)request, (void)trial;
    return "";
  }
  virtual json variant_record() const { return json(); }
  // The settings that belong to the variant now active (iso3dfd's blocks): called after every
  // change of variant, during its trials (final false) as after the choice (final true; also when
  // the measurement has no variants).
  virtual void variant_changed(int threads, bool final) { (void)threads, (void) final; }
  // Steps the measurement advanced on its data while choosing those settings (after the final
  // variant_changed), which the run counts as its own (steps_are_reps: taken from the repetitions).
  virtual int settling_steps() const { return 0; }

  // Bytes the steps touch (0: none, the data stay in registers): the size class of the choice.
  virtual std::uint64_t working_set_bytes() const = 0;
  virtual void allocate(const Placement& placement, int threads) = 0;
  virtual void initialise(int threads) = 0;
  // Its arrays, for the page maps (none by default).
  virtual std::vector<std::pair<std::string, const Buffer*>> buffers() const { return {}; }
  // After allocation and every choice, before the timed steps (iso3dfd prints its header here).
  virtual void ready(int threads) { (void)threads; }

  // Time steps one timed call may advance together (iso3dfd's temporal blocking: the depth of a
  // sweep), known once the settings that follow the variant are chosen; the driver gives each
  // timed call up to this many (Step::count), the last call the rest.
  virtual int steps_per_call() const { return 1; }

  virtual std::vector<Case> cases() const { return {Case{}}; }
  virtual Done step(const Step& s) = 0;

  // Checks the answer after `steps` steps since the last initialisation; RunError on failure.
  virtual json validate(int steps, int threads) = 0;
  virtual json config() const = 0;
  virtual json result(const std::vector<Timing>& timings) const = 0;
  virtual json sizes() const = 0;
  // Extra fields of the record's placement part (iso3dfd's init and page split).
  virtual json placement_extra() const { return json::object(); }
  virtual std::size_t page_map_samples() const { return 4096; }
  // What the thread trials share with the run, for config.threads_choice.note.
  virtual std::string trial_note() const { return "the data were placed by the largest team before the trials"; }
};

// What run() is asked for.
struct Request {
  ThreadOptions threads;
  // The team when the measurement resolves it itself (the pipeline leaves CPUs to its helpers);
  // otherwise threads.resolve(). --threads auto tries teams up to its size.
  std::optional<Binding> binding;
  Placement placement;
  std::string isa = "auto";
  int reps = 1;  // timed repetitions (steps_are_reps: the run's steps, trials included)
};

// The sequence above; returns the record.
json run(Measurement& m, const Request& r);

// The thread trials --threads auto can afford in a run whose repetitions are its steps: the
// decision rule's rounds when the steps leave one timed step after them, fewer otherwise; a run too
// short for one round is refused (UsageError).
int thread_rounds(int reps, int candidates, bool steps_are_reps);

// For measurements whose variants are a common/dispatch.hpp Dispatch.
template <class Variant>
std::string choose_with(Dispatch<Variant>& d, const VariantRequest& request,
                        const std::function<double(const std::string&)>& trial) {
  return d
      .choose(request,
              [&](const Variant& v) {
                d.use(v.isa);
                return trial(v.isa);
              })
      .isa;
}

}  // namespace bw::driver
