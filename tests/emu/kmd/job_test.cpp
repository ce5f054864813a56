// Real jobs through the device: a DMA round trip, its profile and the device counters.
#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

TEST(KmdJob, DmaRoundTripCopiesTheBytes) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  constexpr uint32_t kBytes = 3000;
  const BoHandle src = c.bo(kBytes, DRM_NPU_BO_DEVICE_READ_ONLY);
  const BoHandle dst = c.bo(kBytes);
  std::byte* in = c.map(src);
  std::byte* out = c.map(dst);
  for (uint32_t i = 0; i < kBytes; ++i) in[i] = std::byte((i * 31 + 7) & 0xff);
  const auto job = copy_job(src.va, dst.va, kBytes);
  const BoHandle cmd = c.upload(job);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
            0);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  ASSERT_EQ(w.status, DRM_NPU_JOB_OK);
  EXPECT_GT(w.cycles, 0u);
  for (uint32_t i = 0; i < kBytes; ++i) ASSERT_EQ(out[i], in[i]) << "byte " << i;
  for (uint32_t i = kBytes; i < dst.size; ++i) ASSERT_EQ(out[i], std::byte{0});

  // JOB_PROFILE: header then one entry per executed command.
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_JOB_PROFILE;
  q.arg0 = ctx;
  q.arg1 = seqno;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  ASSERT_GE(q.size, sizeof(drm_npu_job_profile));
  std::vector<std::byte> buf(q.size);
  q.data = reinterpret_cast<uintptr_t>(buf.data());
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  drm_npu_job_profile p{};
  std::memcpy(&p, buf.data(), sizeof(p));
  EXPECT_EQ(p.seqno, seqno);
  EXPECT_EQ(p.cycles, w.cycles);
  EXPECT_EQ(p.dma_bytes_in, kBytes);
  EXPECT_EQ(p.dma_bytes_out, kBytes);
  EXPECT_EQ(p.num_cmds, 5u);
  ASSERT_EQ(q.size, sizeof(p) + p.num_cmds * sizeof(drm_npu_cmd_profile));
  std::vector<drm_npu_cmd_profile> cmds(p.num_cmds);
  std::memcpy(cmds.data(), buf.data() + sizeof(p), cmds.size() * sizeof(cmds[0]));
  EXPECT_EQ(cmds[0].opcode, NPU_OP_DMA_LOAD);
  EXPECT_EQ(cmds[0].engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(cmds[3].opcode, NPU_OP_DMA_STORE);
  EXPECT_GE(cmds[3].start_cycle, cmds[0].end_cycle);  // ordered by the semaphore

  // COUNTERS accumulate over the device's lifetime.
  drm_npu_counters k{};
  ASSERT_EQ(c.query(DRM_NPU_QUERY_COUNTERS, &k), 0);
  EXPECT_EQ(k.jobs_completed, 1u);
  EXPECT_EQ(k.jobs_faulted, 0u);
  EXPECT_EQ(k.dma_bytes_in, kBytes);
  EXPECT_EQ(k.total_cycles, w.cycles);
  EXPECT_EQ(k.commands[NPU_ENGINE_DMA_IN], 2u);  // DMA_LOAD and SEM_SIGNAL
}

TEST(KmdJob, IdenticalJobsHaveIdenticalCycles) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const BoHandle src = c.bo(65536);
  const BoHandle dst = c.bo(65536);
  const auto job = copy_job(src.va, dst.va, 65536);
  const BoHandle cmd = c.upload(job);
  uint64_t cycles = 0;
  for (int i = 0; i < 5; ++i) {
    uint64_t seqno = 0;
    ASSERT_EQ(c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
              0);
    drm_npu_wait w{};
    ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
    if (i > 0) {
      EXPECT_EQ(w.cycles, cycles);
    }
    cycles = w.cycles;
  }
}

TEST(KmdJob, DeviceParseFaultWithSkipValidationBansTheContext) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  isa::CommandBufferBuilder b;
  npu_cmd raw{};
  raw.hdr.opcode = 0x7f;  // unknown: only the device notices with SKIP_VALIDATION
  raw.hdr.engine = NPU_ENGINE_VECTOR;
  b.nop();
  b.add(raw);
  const auto bytes = b.finish();
  const BoHandle cmd = c.upload(bytes);
  uint64_t seqno = 0;
  ASSERT_EQ(
      c.submit(ctx, cmd, bytes.size(), {ref(cmd, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno), 0);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(w.fault.cmd_index, 1u);
  const auto s = c.ctx_state(ctx);
  EXPECT_EQ(s.state, DRM_NPU_CTX_STATE_BANNED);
  EXPECT_EQ(s.fault_seqno, seqno);
  EXPECT_EQ(s.last_fault.kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(s.reset_count, 0u);  // a fault is not a reset
  EXPECT_EQ(c.submit(ctx, cmd, bytes.size(), {ref(cmd, kR)}), ECANCELED);
  drm_npu_counters k{};
  ASSERT_EQ(c.query(DRM_NPU_QUERY_COUNTERS, &k), 0);
  EXPECT_EQ(k.jobs_faulted, 1u);
  EXPECT_EQ(k.device_resets, 0u);
}

}  // namespace
}  // namespace npu::emu::test
