#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "common/args.hpp"
#include "common/errors.hpp"

using bw::UsageError;

TEST(ParseSize, UnitsAreBinary) {
  EXPECT_EQ(bw::parse_size("4096"), 4096u);
  EXPECT_EQ(bw::parse_size("64K"), 65536u);
  EXPECT_EQ(bw::parse_size("512M"), 512ull << 20);
  EXPECT_EQ(bw::parse_size("2G"), 2ull << 30);
  EXPECT_EQ(bw::parse_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(bw::parse_size("1t"), 1ull << 40);
}

TEST(ParseSize, RefusesBadText) {
  for (const char* bad : {"", "0", "-5", "abc", "12Q", "0.0M", "1e400", "G"})
    EXPECT_THROW(bw::parse_size(bad), UsageError) << bad;
}

TEST(ParseInt, Range) {
  EXPECT_EQ(bw::parse_int("7", "n", 1, 10), 7);
  EXPECT_THROW(bw::parse_int("0", "n", 1, 10), UsageError);
  EXPECT_THROW(bw::parse_int("x", "n", 1, 10), UsageError);
  EXPECT_THROW(bw::parse_int("3.5", "n", 1, 10), UsageError);
}

TEST(FormatCpuList, Compresses) { EXPECT_EQ(bw::format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11"); }

namespace {
void parse(CLI::App& app, std::vector<const char*> args) {
  args.insert(args.begin(), "prog");
  app.parse(static_cast<int>(args.size()), args.data());
}
}  // namespace

TEST(RefuseEmptyOptions, EmptyOrBlankValuesAreRefused) {
  for (const char* value : {"", " ", "\t"}) {
    CLI::App app;
    std::string size, cpus;
    app.add_option("--size", size);
    app.add_option("--cpus", cpus);
    parse(app, {"--cpus", "0-1", "--size", value});
    try {
      bw::refuse_empty_options(app);
      ADD_FAILURE() << "'" << value << "' was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--size is empty"), std::string::npos) << e.what();
    }
  }
}

TEST(RefuseEmptyOptions, FlagsAndOptionsLeftOutPass) {
  CLI::App app;
  std::string size, cpus;
  bool list = false;
  app.add_option("--size", size);
  app.add_option("--cpus", cpus);
  app.add_flag("--list", list);
  parse(app, {"--list", "--cpus", "0"});
  EXPECT_NO_THROW(bw::refuse_empty_options(app));
  EXPECT_TRUE(list);
}
