// The JSON record every executable prints: schema_version, tool, config, result, validation,
// provenance (and optional parts such as placement). Python validates it against the JSON Schema
// in python/bandwall/schema/ and stores it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bw {

using json = nlohmann::json;

inline constexpr int kSchemaVersion = 1;

// Host, CPU model, compiler and flags, git revision, date, threads and CPUs of the run, its
// binding and placement, the sizes it worked on (array name -> bytes, or the grid's dimensions;
// empty when it allocates nothing), how many times it repeated the measurement, and the share of
// those CPUs' time a virtual machine's host took while it ran (steal.hpp).
json provenance(int threads, const std::vector<int>& cpus, const std::string& binding, const std::string& placement,
                json sizes, long repetitions);

// The validation part of a record: what it says it checked, and nothing more.
//   validation_checked(passed, method): something was compared (method says what and against
//     what); passed says whether it agreed.
//   validation_not_applicable(why): nothing was compared (a description, a count of events);
//     checked false, passed "not applicable", method says why.
json validation_checked(bool passed, std::string method);
json validation_not_applicable(std::string why);

// The compiler that built this binary, from the build's own compiler identification.
const char* compiler_id();

json make_record(const std::string& tool, json config, json result, json validation, json prov);

// Prints the record on stdout as one line of JSON.
void emit(const json& record);

// ISO 8601 UTC time stamp.
std::string utc_now();

}  // namespace bw
