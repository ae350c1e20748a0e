// bandwall-counters: runs a command and prints one record of the events counted around it.
//
//   bandwall-counters [--events E1,E2,...] [--output FILE] -- COMMAND [ARGS...]
//   bandwall-counters --list-events
//
// The command inherits stdin, stdout and stderr. result.software always holds the kernel's
// software events; result.hardware holds each PAPI event asked for with --events (a count or
// "unavailable: <reason>"). The exit code is the command's (128 + signal when it was killed), so
// the record is written to --output when the caller needs the command's stdout apart.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/ompenv.hpp"
#include "common/record.hpp"
#include "counters/child.hpp"
#include "counters/hardware.hpp"
#include "counters/software.hpp"

namespace {

std::vector<std::string> split_events(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(at, end - at);
    if (name.empty()) throw bw::UsageError("--events '" + list + "' has an empty event name");
    out.push_back(name);
    at = end + 1;
  }
  return out;
}

struct Options {
  std::string events, output;
  bool list = false, help = false;
  std::vector<std::string> command;
};

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= argc || std::strcmp(argv[i + 1], "--") == 0)
        throw bw::UsageError(std::string(opt) + " needs a value");
      std::string v = argv[++i];
      if (v.empty()) throw bw::UsageError(std::string(opt) + " must not be empty");
      return v;
    };
    if (a == "--events")
      o.events = value("--events");
    else if (a == "--output")
      o.output = value("--output");
    else if (a == "--list-events")
      o.list = true;
    else if (a == "-h" || a == "--help") {
      std::puts(
          "bandwall-counters: count software and hardware events around a command, one JSON record\n\n"
          "Usage: bandwall-counters [--events E1,E2,...] [--output FILE] -- COMMAND [ARGS...]\n"
          "       bandwall-counters --list-events\n\n"
          "Options:\n"
          "  --events LIST   PAPI event names to count (each unavailable one says why in the record)\n"
          "  --output FILE   write the record to FILE instead of standard output\n"
          "  --list-events   print the PAPI events this machine offers (JSON) and exit\n"
          "  -h, --help      print this help and exit");
      o.help = true;
      return o;
    } else
      throw bw::UsageError("unknown option '" + a + "' (usage: bandwall-counters [--events LIST] -- COMMAND ...)");
  }
  for (++i; i < argc; ++i) o.command.push_back(argv[i]);
  if (!o.list && o.command.empty())
    throw bw::UsageError("no command to count (usage: bandwall-counters [--events LIST] -- COMMAND ...)");
  return o;
}

int run(const Options& o) {
  using namespace bw::counters;
  std::vector<std::string> names = o.events.empty() ? std::vector<std::string>{} : split_events(o.events);
  std::ofstream out;
  if (!o.output.empty()) {
    out.open(o.output);
    if (!out) throw bw::UsageError("cannot write --output '" + o.output + "': " + std::strerror(errno));
  }
  bw::restore_openmp_env();  // the user's OpenMP settings are for the command
  Child child = hold(o.command);
  SoftwareCounters sw(child.pid);
  HardwareCounters hw(child.pid, names);
  hw.start();
  // Like time(1): a Ctrl-C is for the command; bandwall waits for it and still writes the record.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGQUIT, SIG_IGN);
  release(child, o.command[0]);
  Exit e = wait_for(child);
  hw.stop();

  bw::json result = {{"software", sw.read()}, {"hardware", hw.read()}, {"exit_code", e.code},
                     {"signal", e.signal},    {"wall_s", e.wall_s},    {"max_rss_kib", e.max_rss_kib}};
  bw::json config = {{"command", o.command}, {"events", names}};
  bw::json validation = bw::validation_not_applicable("counts events around a command: nothing is compared");
  validation["papi"] = papi_status();
  auto rec = bw::make_record("counters", config, result, validation,
                             bw::provenance(0, bw::allowed_cpus(), "none", "none", bw::json::object(), 1));
  if (out.is_open())
    out << rec.dump() << std::endl;
  else
    bw::emit(rec);
  return e.code;
}

}  // namespace

int main(int argc, char** argv) {
  return bw::guarded_main("bandwall-counters", [&] {
    Options o = parse(argc, argv);
    if (o.help) return 0;
    if (o.list) {
      bw::emit(bw::counters::list_events());
      return 0;
    }
    return run(o);
  });
}
