#include "common/choice_cache.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "common/topology.hpp"

namespace bw {

std::string choice_cache_path(const std::string& stem) {
  std::string dir;
  if (const char* d = std::getenv("BANDWALL_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::string(x) + "/bandwall";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::string(h) + "/.cache/bandwall";
  else
    return "";
  return dir + "/" + stem + "-" + Topology::instance().digest() + ".json";
}

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str(), nullptr, false);  // discarded (is_discarded) when not JSON
}

const json* cached_choice(const json& cache, const std::string& key) {
  if (!cache.is_object() || !cache.contains("choices") || !cache["choices"].is_object()) return nullptr;
  if (!cache["choices"].contains(key)) return nullptr;
  const json& e = cache["choices"][key];
  return e.is_object() ? &e : nullptr;
}

bool store_choice(const std::string& path, const std::string& about, const std::string& key, const json& entry) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  json cache = read_json_file(path);
  if (entry.is_null() && !cached_choice(cache, key)) return true;  // nothing to remove
  if (!cache.is_object()) cache = json::object();
  cache["about"] = about;
  if (!cache.contains("choices") || !cache["choices"].is_object()) cache["choices"] = json::object();
  if (entry.is_null())
    cache["choices"].erase(key);
  else
    cache["choices"][key] = entry;
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return false;  // an unwritable cache only costs a measurement next time
    out << cache.dump(1) << "\n";
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return false;  // a short write (a full disk) must not replace the old file
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::string text_field(const json& entry, const char* key, const std::string& fallback) {
  if (!entry.is_object() || !entry.contains(key) || !entry[key].is_string()) return fallback;
  return entry[key].get<std::string>();
}

bool flag_field(const json& entry, const char* key) {
  return entry.is_object() && entry.contains(key) && entry[key].is_boolean() && entry[key].get<bool>();
}

long whole_field(const json& entry, const char* key, long lo, long hi, long fallback) {
  if (!entry.is_object() || !entry.contains(key)) return fallback;
  const json& v = entry[key];
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return u >= static_cast<std::uint64_t>(std::max(lo, 0L)) && u <= static_cast<std::uint64_t>(std::max(hi, 0L))
               ? static_cast<long>(u)
               : fallback;
  }
  if (!v.is_number_integer()) return fallback;
  const auto i = v.get<std::int64_t>();
  return i >= lo && i <= hi ? static_cast<long>(i) : fallback;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace bw
