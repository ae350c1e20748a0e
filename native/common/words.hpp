// The words an option takes, as a table: each row a name and a sentence of help, the first row the
// default. A tool's option help, its refusal of an unknown word and the manifest's list of the words
// (bandwall-manifest, read by the front end) are all made from the same rows, so a word is typed once.
// Any row type with `name` and `help` members (const char*) serves: these templates take them all.
#pragma once
#include <string>
#include <vector>

#include "common/args.hpp"
#include "common/record.hpp"

namespace bw {

struct Word {
  const char* name;
  const char* help;
};

// The names of the rows, in order.
template <class Row>
std::vector<std::string> word_names(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const Row& r : rows) out.emplace_back(r.name);
  return out;
}

// An option's help: "name: help; name: help" (the default, the first, said first).
template <class Row>
std::string words_help(const std::vector<Row>& rows) {
  std::string out;
  for (const Row& r : rows) out += std::string(out.empty() ? "" : "; ") + r.name + ": " + r.help;
  return out;
}

// The manifest's form: [{"name": ..., "help": ...}, ...], the default first.
template <class Row>
json words_json(const std::vector<Row>& rows) {
  json out = json::array();
  for (const Row& r : rows) out.push_back({{"name", r.name}, {"help", r.help}});
  return out;
}

// The name of the row that text names (find_word, common/args.hpp): UsageError naming the words otherwise.
template <class Row>
std::string parse_word(const std::vector<Row>& rows, const std::string& text, const std::string& what) {
  return find_word(rows, text, what).name;
}

}  // namespace bw
