#include "engine/measurement.hpp"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/args.hpp"
#include "common/errors.hpp"

namespace bw::pipeline {

namespace {

stream::RunOptions with_team(const Options& o, const Setup& s) {
  stream::RunOptions r = o;
  r.reps = std::to_string(s.reps);
  return r;
}

}  // namespace

Measurement::Measurement(const Options& o, Setup s)
    : stream::Measurement(with_team(o, s), s.binding.cpus.empty() ? allowed_cpus() : s.binding.cpus),
      o_(o),
      s_(std::move(s)) {
  facts_ = stream::Measurement::facts();
  facts_.executable = "bandwall-pipeline";
  facts_.helper_cpus = true;
  inputs_ = engine_inputs(*s_.plan.kernel, s_.plan.strategy);
  label_ = "pipelined ";
}

Measurement::~Measurement() = default;

void Measurement::allocate(const Placement& p, int threads) {
  stream::Measurement::allocate(p, threads);
  const int per_thread = static_cast<int>(inputs_.size());
  engine::Config cfg{s_.engine_cpus, threads * per_thread, s_.plan.depth, s_.engine_mode};
  engine_ = engine::make(o_.engine, cfg);
  if (!engine_->supports(s_.plan.kind)) throw UsageError("engine " + o_.engine + " has no " + s_.engine_mode + " mode");
  lanes_ = std::vector<Lane>(static_cast<std::size_t>(threads));
  lane_times_ = std::vector<LaneTimes>(static_cast<std::size_t>(threads));
  partial_ = std::vector<double>(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
#pragma omp critical
    open_lane(lanes_[static_cast<std::size_t>(t)], *engine_, s_.plan, t * per_thread);
  }
}

driver::Done Measurement::step(const driver::Step& st) {
  // The chunk functions of the variant now active: the plan follows the driver's choice.
  s_.plan.kernel = &kernel();
  const int team = team_ = st.threads;
  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num();
    const auto ti = static_cast<std::size_t>(t);
    auto [b, e] = stream::chunk(n_, t, team);
    partial_[ti] = run_chunk(s_.plan, x_, b, e, lanes_[ti], &lane_times_[ti]);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sum_ = 0;
  for (int t = 0; t < team; ++t) sum_ += partial_[static_cast<std::size_t>(t)];
  return {secs, moved()};
}

json Measurement::validate(int steps, int threads) {
  json v = stream::Measurement::validate(steps, threads);
  if (kernel().writes || team_ < 1) return v;
  double cpu_only = 0;
  for (int t = 0; t < team_; ++t) {
    auto [b, e] = stream::chunk(n_, t, team_);
    cpu_only += kernel().nt(x_, b, e, stream::kScalar);
  }
  const bool same = std::memcmp(&cpu_only, &sum_, sizeof(double)) == 0;
  v["cpu_only_dot"] = {{"pipelined", sum_}, {"cpu_only", cpu_only}, {"bit_identical", same}};
  v["method"] = v["method"].get<std::string>() + "; the pipelined dot against the CPU-only kernel's, bit for bit";
  if (!same) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "the pipelined dot %a differs from the CPU-only kernel's %a in its last bits", sum_,
                  cpu_only);
    throw RunError(std::string("validation of pipelined dot failed: ") + buf);
  }
  return v;
}

json Measurement::config() const {
  json c = stream::Measurement::config();
  c.update({{"pipelined", true},
            {"engine", o_.engine},
            {"engine_cpus", s_.engine_cpus},
            {"engine_mode", s_.engine_mode},
            {"engine_inputs", std::string(inputs_.begin(), inputs_.end())},
            {"strategy", strategy_name(s_.plan.strategy)},
            {"queue_depth", s_.plan.depth},
            {"queue_depth_default", s_.depth_default},
            {"block_bytes", s_.plan.block_elems * sizeof(double)}});
  return c;
}

json Measurement::result(const std::vector<driver::Timing>& t) const {
  json r = stream::Measurement::result(t);
  engine::QueueStats q;
  std::size_t blocks = 0, direct = 0;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    for (const auto& qu : lanes_[i].queues) {
      const auto& a = qu->stats();
      q.requests += a.requests, q.bytes += a.bytes, q.waits += a.waits, q.wait_seconds += a.wait_seconds;
      q.retries += a.retries, q.page_faults += a.page_faults;
    }
    blocks += lane_times_[i].blocks, direct += lane_times_[i].direct_blocks;
  }
  double total_s = 0;
  for (double s : t[0].seconds) total_s += s;
  const double team = static_cast<double>(team_);
  r["engine"] = {{"requests", q.requests},
                 {"bytes", q.bytes},
                 {"waits", q.waits},
                 {"wait_seconds", q.wait_seconds},
                 {"wait_share", total_s > 0 ? q.wait_seconds / (total_s * team) : 0.0},
                 {"retries", q.retries},
                 {"page_faults", q.page_faults},
                 {"blocks", blocks},
                 {"direct_blocks", direct},
                 {"info", engine_->info()}};
  return r;
}

}  // namespace bw::pipeline
