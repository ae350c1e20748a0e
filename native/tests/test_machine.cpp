// The per-CPU machine models: the row CPUID names, how 512-bit operations are counted, and what a
// CPU no row knows gets (no bound, and why); the row kernel's port bound follows the row.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/errors.hpp"
#include "common/machine.hpp"
#include "iso3dfd/rows.hpp"

namespace {

using bw::CpuId;

const CpuId kZen2{"AuthenticAMD", 0x17, 0x31, {}, ""};
const CpuId kZen3{"AuthenticAMD", 0x19, 0x01, {}, ""};
const CpuId kZen4{"AuthenticAMD", 0x19, 0x11, {}, ""};  // the EPYC 9004 family 25 model 17
const CpuId kZen5{"AuthenticAMD", 0x1a, 0x02, {}, ""};
const CpuId kSkx{"GenuineIntel", 6, 0x55, {}, ""};
const CpuId kSpr{"GenuineIntel", 6, 0x8f, {}, ""};
const CpuId kUnknown{"GenuineIntel", 6, 0x99, {}, ""};

TEST(Machine, RowsAreChosenFromVendorFamilyAndModel) {
  EXPECT_EQ(bw::find_microarch(kZen2)->name, "AMD Zen 2");
  EXPECT_EQ(bw::find_microarch(kZen3)->name, "AMD Zen 3");
  EXPECT_EQ(bw::find_microarch(kZen4)->name, "AMD Zen 4");
  EXPECT_EQ(bw::find_microarch(kZen5)->name, "AMD Zen 5");
  EXPECT_EQ(bw::find_microarch(kSkx)->name, "Intel Skylake-SP");
  EXPECT_EQ(bw::find_microarch(kSpr)->name, "Intel Sapphire Rapids");
  EXPECT_EQ(bw::find_microarch(kUnknown), nullptr);
  EXPECT_EQ(bw::find_microarch(CpuId{"HygonGenuine", 0x18, 0x01, {}, ""}), nullptr);
}

TEST(Machine, AModelNumberNoRowKnowsIsIdentifiedByItsFeatures) {
  // A guest showing a client part's model number with the server core's AMX and AVX512-FP16.
  const CpuId guest{"GenuineIntel", 6, 0xa7, {"amx-tile", "avx512-fp16"}, ""};
  ASSERT_NE(bw::find_microarch(guest), nullptr);
  EXPECT_EQ(bw::find_microarch(guest)->name, "Intel Xeon with AMX");
  EXPECT_EQ(bw::microarch_json(guest)["identified_by"], "amx-tile avx512-fp16");
  // one feature is not enough, and a known model number wins over the features
  EXPECT_EQ(bw::find_microarch(CpuId{"GenuineIntel", 6, 0xa7, {"amx-tile"}, ""}), nullptr);
  EXPECT_EQ(bw::find_microarch(CpuId{"GenuineIntel", 6, 0x8f, {"amx-tile", "avx512-fp16"}, ""})->name,
            "Intel Sapphire Rapids");
}

TEST(Machine, BandwallMicroarchForcesARow) {
  for (const std::string& name : bw::microarch_names()) {
    setenv("BANDWALL_MICROARCH", name.c_str(), 1);
    const CpuId id = bw::cpuid();
    EXPECT_EQ(bw::find_microarch(id)->name, name);
    EXPECT_EQ(bw::microarch_json(id)["forced"], "BANDWALL_MICROARCH=" + name);
  }
  setenv("BANDWALL_MICROARCH", "none", 1);
  EXPECT_EQ(bw::find_microarch(bw::cpuid()), nullptr);
  setenv("BANDWALL_MICROARCH", "AMD Zen 9", 1);
  EXPECT_THROW(bw::cpuid(), bw::UsageError);
  unsetenv("BANDWALL_MICROARCH");
}

TEST(Machine, Zen4SplitsAndZen5RunsFullWidth512BitOperations) {
  std::string why;
  const auto z4 = bw::ports_at(512, &why, kZen4), z4n = bw::ports_at(256, &why, kZen4);
  const auto z5 = bw::ports_at(512, &why, kZen5);
  ASSERT_TRUE(z4 && z4n && z5);
  EXPECT_DOUBLE_EQ(z4->fma * 2, z4n->fma);  // a 512-bit FMA takes both 256-bit pipes
  EXPECT_DOUBLE_EQ(z4->loads * 2, z4n->loads);
  EXPECT_DOUBLE_EQ(z5->fma, 2);
  EXPECT_DOUBLE_EQ(z5->loads, 2);
}

TEST(Machine, NoRowOrNoWidthGivesNoPortsAndSaysWhy) {
  std::string why;
  EXPECT_FALSE(bw::ports_at(512, &why, kZen2));
  EXPECT_NE(why.find("AMD Zen 2 has no 512-bit row"), std::string::npos) << why;
  EXPECT_FALSE(bw::ports_at(256, &why, kUnknown));
  EXPECT_NE(why.find("no machine model for GenuineIntel family 0x6 model 0x99"), std::string::npos) << why;
  const bw::json j = bw::microarch_json(kUnknown);
  EXPECT_TRUE(j.contains("unavailable"));
  EXPECT_EQ(bw::microarch_json(kZen4)["name"], "AMD Zen 4");
}

TEST(Machine, RowKernelBoundFollowsTheCpusRow) {
  for (const bw::iso3dfd::RowVariant* v : bw::iso3dfd::row_variants()) {
    SCOPED_TRACE(v->isa);
    if (v->shapes[0].counts_at(bw::iso3dfd::kSeedRadius).loads <= 0) {
      const auto b = bw::iso3dfd::incore_bound(*v, kZen5);
      EXPECT_EQ(b.cycles_per_vector, 0);
      EXPECT_NE(b.unavailable.find("not counted"), std::string::npos);
      continue;
    }
    const auto unknown = bw::iso3dfd::incore_bound(*v, kUnknown);
    EXPECT_EQ(unknown.cycles_per_vector, 0);
    EXPECT_NE(unknown.unavailable.find("no machine model"), std::string::npos);
    const auto z5 = bw::iso3dfd::incore_bound(*v, kZen5);
    ASSERT_GT(z5.cycles_per_vector, 0);
    if (v->lanes == 16) {  // AVX-512: Zen 4 issues half as many of each per cycle as Zen 5
      const auto z4 = bw::iso3dfd::incore_bound(*v, kZen4);
      EXPECT_DOUBLE_EQ(z4.cycles_per_vector, 2 * z5.cycles_per_vector);
      EXPECT_FALSE(bw::iso3dfd::incore_bound(*v, kZen2).unavailable.empty());
    }
  }
}

// The operation mix is timed for every variant this CPU runs (each under BANDWALL_MAX_ISA in the
// suite); its cycles need a model of the CPU, its seconds do not; the generic variant has no counts.
TEST(Machine, OperationMixIsTimedWhereItsOperationsAreCounted) {
  for (const bw::iso3dfd::RowVariant* v : bw::iso3dfd::row_variants()) {
    SCOPED_TRACE(v->isa);
    if (bw::iso3dfd::find_row_variant(v->isa) != v) continue;  // this CPU cannot run it
    const auto& shape = v->default_shape(4);
    const auto m = bw::iso3dfd::incore_mix(*v, shape, 4, kZen5);
    if (shape.counts_at(4).loads <= 0) {
      EXPECT_EQ(m.seconds_per_vector, 0);
      EXPECT_NE(m.unavailable.find("not counted"), std::string::npos) << m.unavailable;
      continue;
    }
    EXPECT_GT(m.seconds_per_vector, 0);
    EXPECT_GT(m.cycles_per_vector, 0);  // Zen 5 has a row at 256 and 512 bits
    const auto unknown = bw::iso3dfd::incore_mix(*v, shape, 4, kUnknown);
    EXPECT_GT(unknown.seconds_per_vector, 0);
    EXPECT_EQ(unknown.cycles_per_vector, 0);
    EXPECT_NE(unknown.unavailable.find("no machine model"), std::string::npos) << unknown.unavailable;
  }
}

}  // namespace
