#include "common/driver.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/decide.hpp"
#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/size_class.hpp"

namespace bw::driver {

json Facts::to_json() const {
  json arrays_j = json::array();
  for (const ArrayRole& a : arrays) arrays_j.push_back({{"name", a.name}, {"read", a.read}, {"written", a.written}});
  return {{"tool", tool},
          {"executable", executable},
          {"unit", unit},
          {"figure", figure},
          {"arrays", arrays_j},
          {"helper_cpus", helper_cpus},
          {"steps_are_reps", steps_are_reps},
          {"variant_key", variant_key}};
}

std::vector<double> Timing::rates() const {
  std::vector<double> out;
  for (std::size_t i = 0; i < seconds.size(); ++i)
    out.push_back(seconds[i] > 0 ? amounts[i] / seconds[i] / scale : 0.0);
  return out;
}

int thread_rounds(int reps, int candidates, bool steps_are_reps) {
  if (!steps_are_reps) return decide::rule().rounds;
  const int affordable = candidates > 0 ? (reps - 1) / candidates : 0;
  if (affordable < 1)
    throw UsageError("--threads auto times one step per candidate thread count and round: the steps must be at least " +
                     std::to_string(candidates + 1) + " here, got " + std::to_string(reps));
  return std::min(affordable, decide::rule().rounds);
}

namespace {

double rate(Measurement& m, const Step& s) {
  const Done d = m.step(s);
  return d.seconds > 0 ? d.amount / d.seconds / m.facts().unit_scale : 0.0;
}

struct ThreadsChosen {
  Binding binding;
  std::vector<int> seen;
  int trials = 0;
  json record;
};

// --threads auto: every candidate team in interleaved rounds, the first rotating; the fewest the
// decision rule shows to be enough (common/decide.hpp), else every thread.
ThreadsChosen choose_threads(Measurement& m, const std::vector<Binding>& candidates, int rounds) {
  std::vector<int> counts;
  for (const Binding& b : candidates) counts.push_back(b.threads);
  std::vector<std::vector<double>> rates(counts.size());
  ThreadsChosen out;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < counts.size(); ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(r)) % counts.size();
      apply_binding(candidates[i]);
      rates[i].push_back(rate(m, {0, counts[i], Phase::Threads, false}));
      ++out.trials;
    }
  const decide::Choice c = decide::choose_fewest(counts, rates, m.facts().unit);
  out.binding = candidates[c.chosen];
  out.seen = apply_binding(out.binding);
  out.record = c.record;
  out.record.erase("rates");
  json cands = json::array();
  for (std::size_t i = 0; i < counts.size(); ++i) cands.push_back({{"threads", counts[i]}, {"rates", rates[i]}});
  out.record["how"] = "feedback";
  out.record["rounds"] = rounds;
  out.record["unit"] = m.facts().unit;
  out.record["trial_iterations"] = out.trials;
  out.record["max_threads"] = counts.back();
  out.record["candidates"] = cands;
  out.record["note"] = m.trial_note();
  return out;
}

// Every array's page map (common/placement.hpp) as it is now.
json page_maps(Measurement& m) {
  json maps = json::object();
  for (const auto& [name, b] : m.buffers()) maps[name] = page_map(b->data(), b->bytes(), m.page_map_samples());
  return maps;
}

// The whole run of a measurement whose steps are its repetitions: every step it advanced on its data
// over the seconds from the end of its data's first initialisation to its last step, so that what
// it spent choosing counts (the variant's trials and the data's initialisation after them, the knob
// races, the depth's race or check, the threads' trials): what a run of the same steps takes, beside
// the timed steps' own rate.
json whole_run(const Facts& facts, const Timing& timed, int steps, int timed_steps, double seconds) {
  double amount = 0, timed_seconds = 0;
  for (double a : timed.amounts) amount += a;
  for (double s : timed.seconds) timed_seconds += s;
  const double per_step = amount / timed_steps;
  return {{"steps", steps},
          {"seconds", seconds},
          {facts.figure, per_step * steps / seconds / facts.unit_scale},
          {"settling_steps", steps - timed_steps},
          {"settling_seconds", std::max(0.0, seconds - timed_seconds)}};
}

}  // namespace

json run(Measurement& m, const Request& req) {
  const Facts& facts = m.facts();
  Binding binding = req.binding ? *req.binding : req.threads.resolve();
  const bool automatic = req.threads.automatic();
  // The candidate teams are resolved before the calling thread is bound (it then may use one CPU).
  const auto candidates = automatic ? req.threads.candidates(binding.threads) : std::vector<Binding>{};
  const int rounds = automatic ? thread_rounds(req.reps, static_cast<int>(candidates.size()), facts.steps_are_reps) : 0;
  std::vector<int> seen = apply_binding(binding);
  int threads = binding.threads;

  m.allocate(req.placement, threads);
  m.initialise(threads);
  // Where the placement put the pages, read before anything else runs: the kernel's automatic NUMA
  // balancing may move pages toward the threads that read them later, so a map taken only after the
  // timed steps shows a serial initialisation spread over the nodes.
  json placed = page_maps(m);
  const auto begun = std::chrono::steady_clock::now();  // the whole run's seconds, from here

  // The variant, on the run's own data; its trials leave the data to be initialised again.
  const std::string key = m.variant_key();
  std::string size = "core";
  if (!key.empty()) {
    size = size_class(m.working_set_bytes(), binding.cpus);
    bool trials = false;
    VariantRequest vr{req.isa, key, {}, facts.unit, size};
    m.choose_variant(vr, [&](const std::string&) {
      trials = true;
      m.variant_changed(threads, false);
      return rate(m, {0, m.cases()[0].one_thread ? 1 : threads, Phase::Variant, false});
    });
    if (trials) m.initialise(threads);
  }
  m.variant_changed(threads, true);

  json threads_choice;
  int steps = m.settling_steps();  // since the last initialisation
  int timed_reps = req.reps - (facts.steps_are_reps ? steps : 0);
  if (automatic) {
    ThreadsChosen c = choose_threads(m, candidates, rounds);
    binding = c.binding, seen = c.seen, threads = c.binding.threads, threads_choice = c.record;
    steps += c.trials;
    if (facts.steps_are_reps) timed_reps -= c.trials;
  }
  m.ready(threads);

  const std::vector<Case> cases = m.cases();
  std::vector<Timing> timings;
  for (std::size_t i = 0; i < cases.size(); ++i) timings.push_back({cases[i].name, facts.unit_scale, {}, {}});
  // Cases interleaved, repetition by repetition; a measurement whose steps are its repetitions may
  // advance several in one call.
  const int per_call = facts.steps_are_reps ? std::max(1, m.steps_per_call()) : 1;
  for (int left = timed_reps; left > 0;) {
    const int count = std::min(per_call, left);
    left -= count;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Done d =
          m.step({i, cases[i].one_thread ? 1 : threads, Phase::Timed, left == 0 && i + 1 == cases.size(), count});
      timings[i].seconds.push_back(d.seconds);
      timings[i].amounts.push_back(d.amount);
    }
  }
  const double run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  steps += timed_reps;

  json validation = m.validate(steps, threads);

  json config = m.config();
  config["threads"] = threads;
  config["isa_requested"] = req.isa;
  if (!key.empty()) config["isa_choice"] = m.variant_record();
  if (!threads_choice.is_null()) config["threads_choice"] = threads_choice;
  json result = m.result(timings);
  if (facts.steps_are_reps && timed_reps > 0 && run_seconds > 0)
    result["run"] = whole_run(facts, timings[0], steps, timed_reps, run_seconds);
  result["threads_ran_on"] = seen;
  json rec = make_record(facts.tool, config, result, validation,
                         provenance(threads, binding.cpus, binding.policy,
                                    m.buffers().empty() ? "none" : req.placement.str(), m.sizes(), req.reps));
  const auto bufs = m.buffers();
  if (!bufs.empty()) {
    json huge = json::object();
    for (const auto& [name, b] : bufs) huge[name] = huge_page_share(b->data(), b->bytes());
    const json moved = pages_moved(placed, page_maps(m));
    json placement = {{"policy", req.placement.str()},
                      {"pages", to_string(req.placement.pages)},
                      {"huge_page_share", huge},
                      {"page_map", placed}};
    placement.update(moved);
    placement.update(m.placement_extra());
    rec["placement"] = placement;
  }
  return rec;
}

}  // namespace bw::driver
