// Isolation: a job can touch only the BOs its SUBMIT lists. Another file's BO address is
// rejected at SUBMIT; with SKIP_VALIDATION the device's MMU faults and nothing is written.
#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

class KmdIsolation : public ::testing::Test {
 protected:
  KmdIsolation() : victim(kmd), attacker(kmd) {
    // The victim's third BO has an address the attacker's file never allocates (the
    // attacker has only two BOs), so it is unmapped in the attacker's address space.
    victim.bo(4096);
    victim.bo(4096);
    target = victim.bo(4096);
    target_map = victim.map(target);
    std::memset(target_map, 0x5a, 4096);
    ctx = attacker.ctx();
    own = attacker.bo(4096);
    std::memset(attacker.map(own), 0xee, 4096);
    job = copy_job(own.va, target.va, 256);
    cmd = attacker.upload(job);
  }

  void expect_target_unchanged() {
    for (int i = 0; i < 4096; ++i) ASSERT_EQ(target_map[i], std::byte{0x5a}) << "byte " << i;
  }

  Kmd kmd;
  Client victim;
  Client attacker;
  BoHandle target, own, cmd;
  std::byte* target_map = nullptr;
  uint32_t ctx = 0;
  std::vector<std::byte> job;
};

TEST_F(KmdIsolation, OtherFilesBoIsRejectedAtSubmit) {
  ASSERT_NE(target.va, own.va);
  ASSERT_NE(target.va, cmd.va);
  EXPECT_EQ(attacker.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(own, kR)}), EFAULT);
  expect_target_unchanged();
}

TEST_F(KmdIsolation, SkipValidationFaultsInTheMmu) {
  uint64_t seqno = 0;
  ASSERT_EQ(attacker.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(own, kR)},
                            DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno),
            0);
  drm_npu_wait w{};
  ASSERT_EQ(attacker.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(w.fault.engine, NPU_ENGINE_DMA_OUT);
  EXPECT_EQ(w.fault.cmd_index, 3u);  // the DMA_STORE
  EXPECT_EQ(w.fault.address, target.va);
  expect_target_unchanged();
  EXPECT_EQ(attacker.ctx_state(ctx).state, DRM_NPU_CTX_STATE_BANNED);

  // The victim's own jobs are unaffected.
  const uint32_t vctx = victim.ctx();
  const BoHandle vsrc = victim.bo(4096);
  std::memset(victim.map(vsrc), 0x77, 4096);
  const auto vjob = copy_job(vsrc.va, target.va, 4096);
  const BoHandle vcmd = victim.upload(vjob);
  ASSERT_EQ(victim.submit(vctx, vcmd, vjob.size(), {ref(vcmd, kR), ref(vsrc, kR), ref(target, kW)},
                          0, &seqno),
            0);
  ASSERT_EQ(victim.wait(vctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(target_map[i], std::byte{0x77});
}

TEST_F(KmdIsolation, ReadOnlyReferenceFaultsOnWriteAtRunTime) {
  const BoHandle dst = attacker.bo(4096);
  std::byte* d = attacker.map(dst);
  const auto j = copy_job(own.va, dst.va, 128);
  const BoHandle c = attacker.upload(j);
  uint64_t seqno = 0;
  ASSERT_EQ(attacker.submit(ctx, c, j.size(), {ref(c, kR), ref(own, kR), ref(dst, kR)},
                            DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno),
            0);
  drm_npu_wait w{};
  ASSERT_EQ(attacker.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(w.fault.address, dst.va);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(d[i], std::byte{0});
}

}  // namespace
}  // namespace npu::emu::test
