// The choice of a kernel's instruction-set variant (common/isa_choice.hpp): a table hit, its
// fallback when the binary or CPU lacks the variant it names, the model's default, an unknown CPU
// measured under the decision rule and cached as it settles (a winner confirmed by a second race, the
// default that stood), per size class, a forced name,
// --isa measure, and the built-in table's shape. No figure here is a speed: the measure functions
// return made-up numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "common/choice_cache.hpp"
#include "common/decide.hpp"
#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/isa_choice.hpp"
#include "common/machine.hpp"
#include "iso3dfd/caches.hpp"
#include "stream/kernels.hpp"

namespace {

using bw::choose_variant;
using bw::json;

const std::vector<std::string> kAll = {"avx512", "avx2", "generic"};
const bw::Microarch kTestZen{"Test Zen", "AuthenticAMD", 0x17, 0, 0xff, {2, 2, 2, 4}, {1, 1, 1, 2}, "a test row"};

json table() {
  return json::parse(R"({"rows": [{"microarch": "Test Zen", "command": "python3 bench/isa_choices.py --rounds 5",
    "measured": "2026-01-01", "cpu": "a test CPU",
    "kernels": {"stream.dot": {"isa": "avx2", "figures": {"avx512": 19.0, "avx2": 23.0, "generic": 18.0},
                               "unit": "GB/s"},
                "peak.fma": {"isa": "avx512", "figures": {"avx512": 60.0, "avx2": 59.0, "generic": 20.0},
                             "unit": "GFlop/s per core", "command": "python3 bench/isa_choices.py --kernels peak.fma"}}}]})");
}

bw::VariantRequest request(const std::string& requested, const std::string& key,
                           const std::vector<std::string>& built = kAll, const std::string& size = "dram") {
  return {requested, key, built, "GB/s", size};
}

class IsaChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("bw-isa-choice-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    cache = (dir / "isa-choices-0123.json").string();
    t = table();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  bw::ChoiceContext known(std::vector<std::string> offered = kAll) {
    return {&t, &kTestZen, "Test Zen", std::move(offered), cache};
  }
  bw::ChoiceContext unknown() { return {&t, nullptr, "UnknownVendor-0-0", kAll, cache}; }
  std::filesystem::path dir;
  std::string cache;
  json t;
  std::map<std::string, int> timed;
  // Made-up figures: generic fastest beyond any margin, so a measured choice differs from the default.
  bw::IsaMeasure measure = [this](const std::string& isa) {
    ++timed[isa];
    return isa == "generic" ? 3.0 : isa == "avx2" ? 2.0 : 1.0;
  };
  // Made-up figures within noise: the variants alternate which is ahead, 1% apart.
  bw::IsaMeasure noisy = [this](const std::string& isa) {
    const int n = ++timed[isa];
    return 100.0 + ((n + (isa == "avx2")) % 2 ? 1.0 : 0.0);
  };
};

TEST_F(IsaChoice, TableRowOfThisMicroarchitecture) {
  auto c = choose_variant(request("auto", "stream.dot"), measure, known());
  EXPECT_EQ(c.isa, "avx2");
  EXPECT_EQ(c.how, "table");
  EXPECT_EQ(c.figures["avx2"], 23.0);
  EXPECT_EQ(c.source["command"], "python3 bench/isa_choices.py --rounds 5");  // the row's
  EXPECT_TRUE(timed.empty());
  EXPECT_FALSE(std::filesystem::exists(cache));
  auto p = choose_variant(request("auto", "peak.fma"), measure, known());
  EXPECT_EQ(p.isa, "avx512");
  EXPECT_EQ(p.source["command"], "python3 bench/isa_choices.py --kernels peak.fma");  // the entry's own
  json j = c.to_json("stream.dot");
  EXPECT_EQ(j["kernel"], "stream.dot");
  EXPECT_EQ(j["how"], "table");
  EXPECT_EQ(j["unit"], "GB/s");
  EXPECT_EQ(j["size_class"], "dram");
}

TEST_F(IsaChoice, TableChoiceNotBuiltFallsToItsFastestCandidate) {
  auto c = choose_variant(request("auto", "stream.dot", {"avx512", "generic"}), measure, known());
  EXPECT_EQ(c.isa, "avx512");
  EXPECT_EQ(c.how, "table");
  auto only = choose_variant(request("auto", "stream.dot", {"avx512", "generic"}), measure, known({"avx2", "generic"}));
  EXPECT_EQ(only.isa, "generic");
  EXPECT_EQ(only.how, "only");
}

TEST_F(IsaChoice, UnknownCpuIsMeasuredThenCachedWhenDecisiveTwice) {
  auto first = choose_variant(request("auto", "stream.dot"), measure, unknown());
  EXPECT_EQ(first.isa, "generic");
  EXPECT_EQ(first.how, "measured");
  EXPECT_EQ(first.figures["generic"], 3.0);
  EXPECT_TRUE(first.decision["decisive"]);
  EXPECT_EQ(first.decision["default"], "avx512");  // the model's default for a CPU no model knows: the widest
  EXPECT_EQ(timed["avx512"], bw::decide::rule().rounds);
  EXPECT_EQ(timed["generic"], bw::decide::rule().rounds);
  EXPECT_EQ(first.source["state"], "unconfirmed");
  ASSERT_TRUE(std::filesystem::exists(cache));
  // the next run races the default against the first winner alone, and keeps it when it wins again
  timed.clear();
  auto second = choose_variant(request("auto", "stream.dot"), measure, unknown());
  EXPECT_EQ(second.isa, "generic");
  EXPECT_EQ(second.how, "measured");
  EXPECT_EQ(second.source["state"], "confirmed");
  EXPECT_EQ(timed.count("avx2"), 0u);
  EXPECT_EQ(timed["generic"], bw::decide::rule().rounds);
  EXPECT_NE(second.why.find("not yet confirmed"), std::string::npos) << second.why;
  timed.clear();
  auto again = choose_variant(request("auto", "stream.dot"), measure, unknown());
  EXPECT_EQ(again.isa, "generic");
  EXPECT_EQ(again.how, "cached");
  EXPECT_EQ(again.source["file"], cache);
  EXPECT_TRUE(timed.empty());
  // another size class is measured on its own: a choice timed on data in cache is not one for DRAM
  auto small = choose_variant(request("auto", "stream.dot", kAll, "l2"), measure, unknown());
  EXPECT_EQ(small.how, "measured");
  // a known CPU whose row lacks the kernel is measured too
  auto other = choose_variant(request("auto", "stream.copy.nt"), measure, known());
  EXPECT_EQ(other.how, "measured");
  EXPECT_NE(other.why.find("no stream.copy.nt entry for Test Zen"), std::string::npos) << other.why;
  // a binary with other variants than those cached measures again
  timed.clear();
  auto rebuilt = choose_variant(request("auto", "stream.dot", {"avx2", "generic"}), measure, unknown());
  EXPECT_EQ(rebuilt.how, "measured");
  EXPECT_EQ(timed["avx2"], bw::decide::rule().rounds);
}

TEST_F(IsaChoice, AFirstWinnerNotConfirmedLeavesTheDefaultSettled) {
  auto first = choose_variant(request("auto", "stream.dot"), measure, unknown());
  ASSERT_EQ(first.source["state"], "unconfirmed");
  // the second race finds them within noise: the default stands, kept, and is taken from then on
  timed.clear();
  auto second = choose_variant(request("auto", "stream.dot"), noisy, unknown());
  EXPECT_EQ(second.isa, "avx512");
  EXPECT_EQ(second.how, "measured");
  EXPECT_EQ(second.source["state"], "default");
  timed.clear();
  auto third = choose_variant(request("auto", "stream.dot"), measure, unknown());
  EXPECT_EQ(third.isa, "avx512");
  EXPECT_EQ(third.how, "cached");
  EXPECT_TRUE(timed.empty());
  EXPECT_FALSE(third.decision["decisive"]);
  // --isa measure races every variant again
  auto measured = choose_variant(request("measure", "stream.dot"), measure, unknown());
  EXPECT_EQ(measured.how, "measured");
  EXPECT_EQ(measured.isa, "generic");
}

TEST_F(IsaChoice, WithinNoiseTheDefaultStandsAndIsKept) {
  auto c = choose_variant(request("auto", "stream.triad.nt"), noisy, unknown());
  EXPECT_EQ(c.isa, "avx512");
  EXPECT_EQ(c.how, "measured");
  EXPECT_FALSE(c.decision["decisive"]);
  EXPECT_NE(c.why.find("avx2 within noise"), std::string::npos) << c.why;
  EXPECT_EQ(c.source["state"], "default");
  for (int run = 0; run < 3; ++run) {  // the same answer run after run, without timing again
    timed.clear();
    auto again = choose_variant(request("auto", "stream.triad.nt"), measure, unknown());
    EXPECT_EQ(again.isa, "avx512");
    EXPECT_EQ(again.how, "cached");
    EXPECT_TRUE(timed.empty());
    EXPECT_NE(again.why.find("the default stood"), std::string::npos) << again.why;
  }
}

// A cache that cannot be written (its folder is a file) costs a measurement next time, and the
// record says it was not kept.
TEST_F(IsaChoice, AnUnwritableCacheIsSaidNotKept) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "blocker") << "a file, not a folder";
  cache = (dir / "blocker" / "isa-choices-0123.json").string();
  auto c = choose_variant(request("auto", "stream.dot"), measure, unknown());
  EXPECT_EQ(c.how, "measured");
  EXPECT_EQ(c.source["cached"], false);
  EXPECT_NE(c.source["why"].get<std::string>().find("could not be written"), std::string::npos);
  EXPECT_EQ(choose_variant(request("auto", "stream.dot"), measure, unknown()).how, "measured");
}

// An entry of an unknown state, or a default that is no longer the default, is measured again.
TEST_F(IsaChoice, AKeptDefaultThatIsNoLongerTheDefaultIsMeasuredAgain) {
  choose_variant(request("auto", "stream.triad.nt"), noisy, unknown());
  json doc = bw::read_json_file(cache);
  for (auto& [k, e] : doc["choices"].items()) e["isa"] = "avx2";  // not the default avx512, state default
  std::ofstream(cache) << doc.dump();
  timed.clear();
  EXPECT_EQ(choose_variant(request("auto", "stream.triad.nt"), measure, unknown()).how, "measured");
  doc = bw::read_json_file(cache);
  for (auto& [k, e] : doc["choices"].items()) e["state"] = "perhaps";
  std::ofstream(cache) << doc.dump();
  EXPECT_EQ(choose_variant(request("auto", "stream.triad.nt"), measure, unknown()).how, "measured");
}

TEST_F(IsaChoice, NoMeasurementTakesTheModelsDefault) {
  auto c = choose_variant(request("auto", "stream.dot"), {}, unknown());
  EXPECT_EQ(c.isa, "avx512");
  EXPECT_EQ(c.how, "model");
  auto k = choose_variant(request("auto", "stream.copy.nt"), {}, known());
  EXPECT_EQ(k.how, "model");
  EXPECT_NE(k.why.find("Test Zen"), std::string::npos) << k.why;
}

TEST_F(IsaChoice, ForcedNameWinsOverTableAndIsRefusedWhenAbsent) {
  auto c = choose_variant(request("generic", "stream.dot"), measure, known());
  EXPECT_EQ(c.isa, "generic");
  EXPECT_EQ(c.how, "forced");
  EXPECT_TRUE(timed.empty());
  auto none = choose_variant(request("avx512", "stream.dot"), measure, known({"avx2", "generic"}));
  EXPECT_TRUE(none.isa.empty());
  auto unknown_name = choose_variant(request("sse9", "stream.dot"), measure, known());
  EXPECT_TRUE(unknown_name.isa.empty());
}

TEST_F(IsaChoice, MeasureTimesAgainWhateverTheTableSays) {
  auto c = choose_variant(request("measure", "stream.dot"), measure, known());
  EXPECT_EQ(c.how, "measured");
  EXPECT_EQ(c.decision["default"], "avx2");  // the table's entry is the default it must beat
  EXPECT_EQ(c.isa, "generic");
  EXPECT_EQ(timed["avx2"], bw::decide::rule().rounds);
}

TEST_F(IsaChoice, UnreadableCacheIsMeasuredAgain) {
  std::filesystem::create_directories(dir);
  std::ofstream(cache) << "not json";
  auto c = choose_variant(request("auto", "stream.dot"), measure, unknown());
  EXPECT_EQ(c.how, "measured");
}

TEST(ModelDefault, TheWidestUnlessTheModelRunsANarrowerOneFaster) {
  std::string why;
  EXPECT_EQ(bw::model_default(kAll, nullptr, &why), "avx512");
  EXPECT_NE(why.find("no machine model"), std::string::npos);
  // AVX-512 on 256-bit units: as many lanes per cycle as AVX2, so the wider stands.
  EXPECT_EQ(bw::model_default(kAll, &kTestZen, &why), "avx512");
  // A core with one 512-bit FMA pipe against three 256-bit ones runs AVX2 faster.
  const bw::Microarch slow512{"Slow", "X", 1, 0, 0, {2, 3, 2, 4}, {1, 1, 1, 1}, ""};
  EXPECT_EQ(bw::model_default(kAll, &slow512, &why), "avx2");
}

// The keys of every kernel with variants: each STREAM kernel and store kind, the FMA peak and the
// ISO3DFD row kernel.
std::vector<std::string> kernel_keys() {
  std::vector<std::string> keys = {"iso3dfd.rows", "peak.fma"};
  for (const auto& k : bw::stream::kernels()) {
    if (k.writes)
      for (const char* s : {"nt", "regular"}) keys.push_back("stream." + std::string(k.name) + "." + s);
    else
      keys.push_back("stream." + std::string(k.name));
  }
  return keys;
}

// Every micro-architecture of the machine models has, for every kernel with variants, a row of the
// built-in table or a stated model default: no CPU the models know is left to a coin toss.
TEST(IsaChoiceTable, EveryMicroarchitectureHasARowOrAModelDefault) {
  const json& t = bw::isa_choice_table();
  for (const std::string& name : bw::microarch_names()) {
    bw::CpuId id;
    setenv("BANDWALL_MICROARCH", name.c_str(), 1);
    id = bw::cpuid();
    unsetenv("BANDWALL_MICROARCH");
    const bw::Microarch* m = bw::find_microarch(id);
    ASSERT_NE(m, nullptr) << name;
    ASSERT_EQ(std::string(m->name), name);
    for (const std::string& key : kernel_keys()) {
      if (bw::table_entry(t, name, key)) continue;
      std::string why;
      EXPECT_FALSE(bw::model_default(kAll, m, &why).empty()) << name << " " << key;
      EXPECT_NE(why.find(name), std::string::npos) << why;
    }
  }
}

// Every entry of the built-in table names a variant among its figures, with a unit and a command
// (its own or its row's), on a micro-architecture of common/machine.cpp. An entry the decision rule
// decided names the fastest of its figures; one within noise names the model's default.
TEST(IsaChoiceTable, BuiltInRowsAreComplete) {
  const json& t = bw::isa_choice_table();
  const auto names = bw::microarch_names();
  for (const json& row : t["rows"]) {
    ASSERT_TRUE(row.contains("microarch") && row.contains("cpu") && row.contains("command")) << row.dump();
    EXPECT_NE(std::find(names.begin(), names.end(), row["microarch"].get<std::string>()), names.end())
        << row["microarch"];
    for (const auto& [key, e] : row["kernels"].items()) {
      const std::string isa = e["isa"];
      ASSERT_TRUE(e["figures"].contains(isa)) << key;
      if (e.contains("decision")) {  // the decision rule's record, as config.isa_choice.decision carries it
        for (const char* f : {"default", "chosen", "decisive", "why"})
          EXPECT_TRUE(e["decision"].contains(f)) << key << " " << f;
        EXPECT_EQ(e["decision"].value("chosen", ""), isa) << key;
      }
      if (!e.contains("decision") || e["decision"].value("decisive", true)) {
        for (const auto& [other, figure] : e["figures"].items()) {
          EXPECT_LE(figure.get<double>(), e["figures"][isa].get<double>()) << key << " " << other;
        }
      }
      EXPECT_FALSE(e.value("unit", "").empty()) << key;
      EXPECT_NE(std::find(bw::isa_names().begin(), bw::isa_names().end(), isa), bw::isa_names().end()) << key;
    }
    // the figures a model plans with: the temporal-blocking model's, measured with its command and date
    const json models = row.value("models", json::object());
    for (const auto& [key, e] : models.items()) {
      EXPECT_EQ(key, bw::iso3dfd::kTimeModelKey);
      EXPECT_GT(bw::iso3dfd::llc_over_memory_of(e), 0) << e.dump();
      EXPECT_TRUE(e.contains("command") && e.contains("measured") && e.contains("interval")) << key;
      if (e.contains("llc_bytes")) {  // the team's share of the cache, below the size reported
        EXPECT_GT(bw::iso3dfd::llc_bytes_of(e), 0u) << e.dump();
        EXPECT_LT(bw::iso3dfd::llc_bytes_of(e), e.value("llc_reported_bytes", std::uint64_t{0})) << e.dump();
      }
    }
    EXPECT_EQ(bw::table_row(t, row["microarch"].get<std::string>()), &row);
  }
}

// The fields of a cache entry are read by type: a field of another type, or a number out of range,
// gives the fallback instead of an exception (a hand-edited file never stops a run).
TEST(ChoiceCache, FieldsOfTheWrongTypeGiveTheFallback) {
  const json e = {{"cpu", "Zen"}, {"none", nullptr},       {"flag", true}, {"word", "true"},
                  {"depth", 4},   {"huge", 4294967298ULL}, {"neg", -3},    {"text", "4"}};
  EXPECT_EQ(bw::text_field(e, "cpu"), "Zen");
  EXPECT_EQ(bw::text_field(e, "none", "?"), "?");
  EXPECT_EQ(bw::text_field(e, "depth", "?"), "?");
  EXPECT_EQ(bw::text_field(e, "missing", "?"), "?");
  EXPECT_TRUE(bw::flag_field(e, "flag"));
  EXPECT_FALSE(bw::flag_field(e, "word"));
  EXPECT_FALSE(bw::flag_field(e, "missing"));
  EXPECT_EQ(bw::whole_field(e, "depth", 1, 64, 0), 4);
  EXPECT_EQ(bw::whole_field(e, "huge", 1, 64, 0), 0);
  EXPECT_EQ(bw::whole_field(e, "neg", 1, 64, 0), 0);
  EXPECT_EQ(bw::whole_field(e, "text", 1, 64, 0), 0);
  EXPECT_EQ(bw::whole_field(json::array(), "depth", 1, 64, 7), 7);
}

// Storing a null entry removes its key and leaves the others; removing from no file writes none.
TEST(ChoiceCache, StoreAndRemove) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("bw-choice-cache-" + std::to_string(::getpid()));
  const std::string path = (dir / "c.json").string();
  EXPECT_TRUE(bw::store_choice(path, "about", "gone", nullptr));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(bw::store_choice(path, "about", "a", {{"x", 1}}));
  EXPECT_TRUE(bw::store_choice(path, "about", "b", {{"x", 2}}));
  EXPECT_TRUE(bw::store_choice(path, "about", "a", nullptr));
  const json back = bw::read_json_file(path);
  EXPECT_EQ(bw::cached_choice(back, "a"), nullptr);
  ASSERT_NE(bw::cached_choice(back, "b"), nullptr);
  EXPECT_EQ((*bw::cached_choice(back, "b"))["x"], 2);
  fs::remove_all(dir);
}

}  // namespace

// BANDWALL_MAX_ISA, set for the test's duration and restored after it.
class IsaCeiling : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* v = std::getenv("BANDWALL_MAX_ISA");
    if (v) saved_ = v;
    had_ = v != nullptr;
  }
  void TearDown() override {
    if (had_)
      setenv("BANDWALL_MAX_ISA", saved_.c_str(), 1);
    else
      unsetenv("BANDWALL_MAX_ISA");
  }
  static void cap(const char* v) { setenv("BANDWALL_MAX_ISA", v, 1); }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST_F(IsaCeiling, NoVariantAboveItIsOfferedAndAHigherOneChangesNothing) {
  unsetenv("BANDWALL_MAX_ISA");
  const std::vector<std::string> cpu = bw::cpu_isas();
  EXPECT_EQ(bw::isa_ceiling(), "");
  for (const char* c : {"generic", "avx2", "avx512"}) {
    cap(c);
    std::vector<std::string> want;
    for (const std::string& n : cpu)
      if (bw::variant_bits(n) <= bw::variant_bits(c)) want.push_back(n);
    EXPECT_EQ(bw::cpu_isas(), want) << c;
    EXPECT_EQ(bw::choose_isa("auto", kAll), want.front()) << c;
    EXPECT_EQ(bw::isa_json()["ceiling"], c);
    EXPECT_EQ(bw::isa_json()["cpu_offered"], json(cpu));
  }
  cap("AVX2");  // case aside, as oneDNN's
  EXPECT_EQ(bw::isa_ceiling(), "avx2");
  cap("");  // empty: no ceiling
  EXPECT_EQ(bw::cpu_isas(), cpu);
}

TEST_F(IsaCeiling, AVariantAboveItIsRefusedInOneLineNamingIt) {
  cap("generic");
  for (const std::string n : {"avx2", "avx512"}) {
    EXPECT_EQ(bw::choose_isa(n, kAll), "");
    const std::string why = bw::isa_refusal(n, kAll);
    if (bw::cpu_supports_isa(n))
      EXPECT_EQ(why, "isa '" + n + "' is above the ceiling BANDWALL_MAX_ISA=generic (allowed: generic)");
    else
      EXPECT_NE(why.find("not supported by this CPU"), std::string::npos) << why;
  }
  EXPECT_EQ(bw::choose_isa("generic", kAll), "generic");
}

TEST_F(IsaCeiling, AnUnknownValueIsAUsageError) {
  for (const char* bad : {"avx", "sse2", "avx512f", "native", " avx2"}) {
    cap(bad);
    try {
      bw::cpu_isas();
      FAIL() << "accepted " << bad;
    } catch (const bw::UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("BANDWALL_MAX_ISA='") + bad + "' is not a variant (use generic, avx2 or avx512)");
    }
  }
}

TEST_F(IsaCeiling, TheChoiceRecordSaysIt) {
  cap("avx2");
  bw::IsaChoice c;
  c.isa = "avx2", c.how = "model", c.why = "w";
  EXPECT_EQ(c.to_json("stream.triad.nt")["ceiling"], "avx2");
  unsetenv("BANDWALL_MAX_ISA");
  EXPECT_FALSE(c.to_json("stream.triad.nt").contains("ceiling"));
}

TEST_F(IsaCeiling, ACappedChoiceIsCachedUnderAKeyOfItsOwn) {
  const auto dir = std::filesystem::temp_directory_path() / ("bw-isa-ceiling-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string cache = (dir / "isa-choices-0123.json").string();
  const json t = table();
  const bw::ChoiceContext machine{&t, nullptr, "UnknownVendor-0-0", {"avx2", "generic"}, cache};
  const bw::IsaMeasure generic_fastest = [](const std::string& isa) { return isa == "generic" ? 3.0 : 1.0; };
  cap("avx2");
  EXPECT_EQ(choose_variant(request("auto", "stream.dot"), generic_fastest, machine).how, "measured");
  unsetenv("BANDWALL_MAX_ISA");
  EXPECT_EQ(choose_variant(request("auto", "stream.dot"), generic_fastest, machine).how, "measured");
  const json stored = bw::read_json_file(cache);
  EXPECT_TRUE(stored["choices"].contains("stream.dot@dram@max=avx2")) << stored.dump();
  EXPECT_TRUE(stored["choices"].contains("stream.dot@dram")) << stored.dump();
  // Each entry says what its key encodes: readers use these fields, not the key's grammar.
  const json& capped = stored["choices"]["stream.dot@dram@max=avx2"];
  EXPECT_EQ(capped.value("kernel", ""), "stream.dot");
  EXPECT_EQ(capped.value("size_class", ""), "dram");
  EXPECT_EQ(capped.value("ceiling", ""), "avx2");
  EXPECT_EQ(stored["choices"]["stream.dot@dram"].value("ceiling", "x"), "");
  std::filesystem::remove_all(dir);
}
