#include "iso3dfd/output.hpp"

#include <cstdio>

#include "common/topology.hpp"
#include "iso3dfd/autoblocks.hpp"
#include "iso3dfd/in_l2.hpp"
#include "iso3dfd/rows.hpp"

namespace bw::iso3dfd {

double mpoints_per_s(const Options& o, int steps, double seconds) {
  if (steps <= 0 || seconds <= 0) return 0.0;
  return static_cast<double>(o.grid.interior()) * steps / seconds / 1e6;
}

json traffic_model(const Options& o, const TimeBlockModel& t) {
  const std::size_t halo = o.grid.halo();
  auto eff = [halo](std::size_t block, std::size_t n) { return std::min(block, n - 2 * halo); };
  const double b1 = static_cast<double>(eff(o.blocks.b1, o.grid.n1));
  const double b2 = static_cast<double>(eff(o.blocks.b2, o.grid.n2));
  const double b3 = static_cast<double>(eff(o.blocks.b3, o.grid.n3));
  const double h = 2.0 * o.grid.radius;
  const double window = window_bytes(o.grid, o.blocks, register_planes(o.grid.radius));
  // A block reads prev with its halo. Blocks follow each other along x, then y, then z: the y halo
  // was read by the previous row of blocks and comes back from the last-level cache (which holds a
  // row of blocks), the x halo is re-read unless blocks span whole rows, the z halo is re-read.
  const double x_factor = b1 + h >= static_cast<double>(o.grid.n1) ? 1.0 : (b1 + h) / b1;
  const double z_factor = (b3 + h) / b3;
  const double dram = 12.0 + 4.0 * x_factor * z_factor;
  const double l2 = 12.0 + 4.0 * (b1 + h) * (b2 + h) * (b3 + h) / (b1 * b2 * b3);
  json model = {{"bytes_per_point_compulsory", kBytesPerPoint},
                {"bytes_per_point_dram_estimate", dram},
                {"bytes_per_point_into_l2_estimate", l2},
                {"window_bytes", window},
                {"l1_fills", l1_fills_json(l1_fills(o.grid, o.blocks, register_planes(o.grid.radius), o.l1d_bytes,
                                                    register_split(o.grid.radius), register_ring(o.grid.radius)),
                                           o.l1d_bytes)},
                {"l2_bytes", o.l2_bytes},
                {"l3_bytes", o.l3_bytes},
                {"time_block", t.to_json()},
                {"bytes_per_point_memory", t.depth > 1 ? t.memory_bytes_per_point : dram},
                {"assumption",
                 "next is read before it is written (no write-allocate); the window of prev stays in L2 "
                 "within a block; the last-level cache holds one row of blocks"}};
  if (const std::string& forced = Topology::instance().forced_caches(); !forced.empty())
    model["caches_forced"] = forced;
  return model;
}

namespace {

// The shape's operation mix as this core ran it (rows.hpp's incore_mix), beside the port model's
// cycles (port_cycles; 0: none).
json mix_json(const RowVariant& v, const RowShape& s, int radius, double port_cycles) {
  const IncoreMix m = incore_mix(v, s, radius);
  if (m.seconds_per_vector <= 0) return {{"unavailable", m.unavailable}};
  json out = {{"seconds_per_vector", m.seconds_per_vector},
              {"mpoints_per_s_per_core", v.lanes / m.seconds_per_vector / 1e6},
              {"method",
               "the loads, FMAs, adds and shuffles the shape issues per vector, run as independent operations from "
               "registers and a buffer in L1 on the master thread's core, timed against FMAs alone (no dependences, "
               "L1 misses or address arithmetic: the in-core roof this core reaches with this mix)"}};
  if (m.cycles_per_vector > 0) {
    out["cycles_per_vector"] = m.cycles_per_vector;
    out["clock_ghz"] = m.clock_ghz;
    if (port_cycles > 0) out["over_port_model"] = m.cycles_per_vector / port_cycles;
  } else {
    out["cycles"] = "unavailable: " + m.unavailable;
  }
  return out;
}

// The shape's block function itself with its data in L2 (iso3dfd/in_l2.hpp), beside its mix.
json in_l2_json(const RowShape& s, const Grid& g, std::uint64_t l2_bytes, const json& mix) {
  const KernelInL2 k = kernel_in_l2(s, g, l2_bytes);
  if (k.seconds_per_point <= 0) return {{"unavailable", k.unavailable}};
  json out = {{"mpoints_per_s_per_core", 1e-6 / k.seconds_per_point},
              {"seconds_per_point", k.seconds_per_point},
              {"block", {k.nx, k.ny, k.nz}},
              {"bytes", k.bytes},
              {"l2_bytes", l2_bytes},
              {"checked", true},
              {"max_rel_difference", k.max_rel_difference},
              {"method",
               "the shape's block function on a block of the run's rows whose data (prev with its halos, the rows of "
               "next and vel) fit in half of L2, "
               "called again and again on the master thread's core, the best of 5 timings; checked once against "
               "the generic variant's loops (its loads, L1 misses, address arithmetic and dependences, nothing "
               "from beyond L2)"}};
  if (mix.contains("mpoints_per_s_per_core"))
    out["over_mix"] = mix["mpoints_per_s_per_core"].get<double>() * k.seconds_per_point * 1e6;
  return out;
}

}  // namespace

json incore_model(const Grid& g, std::uint64_t l2_bytes, bool swept) {
  const int radius = g.radius;
  const RowVariant* v = find_row_variant(kernel_isa());
  const RowShape& s = swept ? swept_shape(radius) : active_shape(radius);
  const IncoreBound b = incore_bound(*v, cpuid(), &s, radius);
  const RowCounts c = s.counts_at(radius);
  const json mix = mix_json(*v, s, radius, b.cycles_per_vector);
  const json in_l2 = in_l2_json(s, g, l2_bytes, mix);
  if (b.cycles_per_vector <= 0) {
    json out = {{"unavailable", b.unavailable}, {"microarch", microarch_json()}};
    if (mix.contains("mpoints_per_s_per_core")) out["mix"] = mix;
    if (in_l2.contains("mpoints_per_s_per_core")) out["kernel_in_l2"] = in_l2;
    return out;
  }
  return {{"lanes", v->lanes},
          {"planes", s.planes},
          {"vectors", s.vectors},
          {"split", s.split},
          {"ring", s.ring},
          {"shape", shape_name(s)},
          {"per_vector", {{"loads", c.loads}, {"fmas", c.fmas}, {"adds", c.adds}, {"shuffles", c.shuffles}}},
          {"microarch", microarch_json()},
          {"ports_per_cycle",
           {{"loads", b.ports.loads},
            {"fma", b.ports.fma},
            {"add", b.ports.add},
            {"fp", b.ports.fp},
            {"vector_bits", v->lanes * 32}}},
          {"cycles_per_vector", b.cycles_per_vector},
          {"bound_by", b.bound_by},
          {"points_per_cycle_per_core", v->lanes / b.cycles_per_vector},
          {"mix", mix},
          {"kernel_in_l2", in_l2}};
}

void print_header(const Options& o, int threads, std::size_t allocated_bytes) {
  std::printf("n1=%zu n2=%zu n3=%zu nreps=%d num_threads=%d HALF_LENGTH=%d\n", o.grid.n1, o.grid.n2, o.grid.n3,
              o.iterations, threads, o.grid.radius);
  std::printf("n1_thrd_block=%zu n2_thrd_block=%zu n3_thrd_block=%zu\n", o.blocks.b1, o.blocks.b2, o.blocks.b3);
  std::printf("allocating prev, next and vel: total %.1f Mbytes\n", static_cast<double>(allocated_bytes) / 1048576.0);
  std::fflush(stdout);
}

void print_result(const json& rec) {
  const json& r = rec["result"];
  const json& v = rec["validation"];
  std::printf("-------------------------------\n");
  std::printf("time:%15.2f sec\n", r["time_s"].get<double>());
  std::printf("throughput:%9.2f MPoints/s\n", r["mpoints_per_s"].get<double>());
  std::printf("flops:%14.2f GFlops\n", r["gflops"].get<double>());
  if (v.contains("max_abs_error"))
    std::printf("verify: passed, max abs error %.3e, max rel error %.3e\n", v["max_abs_error"].get<double>(),
                v["max_rel_error"].get<double>());
}

std::string failure_message(const Outcome& v) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "verification failed: max abs error %.3e, max rel error %.3e exceeds the tolerance %.1e", v.max_abs,
                v.max_rel, v.tolerance);
  return buf;
}

json iso_config(const Options& o) {
  json config = {{"row_pitch",
                  {{"floats", o.grid.pitch()},
                   {"requested", o.row_pitch},
                   {"lead", o.grid.lead},
                   {"why", o.row_pitch == "auto" ? "n1 rounded up to an odd number of 64-byte lines: every row starts "
                                                   "on a line, and rows 4 KiB apart do not share addresses; the lead "
                                                   "starts every row's interior on a line"
                           : o.row_pitch == "packed" ? "rows packed, n1 floats apart"
                                                     : "given (no lead)"}}},
                 {"plane_pitch",
                  {{"floats", o.grid.plane()},
                   {"requested", o.plane_pitch},
                   {"why", o.plane_pitch == "auto"
                               ? "the rows of a plane rounded up to an odd number of 64-byte lines: the planes a z "
                                 "window reads at one point fall in different cache sets"
                           : o.plane_pitch == "packed" ? "planes packed, n2 rows apart"
                                                       : "given"}}},
                 {"array_offset",
                  {{"floats", o.grid.offset},
                   {"requested", o.array_offset},
                   {"why", o.array_offset == "auto"
                               ? "next a third and vel two thirds of a 4 KiB page after prev (whole lines): the same "
                                 "point of the three arrays falls in different cache sets, and stores to next do not "
                                 "alias loads of prev and vel 4 KiB apart"
                               : "given"}}},
                 {"n1", o.grid.n1},
                 {"n2", o.grid.n2},
                 {"n3", o.grid.n3},
                 {"nb_iter", o.iterations},
                 {"n1_block", o.blocks.b1},
                 {"n2_block", o.blocks.b2},
                 {"n3_block", o.blocks.b3},
                 {"blocks", json::array({o.blocks.b1, o.blocks.b2, o.blocks.b3})},
                 {"affinity", o.affinity},
                 {"init", o.serial_init ? "serial" : "first-touch"},
                 {"schedule", o.schedule == Schedule::Static ? "static" : "dynamic"},
                 {"placement", o.placement.str()},
                 {"pages", to_string(o.placement.pages)},
                 {"kernel", o.kernel == KernelChoice::Optimised ? "optimised" : "reference"},
                 {"isa", o.kernel == KernelChoice::Optimised ? kernel_isa() : "scalar"},
                 {"half_length", o.grid.radius},
                 {"radius", o.grid.radius},
                 {"space_order", 2 * o.grid.radius}};
  if (o.kernel == KernelChoice::Optimised) {
    config["row_kernel"] = kernel_method();
    config["row_shape"] = {{"name", shape_name(active_shape(o.grid.radius))}, {"requested", o.shape}};
    if (!o.shape_why.empty()) config["row_shape"]["why"] = o.shape_why;
    config["row_shape"]["how"] = o.shape_how;
    config["row_shape"]["from"] = o.shape_from;
    if (!o.shape_race.is_null()) config["row_shape"]["race"] = o.shape_race;
    // the shape the sweeps run (when the run sweeps: result.time_block above 1)
    config["row_shape"]["swept"] = {{"name", shape_name(swept_shape(o.grid.radius))},
                                    {"requested", o.swept_shape},
                                    {"how", o.swept_shape_how},
                                    {"from", o.swept_shape_from}};
    // ring shapes prefetch along their column whatever this says
    const Prefetch pf = prefetch_setting(o.grid.radius);
    config["prefetch"] = {{"rows_ahead", pf.rows},
                          {"cache", pf.rows ? json(cache_name(pf.cache)) : json()},  // none: no cache
                          {"setting", prefetch_name(pf)},
                          {"requested", o.prefetch ? o.prefetch_given : o.prefetch_request},
                          {"how", o.prefetch_how},
                          {"from", o.prefetch_from},
                          // the generic loops do not prefetch, and a ring prefetches along its column
                          {"used", radius_path(o.grid) == "templated" && !active_shape(o.grid.radius).ring}};
    if (!o.prefetch_race.is_null()) config["prefetch"]["race"] = o.prefetch_race;
    // templated: the chosen variant's kernel compiled for this radius; generic: the generic loops
    config["radius_path"] = radius_path(o.grid);
  }
  if (o.fault) config["fault_injected"] = true;
  return config;
}

json iso_result(const Options& o, int steps, double seconds, double cpu_seconds, double norm, const TimeBlockModel& t) {
  const double mp = mpoints_per_s(o, steps, seconds);
  json result = {{"mpoints_per_s", mp},
                 {"gflops", mp * flops_per_point(o.grid.radius) / 1e3},
                 {"time_s", seconds},
                 // CPU time of all threads during the steps: on a shared machine, time_s x threads
                 // much above cpu_s means the run waited for CPUs that others held.
                 {"cpu_s", cpu_seconds},
                 {"interior_points", o.grid.interior()},
                 // the cores of the node (hwloc), for the front end's projection to a full node
                 {"node_cores", Topology::instance().cores()},
                 {"steps", steps},
                 {"allocated_bytes", arrays_bytes(o.grid)},
                 {"bytes_per_point", t.depth > 1 ? t.memory_bytes_per_point : kBytesPerPoint},
                 {"time_block", t.depth},
                 {"flops_per_point", flops_per_point(o.grid.radius)},
                 {"traffic_model", traffic_model(o, t)},
                 {"norm", norm}};
  if (o.kernel == KernelChoice::Optimised) result["incore_model"] = incore_model(o.grid, o.l2_bytes, t.depth > 1);
  return result;
}

json verify_validation(const Outcome& v) {
  if (!v.checked) return validation_not_applicable("no time step ran: nothing to check");
  json validation =
      validation_checked(v.passed, "plain scalar reference, normwise relative error (max |a-ref| / max |ref|)");
  validation["max_abs_error"] = v.max_abs;
  validation["max_rel_error"] = v.max_rel;
  validation["tolerance"] = v.tolerance;
  return validation;
}

}  // namespace bw::iso3dfd
