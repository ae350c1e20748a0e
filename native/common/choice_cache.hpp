// The files in which bandwall keeps, for its next runs on this machine, the choices it measured
// beyond noise (an instruction-set variant, a time-block depth): where they live, how they are read,
// and how an entry is stored.
//
// One file per kind of choice and machine, <stem>-<topology digest>.json, in $BANDWALL_CACHE_DIR,
// else $XDG_CACHE_HOME/bandwall, else ~/.cache/bandwall: {"about": ..., "choices": {key: entry}}.
// An entry is written through a temporary file renamed over the old one, so a reader never sees half
// a file; an unreadable or unwritable file costs only a measurement next time.
#pragma once
#include <string>

#include "common/record.hpp"

namespace bw {

// The cache file of a kind of choice on this machine, or "" when there is no folder for it.
std::string choice_cache_path(const std::string& stem);

// The file's JSON (null when it is missing, discarded when it is not JSON).
json read_json_file(const std::string& path);

// The entry stored under key, or nullptr (no such file, not a cache, no such entry).
const json* cached_choice(const json& cache, const std::string& key);

// Stores entry under key in the file at path, with the file's "about" text (a null entry removes the
// key); false when the file could not be written whole (the old one then stands).
bool store_choice(const std::string& path, const std::string& about, const std::string& key, const json& entry);

// An entry's field of the expected type, else the fallback: a hand-edited or damaged file never
// throws (nlohmann's value() does on a field of another type).
std::string text_field(const json& entry, const char* key, const std::string& fallback = "");
bool flag_field(const json& entry, const char* key);  // true only for the boolean true
// A whole number within [lo, hi], else fallback.
long whole_field(const json& entry, const char* key, long lo, long hi, long fallback);

// Today's date (UTC), YYYY-MM-DD: when an entry was measured.
std::string today();

}  // namespace bw
