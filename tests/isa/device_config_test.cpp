// DeviceConfig JSON parsing: defaults, round trip, unknown keys, bad values, the shipped
// default config file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "npu/isa/device_config.h"
#include "npu_isa.h"

namespace npu::isa {
namespace {

TEST(DeviceConfig, EmptyObjectIsDefaults) {
  auto c = DeviceConfig::from_json("{}");
  ASSERT_TRUE(c) << c.error().message;
  const DeviceConfig d;
  EXPECT_EQ(c->name, d.name);
  EXPECT_EQ(c->sram_size, 2u << 20);
  EXPECT_EQ(c->sram_banks, 16u);
  EXPECT_EQ(c->num_semaphores, 32u);
  EXPECT_EQ(c->features, NPU_FEATURES_ALL);
  EXPECT_EQ(c->dma.bytes_per_cycle, 32u);
  EXPECT_EQ(c->matrix.int8_rows, 32u);
  EXPECT_EQ(c->vector.transcendental_cost, 4u);
}

TEST(DeviceConfig, RoundTrip) {
  DeviceConfig c;
  c.name = "proto-x";
  c.sram_size = 4u << 20;
  c.sram_banks = 32;
  c.num_semaphores = 64;
  c.features = NPU_FEATURE_INT8;
  c.dma.bytes_per_cycle = 64;
  c.matrix.int8_cols = 64;
  c.vector.fp32_lanes = 32;
  c.clock_hz = 1'500'000'000;
  c.engine_threads = true;
  c.scheduling.preempt_cycles = 1234;
  c.scheduling.time_slice_cycles = 0;
  c.scheduling.preempt_every_safe_point = true;
  c.quota.bo_memory = 1 << 20;
  c.quota.contexts = 7;
  auto back = DeviceConfig::from_json(c.to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->to_json(), c.to_json());
  EXPECT_EQ(back->name, "proto-x");
  EXPECT_EQ(back->sram_size, 4u << 20);
  EXPECT_EQ(back->features, NPU_FEATURE_INT8);
  EXPECT_EQ(back->matrix.int8_cols, 64u);
  EXPECT_EQ(back->clock_hz, 1'500'000'000u);
  EXPECT_TRUE(back->engine_threads);
  EXPECT_EQ(back->scheduling.preempt_cycles, 1234u);
  EXPECT_EQ(back->scheduling.time_slice_cycles, 0u);
  EXPECT_TRUE(back->scheduling.preempt_every_safe_point);
  EXPECT_EQ(back->quota.bo_memory, 1u << 20);
  EXPECT_EQ(back->quota.contexts, 7u);
  EXPECT_EQ(DeviceConfig{}.to_json().find("preempt_every_safe_point"), std::string::npos);
  EXPECT_FALSE(DeviceConfig{}.engine_threads);
  EXPECT_EQ(DeviceConfig{}.to_json().find("engine_threads"), std::string::npos);
}

TEST(DeviceConfig, FeaturesAsListOrNumber) {
  auto a = DeviceConfig::from_json(R"({"features": ["int8", "transcendental"]})");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->features, NPU_FEATURE_INT8 | NPU_FEATURE_TRANSCENDENTAL);
  auto b = DeviceConfig::from_json(R"({"features": 2})");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->features, NPU_FEATURE_FP32);
  auto c = DeviceConfig::from_json(R"({"features": []})");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->features, 0u);
  auto bad = DeviceConfig::from_json(R"({"features": ["int4"]})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("int4"), std::string::npos) << bad.error().message;
  auto bits = DeviceConfig::from_json(R"({"features": 16})");
  ASSERT_FALSE(bits);
  EXPECT_NE(bits.error().message.find("features"), std::string::npos);
}

TEST(DeviceConfig, UnknownKeysAreNamed) {
  auto top = DeviceConfig::from_json(R"({"sram_sise": 65536})");
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().code, EINVAL);
  EXPECT_EQ(top.error().message, "device config: unknown key sram_sise");
  auto nested = DeviceConfig::from_json(R"({"dma": {"latency": 3, "burst": 4}})");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().message, "device config: unknown key dma.burst");
}

struct BadValue {
  const char* json;
  const char* key;
};

void PrintTo(const BadValue& v, std::ostream* os) {
  *os << v.json;
}

class DeviceConfigBad : public ::testing::TestWithParam<BadValue> {};

TEST_P(DeviceConfigBad, RejectedNamingKey) {
  auto c = DeviceConfig::from_json(GetParam().json);
  ASSERT_FALSE(c) << GetParam().json;
  EXPECT_EQ(c.error().code, EINVAL);
  EXPECT_NE(c.error().message.find(GetParam().key), std::string::npos) << c.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Values, DeviceConfigBad,
    ::testing::Values(
        BadValue{R"({"sram_size": 0})", "sram_size"},
        BadValue{R"({"sram_size": 1000})", "sram_size"},
        BadValue{R"({"sram_size": 65600})", "sram_size"},  // not banks*64 multiple
        BadValue{R"({"sram_banks": 0})", "sram_banks"},
        BadValue{R"({"num_semaphores": 0})", "num_semaphores"},
        BadValue{R"({"num_semaphores": 1025})", "num_semaphores"},
        BadValue{R"({"semaphore_max": 0})", "semaphore_max"},
        BadValue{R"({"clock_hz": 0})", "clock_hz"},
        BadValue{R"({"queue_depth": 0})", "queue_depth"},
        BadValue{R"({"watchdog_ms": -5})", "watchdog_ms"},
        BadValue{R"({"device_id": "x"})", "device_id"},
        BadValue{R"({"revision": 1.5})", "revision"}, BadValue{R"({"name": ""})", "name"},
        BadValue{R"({"dma": {"bytes_per_cycle": 0}})", "dma.bytes_per_cycle"},
        BadValue{R"({"dma": 3})", "dma"},
        BadValue{R"({"matrix": {"int8_rows": 0}})", "matrix.int8_rows"},
        BadValue{R"({"matrix": {"fp32_cols": 100000}})", "matrix.fp32_cols"},
        BadValue{R"({"vector": {"fp32_lanes": 0}})", "vector.fp32_lanes"},
        BadValue{R"({"vector": {"transcendental_cost": 0}})", "vector.transcendental_cost"},
        BadValue{R"({"max_bo_size": 1})", "max_bo_size"},
        BadValue{R"({"engine_threads": 1})", "engine_threads"},
        BadValue{R"({"scheduling": {"preemption": 1}})", "scheduling.preemption"},
        BadValue{R"({"scheduling": {"preempt_cycles": -1}})", "scheduling.preempt_cycles"},
        BadValue{R"({"scheduling": {"slice": 5}})", "scheduling.slice"},
        BadValue{R"({"scheduling": 3})", "scheduling"},
        BadValue{R"({"quota": {"contexts": 0}})", "quota.contexts"},
        BadValue{R"({"quota": {"jobs_in_flight": 0}})", "quota.jobs_in_flight"},
        BadValue{R"({"quota": {"bo_memory": "1G"}})", "quota.bo_memory"},
        BadValue{R"([1, 2])", "top level"}, BadValue{R"({"name": )", "invalid json"}));

TEST(DeviceConfig, LoadNamesTheFile) {
  auto missing = DeviceConfig::load("/nonexistent/npu.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ENOENT);
  EXPECT_NE(missing.error().message.find("/nonexistent/npu.json"), std::string::npos);

  const std::string path = ::testing::TempDir() + "/isa_bad_config.json";
  {
    std::ofstream f(path);
    f << R"({"bogus": 1})";
  }
  auto bad = DeviceConfig::load(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, path + ": device config: unknown key bogus");
  std::remove(path.c_str());
}

TEST(DeviceConfig, ShippedDefaultFileEqualsDefaults) {
  auto c = DeviceConfig::load(NPU_SOURCE_DIR "/emu/configs/default.json");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->to_json(), DeviceConfig{}.to_json());
}

}  // namespace
}  // namespace npu::isa
