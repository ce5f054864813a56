// SUBMIT argument checks (one test per documented errno) and sequence numbers.
#include <cstring>
#include <string>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

class KmdSubmit : public ::testing::Test {
 protected:
  KmdSubmit() : c(kmd) {
    ctx = c.ctx();
    src = c.bo(4096);
    dst = c.bo(4096);
    job = copy_job(src.va, dst.va, 256);
    cmd = c.upload(job);
  }
  int submit(std::vector<drm_npu_bo_ref> refs, uint32_t flags = 0, uint64_t* seqno = nullptr) {
    return c.submit(ctx, cmd, job.size(), std::move(refs), flags, seqno);
  }
  std::vector<drm_npu_bo_ref> good() { return {ref(cmd, kR), ref(src, kR), ref(dst, kW)}; }

  Kmd kmd;
  Client c;
  uint32_t ctx = 0;
  BoHandle src, dst, cmd;
  std::vector<std::byte> job;
};

TEST_F(KmdSubmit, SucceedsAndCountsSeqnosPerContext) {
  uint64_t s1 = 0, s2 = 0, s3 = 0;
  ASSERT_EQ(submit(good(), 0, &s1), 0);
  ASSERT_EQ(submit(good(), 0, &s2), 0);
  EXPECT_EQ(s1, 1u);
  EXPECT_EQ(s2, 2u);
  const uint32_t other = c.ctx();
  ASSERT_EQ(c.submit(other, cmd, job.size(), good(), 0, &s3), 0);
  EXPECT_EQ(s3, 1u);
  drm_npu_wait w{};
  EXPECT_EQ(c.wait(ctx, s2, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  EXPECT_EQ(c.wait(other, s3, deadline_ms(5000), &w), 0);
  EXPECT_EQ(c.ctx_state(ctx).last_submitted, 2u);
}

// The driver reuses the validated program of equal command-buffer bytes (program_cache.h):
// a buffer rewritten in place between submits runs its new commands, and the old bytes,
// written back, their old ones.
TEST_F(KmdSubmit, ACommandBufferRewrittenInPlaceRunsItsNewCommands) {
  const BoHandle dst2 = c.bo(4096);
  std::byte* in = c.map(src);
  std::byte* out = c.map(dst);
  std::byte* out2 = c.map(dst2);
  ASSERT_TRUE(in != nullptr && out != nullptr && out2 != nullptr);
  std::byte* cmd_bytes = c.map(cmd);
  ASSERT_NE(cmd_bytes, nullptr);
  const std::vector<std::byte> to_dst2 = copy_job(src.va, dst2.va, 256);
  ASSERT_EQ(to_dst2.size(), job.size());
  const std::vector<drm_npu_bo_ref> refs = {ref(cmd, kR), ref(src, kR), ref(dst, kW),
                                            ref(dst2, kW)};
  for (int round = 0; round < 2; ++round) {
    for (const bool second : {false, true}) {
      SCOPED_TRACE(second ? "to dst2" : "to dst");
      std::memcpy(cmd_bytes, (second ? to_dst2 : job).data(), job.size());
      for (int i = 0; i < 256; ++i) in[i] = std::byte((i * 7 + round * 3 + second) & 0xff);
      std::memset(out, 0, 256);
      std::memset(out2, 0, 256);
      uint64_t seqno = 0;
      ASSERT_EQ(c.submit(ctx, cmd, job.size(), refs, 0, &seqno), 0);
      drm_npu_wait w{};
      ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
      ASSERT_EQ(w.status, DRM_NPU_JOB_OK);
      EXPECT_EQ(std::memcmp(second ? out2 : out, in, 256), 0);
      const std::vector<std::byte> zeros(256);
      EXPECT_EQ(std::memcmp(second ? out : out2, zeros.data(), 256), 0);
    }
  }
}

TEST_F(KmdSubmit, BadFlagsIsEinval) {
  EXPECT_EQ(submit(good(), 0x80), EINVAL);
}

TEST_F(KmdSubmit, UnknownContextIsEnoent) {
  EXPECT_EQ(c.submit(ctx + 5, cmd, job.size(), good()), ENOENT);
  EXPECT_EQ(c.submit(0, cmd, job.size(), good()), ENOENT);
}

TEST_F(KmdSubmit, BoCountIsChecked) {
  EXPECT_EQ(submit({}), EINVAL);
  std::vector<drm_npu_bo_ref> many(DRM_NPU_MAX_BO_REFS + 1, ref(cmd, kR));
  EXPECT_EQ(submit(many), EINVAL);
}

TEST_F(KmdSubmit, NullBosIsEfault) {
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.cmd_handle = cmd.handle;
  s.bo_count = 1;
  s.cmd_size = job.size();
  s.bos = 0;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_SUBMIT, &s), EFAULT);
}

TEST_F(KmdSubmit, UnknownHandleIsEnoent) {
  auto refs = good();
  refs.push_back({77, kR});
  EXPECT_EQ(submit(refs), ENOENT);
  refs.back().handle = 0;
  EXPECT_EQ(submit(refs), ENOENT);
}

TEST_F(KmdSubmit, BadAccessBitsAreEinval) {
  auto refs = good();
  refs[1].access = 0;
  EXPECT_EQ(submit(refs), EINVAL);
  refs[1].access = 4;
  EXPECT_EQ(submit(refs), EINVAL);
}

TEST_F(KmdSubmit, DuplicateIsEinval) {
  auto refs = good();
  refs.push_back(ref(src, kW));
  EXPECT_EQ(submit(refs), EINVAL);
}

TEST_F(KmdSubmit, CommandBoMustBeListedForRead) {
  EXPECT_EQ(submit({ref(src, kR), ref(dst, kW)}), EINVAL);                // not listed
  EXPECT_EQ(submit({ref(cmd, kW), ref(src, kR), ref(dst, kW)}), EINVAL);  // no READ
  drm_npu_submit s{};
  auto refs = good();
  s.ctx_id = ctx;
  s.cmd_handle = 99;  // does not exist at all
  s.bo_count = static_cast<uint32_t>(refs.size());
  s.cmd_size = job.size();
  s.bos = reinterpret_cast<uintptr_t>(refs.data());
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_SUBMIT, &s), ENOENT);
}

TEST_F(KmdSubmit, OffsetAndSizeChecks) {
  auto refs = good();
  EXPECT_EQ(c.submit(ctx, cmd, job.size(), refs, 0, nullptr, 4), EINVAL);  // unaligned
  EXPECT_EQ(c.submit(ctx, cmd, 0, refs), EINVAL);                          // empty
  EXPECT_EQ(c.submit(ctx, cmd, cmd.size + 8, refs), EOVERFLOW);
  EXPECT_EQ(c.submit(ctx, cmd, job.size(), refs, 0, nullptr, cmd.size), EOVERFLOW);
  EXPECT_EQ(c.submit(ctx, cmd, UINT64_MAX - 7, refs, 0, nullptr, 16), EOVERFLOW);  // wraps
  EXPECT_EQ(c.submit(ctx, cmd, 8, refs, 0, nullptr, UINT64_MAX - 7), EOVERFLOW);
}

TEST_F(KmdSubmit, CommandBufferAtAnOffset) {
  const BoHandle big = c.bo(8192);
  std::memcpy(c.map(big) + 1024, job.data(), job.size());
  uint64_t seqno = 0;
  ASSERT_EQ(
      c.submit(ctx, big, job.size(), {ref(big, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno, 1024),
      0);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
}

TEST_F(KmdSubmit, MalformedCommandBufferIsEinval) {
  std::vector<std::byte> bad = job;
  bad[0] = std::byte{0};  // magic
  const BoHandle b = c.upload(bad);
  EXPECT_EQ(c.submit(ctx, b, bad.size(), {ref(b, kR), ref(src, kR), ref(dst, kW)}), EINVAL);
  // Not even with SKIP_VALIDATION: the header must be sane.
  EXPECT_EQ(c.submit(ctx, b, bad.size(), {ref(b, kR), ref(src, kR), ref(dst, kW)},
                     DRM_NPU_SUBMIT_SKIP_VALIDATION),
            EINVAL);
  // A truncated buffer (not whole commands).
  EXPECT_EQ(submit(good(), 0, nullptr), 0);
  EXPECT_EQ(c.submit(ctx, cmd, job.size() - 8, good()), EINVAL);
  EXPECT_EQ(c.submit(ctx, cmd, job.size() - 8, good(), DRM_NPU_SUBMIT_SKIP_VALIDATION), EINVAL);
  // An unknown opcode in the middle.
  isa::CommandBufferBuilder builder;
  npu_cmd raw{};
  raw.hdr.opcode = 0x7f;
  builder.add(raw);
  const auto unknown = builder.finish();
  const BoHandle u = c.upload(unknown);
  EXPECT_EQ(c.submit(ctx, u, unknown.size(), {ref(u, kR)}), EINVAL);
}

/// QUERY LAST_ERROR: the text, or "" (a single NUL).
std::string last_error(Client& c) {
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_LAST_ERROR;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  std::string text(q.size, '\0');
  q.data = reinterpret_cast<uintptr_t>(text.data());
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_TRUE(!text.empty() && text.back() == '\0');
  if (!text.empty()) text.pop_back();
  return text;
}

TEST_F(KmdSubmit, LastErrorSaysWhyTheSubmitWasRejected) {
  EXPECT_EQ(last_error(c), "");
  // dst listed for read only: the store needs write; the reason names the command and field.
  EXPECT_EQ(submit({ref(cmd, kR), ref(src, kR), ref(dst, kR)}), EFAULT);
  const std::string why = last_error(c);
  EXPECT_NE(why.find("command 3"), std::string::npos) << why;
  EXPECT_NE(why.find("dma_store"), std::string::npos) << why;
  // A command buffer over NPU_MAX_CMDS is refused before it is read.
  std::vector<std::byte> header(sizeof(npu_cmdbuf_header));
  npu_cmdbuf_header h{};
  h.magic = NPU_ISA_MAGIC;
  h.version_major = NPU_ISA_VERSION_MAJOR;
  h.num_cmds = NPU_MAX_CMDS + 1;
  h.size = static_cast<uint32_t>(sizeof(h) + uint64_t{h.num_cmds} * NPU_CMD_SIZE);
  std::memcpy(header.data(), &h, sizeof(h));
  const BoHandle huge = c.upload(header);
  EXPECT_EQ(c.submit(ctx, huge, sizeof(h), {ref(huge, kR)}), EINVAL);
  EXPECT_NE(last_error(c).find("field num_cmds: 1048577 commands, more than the 1048576"),
            std::string::npos)
      << last_error(c);
  // A successful submit clears it; arguments don't reach the validator say nothing.
  EXPECT_EQ(submit(good()), 0);
  EXPECT_EQ(last_error(c), "");
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_LAST_ERROR;
  q.arg0 = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
}

TEST_F(KmdSubmit, ReadOnlyBoWithWriteIsEinval) {
  const BoHandle ro = c.bo(4096, DRM_NPU_BO_DEVICE_READ_ONLY);
  EXPECT_EQ(submit({ref(cmd, kR), ref(src, kR), ref(dst, kW), ref(ro, kRW)}), EINVAL);
  EXPECT_EQ(submit({ref(cmd, kR), ref(src, kR), ref(dst, kW), ref(ro, kR)}), 0);
}

TEST_F(KmdSubmit, RangeOutsideReferencedBosIsEfault) {
  // dst not listed at all.
  EXPECT_EQ(submit({ref(cmd, kR), ref(src, kR)}), EFAULT);
  // dst listed for read only: the store needs write.
  EXPECT_EQ(submit({ref(cmd, kR), ref(src, kR), ref(dst, kR)}), EFAULT);
  // The range runs past the end of the BO (into the guard gap).
  const auto past = copy_job(src.va, dst.va + dst.size - 128, 256);
  const BoHandle p = c.upload(past);
  EXPECT_EQ(c.submit(ctx, p, past.size(), {ref(p, kR), ref(src, kR), ref(dst, kW)}), EFAULT);
}

TEST_F(KmdSubmit, LaterWritesToTheCommandBoDoNotAffectTheJob) {
  uint64_t seqno = 0;
  std::byte* in = c.map(src);
  for (int i = 0; i < 256; ++i) in[i] = std::byte(i);
  ASSERT_EQ(submit(good(), 0, &seqno), 0);
  std::memset(c.map(cmd), 0, job.size());  // scribble over the command buffer
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  std::byte* out = c.map(dst);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], std::byte(i));
}

}  // namespace
}  // namespace npu::emu::test
