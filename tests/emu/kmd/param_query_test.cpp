// GET_PARAM and QUERY (size negotiation and every query type).
#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

uint64_t param(Client& c, uint32_t p) {
  drm_npu_get_param g{};
  g.param = p;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &g), 0) << "param " << p;
  return g.value;
}

TEST(KmdGetParam, EveryParamFromConfig) {
  isa::DeviceConfig cfg;
  cfg.sram_size = 1 << 20;
  cfg.sram_banks = 8;
  cfg.num_semaphores = 16;
  cfg.watchdog_ms = 1234;
  cfg.features = NPU_FEATURE_FP32;
  Kmd kmd(cfg);
  Client c(kmd);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_DEVICE_ID), cfg.device_id);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_REVISION), cfg.revision);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_PLATFORM), DRM_NPU_PLATFORM_EMULATOR);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_API_VERSION),
            (DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_ISA_VERSION),
            (NPU_ISA_VERSION_MAJOR << 16) | NPU_ISA_VERSION_MINOR);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_SRAM_SIZE), 1u << 20);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_SRAM_BANKS), 8u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_NUM_ENGINES), 5u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_ENGINE_MASK), 0x1fu);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_CLOCK_HZ), cfg.clock_hz);
  const uint64_t caps = param(c, DRM_NPU_PARAM_CAPABILITIES);
  EXPECT_EQ(caps & DRM_NPU_CAP_INT8, 0u);
  EXPECT_NE(caps & DRM_NPU_CAP_FP32, 0u);
  EXPECT_NE(caps & DRM_NPU_CAP_PRIORITY, 0u);
  EXPECT_NE(caps & DRM_NPU_CAP_JOB_PROFILE, 0u);
  EXPECT_NE(caps & DRM_NPU_CAP_SKIP_VALIDATION, 0u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_NUM_SEMAPHORES), 16u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_WATCHDOG_MS), 1234u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_MAX_BO_SIZE), cfg.max_bo_size);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_FEATURES), NPU_FEATURE_FP32);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_VA_START), 0x1'0000'0000u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_VA_END), 0x100'0000'0000u);
  EXPECT_EQ(param(c, DRM_NPU_PARAM_VA_ALIGN), 64u * 1024);
}

TEST(KmdGetParam, UnknownParamOrIndexIsEinval) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_get_param g{};
  g.param = DRM_NPU_PARAM_COUNT;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &g), EINVAL);
  g.param = DRM_NPU_PARAM_DEVICE_ID;
  g.index = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &g), EINVAL);
}

TEST(KmdQuery, SizeZeroReportsTheSize) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_EQ(q.size, sizeof(drm_npu_device_info));
  q = {};
  q.type = DRM_NPU_QUERY_ENGINE_INFO;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_EQ(q.size, 5 * sizeof(drm_npu_engine_info));
}

TEST(KmdQuery, SmallerSizeCopiesThePrefix) {
  Kmd kmd;
  Client c(kmd);
  std::vector<uint8_t> buf(sizeof(drm_npu_device_info) + 16, 0xa5);
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.size = 8;
  q.data = reinterpret_cast<uintptr_t>(buf.data());
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_EQ(q.size, sizeof(drm_npu_device_info));  // the full size is written back
  uint32_t device_id = 0;
  std::memcpy(&device_id, buf.data(), 4);
  EXPECT_EQ(device_id, kmd.config().device_id);
  for (size_t i = 8; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xa5) << "byte " << i;
}

TEST(KmdQuery, LargerSizeCopiesWhatExists) {
  Kmd kmd;
  Client c(kmd);
  std::vector<uint8_t> buf(sizeof(drm_npu_device_info) + 16, 0xa5);
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.size = static_cast<uint32_t>(buf.size());
  q.data = reinterpret_cast<uintptr_t>(buf.data());
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_EQ(q.size, sizeof(drm_npu_device_info));
  drm_npu_device_info d{};
  std::memcpy(&d, buf.data(), sizeof(d));
  EXPECT_EQ(d.platform, DRM_NPU_PLATFORM_EMULATOR);
  EXPECT_EQ(d.num_engines, 5u);
  EXPECT_EQ(d.sram_size, kmd.config().sram_size);
  EXPECT_STREQ(d.name, kmd.config().name.c_str());
  for (size_t i = sizeof(d); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xa5);
}

TEST(KmdQuery, Errors) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_device_info d{};
  drm_npu_query q{};
  q.type = 99;
  q.size = sizeof(d);
  q.data = reinterpret_cast<uintptr_t>(&d);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);  // unknown type
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.flags = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
  q.flags = 0;
  q.pad = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
  q.pad = 0;
  q.arg0 = 1;  // unused arguments must be zero
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
  q.arg0 = 0;
  q.data = 0;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EFAULT);
  // Unknown context and job.
  drm_npu_context_state s{};
  EXPECT_EQ(c.query(DRM_NPU_QUERY_CONTEXT_STATE, &s, 7), ENOENT);
  EXPECT_EQ(c.query(DRM_NPU_QUERY_CONTEXT_STATE, &s, 0), ENOENT);
  const uint32_t ctx = c.ctx();
  drm_npu_job_profile p{};
  EXPECT_EQ(c.query(DRM_NPU_QUERY_JOB_PROFILE, &p, ctx, 1), ENOENT);
  EXPECT_EQ(c.query(DRM_NPU_QUERY_JOB_PROFILE, &p, ctx + 1, 1), ENOENT);
}

TEST(KmdQuery, EngineInfo) {
  isa::DeviceConfig cfg;
  cfg.dma.bytes_per_cycle = 48;
  cfg.dma.latency = 70;
  Kmd kmd(cfg);
  Client c(kmd);
  drm_npu_engine_info e[5]{};
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_ENGINE_INFO;
  q.size = sizeof(e);
  q.data = reinterpret_cast<uintptr_t>(e);
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  const char* names[] = {"cp", "dma_in", "dma_out", "matrix", "vector"};
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(e[i].id, i);
    EXPECT_STREQ(e[i].name, names[i]);
    EXPECT_EQ(e[i].queue_depth, cfg.queue_depth);
  }
  EXPECT_EQ(e[NPU_ENGINE_DMA_IN].throughput, 48u);
  EXPECT_EQ(e[NPU_ENGINE_DMA_OUT].latency, 70u);
  EXPECT_EQ(e[NPU_ENGINE_MATRIX].throughput, uint64_t{cfg.matrix.int8_rows} * cfg.matrix.int8_cols);
  EXPECT_EQ(e[NPU_ENGINE_VECTOR].throughput, cfg.vector.int8_lanes);
}

TEST(KmdQuery, ContextStateOfAFreshContext) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx(DRM_NPU_PRIORITY_HIGH);
  const drm_npu_context_state s = c.ctx_state(ctx);
  EXPECT_EQ(s.ctx_id, ctx);
  EXPECT_EQ(s.state, DRM_NPU_CTX_STATE_ACTIVE);
  EXPECT_EQ(s.priority, DRM_NPU_PRIORITY_HIGH);
  EXPECT_EQ(s.reset_count, 0u);
  EXPECT_EQ(s.last_submitted, 0u);
  EXPECT_EQ(s.last_completed, 0u);
  EXPECT_EQ(s.fault_seqno, 0u);
  EXPECT_EQ(s.last_fault.kind, DRM_NPU_FAULT_NONE);
}

}  // namespace
}  // namespace npu::emu::test
