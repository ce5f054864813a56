// Conformance: opening a device, its parameters and queries, contexts.
#include <gmock/gmock.h>

#include "cts.h"

namespace npu::cts {
namespace {

using ::testing::HasSubstr;

class DeviceCts : public CtsTest {};
NPU_CTS_INSTANTIATE(DeviceCts);

TEST_P(DeviceCts, ParamsDescribeTheDevice) {
  const DeviceParams& p = device_->params();
  EXPECT_FALSE(p.name.empty());
  EXPECT_EQ(p.api_major, DRM_NPU_API_VERSION_MAJOR);
  EXPECT_EQ(p.isa_major, NPU_ISA_VERSION_MAJOR);
  EXPECT_EQ(p.sram_size, cts_config().sram_size);
  EXPECT_EQ(p.num_engines, uint32_t{NPU_NUM_ENGINES});
  EXPECT_EQ(p.engine_mask, (1u << NPU_NUM_ENGINES) - 1);
  EXPECT_GT(p.clock_hz, 0u);
  EXPECT_GT(p.max_bo_size, 0u);
  EXPECT_EQ(p.watchdog_ms, cts_config().watchdog_ms);
  EXPECT_TRUE(p.has(DRM_NPU_CAP_JOB_PROFILE));
  if (p.va_range) {
    EXPECT_LT(p.va_range->start, p.va_range->end);
    EXPECT_GT(p.va_range->align, 0u);
  }
}

TEST_P(DeviceCts, ConfigMirrorsParams) {
  EXPECT_EQ(device_->config().sram_size, device_->params().sram_size);
  EXPECT_EQ(device_->config().num_semaphores, device_->params().num_semaphores);
  EXPECT_EQ(device_->config().features, device_->params().features);
}

TEST_P(DeviceCts, GetParamReadsOneValue) {
  auto v = device_->get_param(DRM_NPU_PARAM_SRAM_SIZE);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, device_->params().sram_size);
}

TEST_P(DeviceCts, UnknownParamFailsWithEinvalNamingIt) {
  auto v = device_->get_param(999);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, EINVAL);
  EXPECT_THAT(v.error().message, HasSubstr("GET_PARAM failed: Invalid argument"));
  EXPECT_THAT(v.error().message, HasSubstr("param 999"));
}

TEST_P(DeviceCts, DeviceInfoMatchesParams) {
  auto info = device_->device_info();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->device_id, device_->params().device_id);
  EXPECT_STREQ(info->name, device_->params().name.c_str());
}

TEST_P(DeviceCts, EngineInfoListsEveryEngine) {
  auto engines = device_->engine_info();
  ASSERT_TRUE(engines) << engines.error().message;
  ASSERT_EQ(engines->size(), size_t{NPU_NUM_ENGINES});
  for (uint32_t i = 0; i < NPU_NUM_ENGINES; ++i) {
    EXPECT_EQ((*engines)[i].id, i);
    EXPECT_FALSE((*engines)[i].name.empty());
    EXPECT_GT((*engines)[i].throughput, 0u);
  }
}

TEST_P(DeviceCts, CountersStartAtZero) {
  auto c = device_->counters();
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->jobs_completed, 0u);
  EXPECT_EQ(c->jobs_faulted, 0u);
}

TEST_P(DeviceCts, ContextStartsActiveWithItsPriority) {
  for (Priority p : {Priority::kLow, Priority::kNormal, Priority::kHigh, Priority::kRealtime}) {
    auto ctx = Context::create(*device_, p);
    ASSERT_TRUE(ctx) << ctx.error().message;
    EXPECT_NE(ctx->id(), 0u);
    auto s = ctx->state();
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_FALSE(s->banned);
    EXPECT_EQ(s->priority, p);
    EXPECT_EQ(s->last_submitted, 0u);
  }
}

TEST_P(DeviceCts, BadPriorityFailsWithEinval) {
  auto ctx = Context::create(*device_, static_cast<Priority>(9));
  ASSERT_FALSE(ctx);
  EXPECT_EQ(ctx.error().code, EINVAL);
  EXPECT_THAT(ctx.error().message, HasSubstr("create context: priority 9: CTX_CREATE failed"));
}

TEST_P(DeviceCts, TwoDevicesOnOneKernelShareTheDevice) {
  auto second = Device::open_with(kernel_, GetParam().path);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE(second->fd(), device_->fd());
  auto a = Context::create(*device_);
  auto b = Context::create(*second);
  ASSERT_TRUE(a && b);
}

}  // namespace
}  // namespace npu::cts
