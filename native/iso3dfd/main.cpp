// bandwall-iso3dfd: the ISO3DFD of Intel's NUMA 3DFD article with its command line and output lines, or (--json) one
// record with throughput, the roofline inputs, the norm, the validation and the page map, through the
// measuring driver (common/driver.hpp).
#include "common/affinity.hpp"
#include "common/args.hpp"
#include "common/driver.hpp"
#include "common/errors.hpp"
#include "common/record.hpp"
#include "iso3dfd/measurement.hpp"
#include "iso3dfd/options.hpp"
#include "iso3dfd/output.hpp"
#include "iso3dfd/rows.hpp"

using namespace bw::iso3dfd;

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-iso3dfd", [&] {
    Options o;
    if (!parse_options(argc, argv, o)) return 0;
    select_isa(o.isa);
    if (o.thread_options.automatic() && o.kernel != KernelChoice::Optimised)
      throw bw::UsageError("--threads auto chooses the optimised kernel's threads; the reference kernel is serial");
    bw::check_fits_in_memory(o.bytes_needed(), "grid " + std::to_string(o.grid.n1) + "x" + std::to_string(o.grid.n2) +
                                                   "x" + std::to_string(o.grid.n3) +
                                                   (o.verify ? " with --verify" : ""));
    const bw::Binding b = o.thread_options.resolve();
    const int first_cpu = b.cpus.empty() || b.cpus[0] < 0 ? bw::allowed_cpus().front() : b.cpus[0];
    Measurement m(o, first_cpu);
    bw::driver::Request r;
    r.threads = o.thread_options, r.placement = o.placement, r.isa = o.isa, r.reps = o.iterations;
    const bw::json rec = bw::driver::run(m, r);
    if (o.json)
      bw::emit(rec);
    else
      print_result(rec);
    return 0;
  });
}
