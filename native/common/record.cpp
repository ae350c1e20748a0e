#include "common/record.hpp"

#include "common/isa.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <new>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/ompenv.hpp"
#include "common/steal.hpp"
#include "common/topology.hpp"

#ifndef BANDWALL_GIT_REV
#define BANDWALL_GIT_REV "unknown"
#endif
#ifndef BANDWALL_COMPILER
#define BANDWALL_COMPILER "unknown compiler"
#endif
#ifndef BANDWALL_CXX_FLAGS
#define BANDWALL_CXX_FLAGS ""
#endif

namespace bw {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json provenance(int threads, const std::vector<int>& cpus, const std::string& binding, const std::string& placement,
                json sizes, long repetitions) {
  utsname u{};
  uname(&u);
  json p;
  p["host"] = u.nodename;
  p["kernel"] = std::string(u.sysname) + " " + u.release;
  p["arch"] = u.machine;
  p["cpu_model"] = Topology::instance().cpu_model();
  p["topology_digest"] = Topology::instance().digest();
  p["compiler"] = compiler_id();
  p["flags"] = BANDWALL_CXX_FLAGS;
  p["git_revision"] = BANDWALL_GIT_REV;
  p["date"] = utc_now();
  p["threads"] = threads;
  p["cpus"] = format_cpu_list(cpus);
  p["binding"] = binding;
  p["placement"] = placement;
  p["sizes"] = sizes.is_null() ? json::object() : std::move(sizes);
  p["repetitions"] = repetitions;
  p["openmp_env"] = openmp_env_record();
  p["steal"] = steal_since_start(cpus);
  return p;
}

const char* compiler_id() { return BANDWALL_COMPILER; }

json validation_checked(bool passed, std::string method) {
  return {{"checked", true}, {"passed", passed}, {"method", std::move(method)}};
}

json validation_not_applicable(std::string why) {
  return {{"checked", false}, {"passed", "not applicable"}, {"method", std::move(why)}};
}

json make_record(const std::string& tool, json config, json result, json validation, json prov) {
  return json{{"schema_version", kSchemaVersion},    {"tool", tool},
              {"config", std::move(config)},         {"result", std::move(result)},
              {"validation", std::move(validation)}, {"provenance", std::move(prov)}};
}

void emit(const json& record) { std::cout << record.dump() << std::endl; }

int guarded_main(const char* prog, const std::function<int()>& body) {
  try {
    start_steal_clock();
    isa_ceiling();  // a bad BANDWALL_MAX_ISA is one line and exit 2 here, never from a parallel region
    return body();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", prog, e.what());
    return kExitUsage;
  } catch (const RunError& e) {
    std::fprintf(stderr, "%s: error: %s\n", prog, e.what());
    return kExitRunFailed;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", prog);
    return kExitRunFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", prog, e.what());
    return kExitRunFailed;
  }
}

}  // namespace bw
