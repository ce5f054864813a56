// Conformance: command buffers, submit, wait, faults, bans, timeouts and profiles.
#include <gmock/gmock.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "cts.h"

namespace npu::cts {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class JobCts : public ContextCtsTest {
 protected:
  std::vector<float> ramp(uint32_t n) {
    std::vector<float> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) - n / 2.0f;
    return v;
  }
};
NPU_CTS_INSTANTIATE(JobCts);

TEST_P(JobCts, EmptyCommandBufferCompletes) {
  CommandBuffer cb(*device_);
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_EQ(job->seqno(), 1u);
  EXPECT_EQ(job->context_id(), ctx_->id());
  auto r = job->wait(5s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, JobStatus::kOk);
  EXPECT_LE(r->submit_ns, r->end_ns);
}

TEST_P(JobCts, DmaReluDmaProducesExpectedValues) {
  constexpr uint32_t n = 256;
  const std::vector<float> in = ramp(n);
  Buffer src = floats(in);
  Buffer dst = floats(std::vector<float>(n, -1.0f));
  // Counters are the device's lifetime (on a device node, other tests ran jobs): a delta.
  auto before = device_->counters();
  ASSERT_TRUE(before);
  CommandBuffer cb(*device_);
  record_relu(cb, src, dst, n);
  ASSERT_TRUE(cb.finalize());
  ASSERT_TRUE(cb.program().has_value());
  ASSERT_EQ(cb.uses().size(), 2u);
  EXPECT_EQ(cb.uses()[0].access, uint32_t{DRM_NPU_ACCESS_READ});
  EXPECT_EQ(cb.uses()[1].access, uint32_t{DRM_NPU_ACCESS_WRITE});

  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto r = job->wait(5s);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, JobStatus::kOk) << fault_kind_name(r->fault.kind);
  EXPECT_GT(r->cycles, 0u);
  const std::vector<float> out = read_floats(dst, n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(out[i], std::max(in[i], 0.0f)) << "element " << i;

  auto c = device_->counters();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->jobs_completed - before->jobs_completed, 1u);
  EXPECT_EQ(c->dma_bytes_in - before->dma_bytes_in, n * 4u);
}

TEST_P(JobCts, ProfileReportsEnginesAndTimeline) {
  constexpr uint32_t n = 64;
  Buffer src = floats(ramp(n));
  Buffer dst = floats(std::vector<float>(n));
  CommandBuffer cb(*device_);
  record_relu(cb, src, dst, n);
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto r = job->wait(5s);
  ASSERT_TRUE(r && r->ok());
  auto p = job->profile();
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->seqno, job->seqno());
  EXPECT_EQ(p->cycles, r->cycles);
  EXPECT_GT(p->busy_cycles[NPU_ENGINE_DMA_IN], 0u);
  EXPECT_GT(p->busy_cycles[NPU_ENGINE_VECTOR], 0u);
  EXPECT_EQ(p->dma_bytes_in, n * 4u);
  EXPECT_EQ(p->dma_bytes_out, n * 4u);
  EXPECT_EQ(p->vector_elements, n);
  ASSERT_FALSE(p->timeline.empty());
  bool saw_relu = false;
  for (const CommandTiming& t : p->timeline) {
    EXPECT_LE(t.start_cycle, t.end_cycle);
    if (t.opcode == NPU_OP_ACTIVATION) saw_relu = t.engine == NPU_ENGINE_VECTOR;
  }
  EXPECT_TRUE(saw_relu);
}

TEST_P(JobCts, SequenceNumbersIncreaseAndResultsAreCached) {
  CommandBuffer cb(*device_);
  auto j1 = ctx_->submit(cb);
  auto j2 = ctx_->submit(cb);
  ASSERT_TRUE(j1 && j2);
  EXPECT_EQ(j2->seqno(), j1->seqno() + 1);
  ASSERT_TRUE(j2->wait());
  ASSERT_TRUE(j1->wait());
  auto again = j1->wait(0ns);
  ASSERT_TRUE(again) << "a retired job's result is cached: " << again.error().message;
  EXPECT_EQ(again->status, JobStatus::kOk);
  auto s = ctx_->state();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->last_submitted, j2->seqno());
  EXPECT_EQ(s->last_completed, j2->seqno());
}

TEST_P(JobCts, CommandBufferCanBeResubmittedAfterMoreRecording) {
  constexpr uint32_t n = 16;
  Buffer src = floats(ramp(n));
  Buffer dst = floats(std::vector<float>(n));
  CommandBuffer cb(*device_);
  cb.nop();
  ASSERT_TRUE(cb.finalize());
  record_relu(cb, src, dst, n);
  EXPECT_FALSE(cb.finalized());
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto r = job->wait(5s);
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(read_floats(dst, n)[n - 1], ramp(n)[n - 1]);
}

TEST_P(JobCts, ValidationErrorNamesCommandAndField) {
  CommandBuffer cb(*device_);
  cb.nop();
  cb.conv2d({.w_addr = 1024,
             .out_addr = 2048,
             .in_h = 4,
             .in_w = 4,
             .in_c = 1,
             .out_h = 5,
             .out_w = 4,
             .out_c = 1,
             .in_dtype = NPU_DTYPE_FP32,
             .w_dtype = NPU_DTYPE_FP32,
             .out_dtype = NPU_DTYPE_FP32});
  auto f = cb.finalize();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, EINVAL);
  EXPECT_THAT(f.error().message, HasSubstr("finalize: command 1 (conv2d): field out_h"));
  auto job = ctx_->submit(cb);
  ASSERT_FALSE(job) << "submit finalizes and fails the same way";
  EXPECT_EQ(job.error().code, EINVAL);
}

TEST_P(JobCts, DramOutsideReferencedBuffersIsRejectedAtFinalize) {
  Buffer src = floats(std::vector<float>(16));
  Buffer dst = floats(std::vector<float>(16));
  CommandBuffer cb(*device_);
  cb.dma_load(src, src.allocation_size(), {.elem_size = 4, .size = {16, 1, 1}});
  auto f = cb.finalize();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, EFAULT);
  EXPECT_THAT(f.error().message, HasSubstr("command 0 (dma_load)"));
  EXPECT_THAT(f.error().message, HasSubstr("referenced for read"));
}

TEST_P(JobCts, ReadOnlyBufferCannotBeAStoreTarget) {
  auto ro = Buffer::allocate(*device_, 64, {.device_read_only = true});
  ASSERT_TRUE(ro);
  CommandBuffer cb(*device_);
  cb.dma_store(*ro, 0, {.size = {64, 1, 1}});
  auto f = cb.finalize();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, EINVAL);
  EXPECT_THAT(f.error().message, HasSubstr("dma_store: bo"));
  EXPECT_THAT(f.error().message, HasSubstr("read-only"));
}

TEST_P(JobCts, BufferOfAnotherDeviceIsRejected) {
  auto other = Device::open_with(GetParam().make(cts_config()), GetParam().path);
  ASSERT_TRUE(other);
  auto foreign = Buffer::allocate(*other, 64);
  ASSERT_TRUE(foreign);
  CommandBuffer cb(*device_);
  cb.dma_load(*foreign, 0, {.size = {64, 1, 1}});
  auto f = cb.finalize();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, EXDEV);
}

// A SUBMIT the kernel rejects carries the kernel's reason (QUERY LAST_ERROR), not only the
// errno's generic meaning.
TEST_P(JobCts, RejectedSubmitSaysWhy) {
  if (!device_->params().has(DRM_NPU_CAP_SKIP_VALIDATION)) {
    GTEST_SKIP() << "device cannot skip validation";
  }
  npu_cmdbuf_header h{};
  h.magic = NPU_ISA_MAGIC;
  h.version_major = NPU_ISA_VERSION_MAJOR;
  h.num_cmds = 2;  // but no commands follow
  h.size = sizeof(h);
  std::vector<std::byte> bytes(sizeof(h));
  std::memcpy(bytes.data(), &h, sizeof(h));
  CommandBuffer cb = CommandBuffer::from_bytes(*device_, bytes);
  ASSERT_TRUE(cb.finalize({.skip_validation = true}));
  auto job = ctx_->submit(cb);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, EINVAL);
  EXPECT_THAT(job.error().message, HasSubstr("field num_cmds: 2 commands do not fill"));
}

TEST_P(JobCts, DeviceFaultIsReportedAndBansTheContext) {
  if (!device_->params().has(DRM_NPU_CAP_SKIP_VALIDATION)) {
    GTEST_SKIP() << "device cannot skip validation";
  }
  Buffer src = floats(std::vector<float>(16));
  CommandBuffer cb(*device_);
  // Read past the end of the buffer: the validator would reject it, the device's MMU faults.
  const uint64_t past = src.allocation_size() + 4096;
  cb.dma_load(src, past, {.elem_size = 4, .size = {16, 1, 1}});
  ASSERT_TRUE(cb.finalize({.skip_validation = true}));
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto r = job->wait(5s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, JobStatus::kError);
  EXPECT_EQ(r->fault.kind, uint32_t{DRM_NPU_FAULT_MMU});
  EXPECT_EQ(r->fault.engine, uint32_t{NPU_ENGINE_DMA_IN});
  EXPECT_EQ(r->fault.cmd_index, 0u);
  EXPECT_EQ(r->fault.address, src.device_address() + past);

  auto s = ctx_->state();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->banned);
  EXPECT_EQ(s->fault_seqno, job->seqno());
  EXPECT_EQ(s->last_fault.kind, uint32_t{DRM_NPU_FAULT_MMU});

  CommandBuffer empty(*device_);
  auto next = ctx_->submit(empty);
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error().code, ECANCELED);
  EXPECT_THAT(next.error().message,
              HasSubstr("submit: ctx " + std::to_string(ctx_->id()) + ": SUBMIT failed"));
  EXPECT_THAT(next.error().message, HasSubstr("context banned"));

  // Other contexts go on.
  auto fresh = Context::create(*device_);
  ASSERT_TRUE(fresh);
  auto ok = fresh->submit(empty);
  ASSERT_TRUE(ok) << ok.error().message;
  auto ok_result = ok->wait(5s);
  ASSERT_TRUE(ok_result);
  EXPECT_TRUE(ok_result->ok());
}

TEST_P(JobCts, WaitTimesOutThenTheWatchdogEndsTheJob) {
  CommandBuffer cb(*device_);
  record_hang(cb);
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;

  auto poll = job->wait(0ns);
  ASSERT_FALSE(poll);
  EXPECT_EQ(poll.error().code, EBUSY);

  auto r = job->wait(20ms);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ETIMEDOUT);
  EXPECT_THAT(r.error().message,
              HasSubstr("wait: ctx " + std::to_string(ctx_->id()) + " seqno 1: WAIT failed"));

  auto final = job->wait(10s);  // the watchdog (cts_config: 300 ms) resets the device
  ASSERT_TRUE(final) << final.error().message;
  EXPECT_EQ(final->status, JobStatus::kError);
  EXPECT_EQ(final->fault.kind, uint32_t{DRM_NPU_FAULT_WATCHDOG});
  auto s = ctx_->state();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->banned);
  EXPECT_GE(s->reset_count, 1u);
}

TEST_P(JobCts, JobOutlivesItsContextAndDevice) {
  std::optional<Job> job;
  {
    auto dev = Device::open_with(kernel_, GetParam().path);
    ASSERT_TRUE(dev);
    auto ctx = Context::create(*dev);
    ASSERT_TRUE(ctx);
    CommandBuffer cb(*dev);
    auto j = ctx->submit(cb);
    ASSERT_TRUE(j);
    job.emplace(*j);
  }
  auto r = job->wait(5s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok());
}

TEST_P(JobCts, RawCommandBufferRunsWithExplicitUses) {
  constexpr uint32_t n = 32;
  Buffer src = floats(ramp(n));
  Buffer dst = floats(std::vector<float>(n));
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src.device_address(), .elem_size = 4, .size = {n, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  b.dma_store({.dram = dst.device_address(), .elem_size = 4, .size = {n, 1, 1}});
  const std::vector<std::byte> bytes = b.finish();
  CommandBuffer cb = CommandBuffer::from_bytes(*device_, bytes);
  cb.use(src, Access::kRead);
  cb.use(dst, Access::kWrite);
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto r = job->wait(5s);
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(read_floats(dst, n), ramp(n));
}

}  // namespace
}  // namespace npu::cts

namespace npu::cts {
namespace {

using namespace std::chrono_literals;

// BO_WAIT (API 1.3) through libnpu: a buffer is busy while a job that uses it is queued or
// running, whichever context submitted it, and idle once it retired.
class BufferWaitCts : public JobCts {};
NPU_CTS_INSTANTIATE(BufferWaitCts);

TEST_P(BufferWaitCts, ResultIsReadableOnceTheBufferIsIdle) {
  constexpr uint32_t n = 1024;
  const std::vector<float> in = ramp(n);
  Buffer src = floats(in);
  Buffer dst = floats(std::vector<float>(n, -1.0f));
  CommandBuffer cb(*device_);
  record_relu(cb, src, dst, n);
  ASSERT_TRUE(cb.finalize());
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto idle = dst.wait_idle(5s);  // no Job::wait: the buffer says when it is done
  ASSERT_TRUE(idle) << idle.error().message;
  const std::vector<float> out = read_floats(dst, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], std::max(in[i], 0.0f)) << "element " << i;
  EXPECT_TRUE(src.wait_idle(0ns));
}

TEST_P(BufferWaitCts, BusyWhileAHungJobUsesIt) {
  Buffer b = floats(std::vector<float>(16));
  CommandBuffer cb(*device_);
  cb.use(b, Access::kReadWrite);
  record_hang(cb);
  auto job = ctx_->submit(cb);
  ASSERT_TRUE(job) << job.error().message;
  auto poll = b.wait_idle(0ns);
  ASSERT_FALSE(poll);
  EXPECT_EQ(poll.error().code, EBUSY);
  EXPECT_THAT(poll.error().message, ::testing::HasSubstr("BO_WAIT failed"));
  auto late = b.wait_idle(20ms);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ETIMEDOUT);
  // The watchdog ends the job; the buffer is then idle.
  auto idle = b.wait_idle(10s);
  EXPECT_TRUE(idle) << idle.error().message;
  auto r = job->wait(0ns);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, JobStatus::kError);
}

}  // namespace
}  // namespace npu::cts
