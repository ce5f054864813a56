// How a user tests their own driver logic with npu::testing (docs/libnpu.md walks through
// it). `myapp::run_relu` stands for the user's code: it allocates buffers, records a job,
// submits it, waits with a retry-once-on-timeout policy and reads the result back. The tests
// inject the failures that code must survive and check what it did at the ioctl level.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/testing/mock_kernel.h"

// ---- the user's code under test --------------------------------------------------------

namespace myapp {

using namespace std::chrono_literals;

/// RELU of `in` on the NPU. Waits up to 1 s, once more on timeout, then gives up.
npu::Expected<std::vector<float>> run_relu(const npu::Device& dev, npu::Context& ctx,
                                           const std::vector<float>& in) {
  const auto n = static_cast<uint32_t>(in.size());
  auto src = npu::Buffer::allocate(dev, n * sizeof(float));
  if (!src) return src.error();
  auto dst = npu::Buffer::allocate(dev, n * sizeof(float));
  if (!dst) return dst.error();
  NPU_TRY(src->write(0, std::as_bytes(std::span(in))));

  npu::CommandBuffer cb(dev);
  cb.dma_load(*src, 0, {.elem_size = 4, .size = {n, 1, 1}});
  cb.sem_signal(NPU_ENGINE_DMA_IN, 0);
  cb.sem_wait(NPU_ENGINE_VECTOR, 0);
  cb.activation({.func = NPU_ACT_RELU, .shape = {1, 1, 1, n}, .in_addr = 0, .out_addr = n * 4});
  cb.sem_signal(NPU_ENGINE_VECTOR, 1);
  cb.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  cb.dma_store(*dst, 0, {.sram = n * 4, .elem_size = 4, .size = {n, 1, 1}});
  auto job = ctx.submit(cb);
  if (!job) return job.error();

  auto result = job->wait(1s);
  if (!result && result.error().code == ETIMEDOUT) result = job->wait(1s);  // one retry
  if (!result) return result.error();
  if (!result->ok()) {
    return npu::make_error(EIO, std::string("relu job failed: fault ") +
                                    npu::fault_kind_name(result->fault.kind) + " at command " +
                                    std::to_string(result->fault.cmd_index));
  }
  std::vector<float> out(n);
  NPU_TRY(dst->read(0, std::as_writable_bytes(std::span(out))));
  return out;
}

}  // namespace myapp

// ---- the user's tests ---------------------------------------------------------------------

namespace {

using npu::testing::FakeNpuKernel;
using ::testing::_;
using ::testing::AtLeast;
using ::testing::HasSubstr;
using ::testing::NiceMock;

class ReluRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dev = npu::Device::open_with(kernel_);
    ASSERT_TRUE(dev) << dev.error().message;
    dev_.emplace(std::move(*dev));
    auto ctx = npu::Context::create(*dev_);
    ASSERT_TRUE(ctx) << ctx.error().message;
    ctx_.emplace(std::move(*ctx));
  }

  // NiceMock: calls the test does not EXPECT are delegated to the emulator silently.
  std::shared_ptr<NiceMock<FakeNpuKernel>> kernel_ = std::make_shared<NiceMock<FakeNpuKernel>>();
  std::optional<npu::Device> dev_;
  std::optional<npu::Context> ctx_;
  const std::vector<float> in_ = {-2, -1, 0, 1, 2, 3, -4, 5};
  const std::vector<float> want_ = {0, 0, 0, 1, 2, 3, 0, 5};
};

TEST_F(ReluRunnerTest, ComputesRelu) {
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, want_);
}

TEST_F(ReluRunnerTest, SurvivesInterruptedWaits) {
  kernel_->interrupt_next_wait(3);  // three signals arrive while waiting
  EXPECT_CALL(*kernel_, ioctl(_, DRM_IOCTL_NPU_WAIT, _)).Times(4);  // 3 x EINTR + the real one
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, want_);
}

TEST_F(ReluRunnerTest, RetriesOnceAfterATimeout) {
  kernel_->timeout_next_wait();
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, want_);
  EXPECT_EQ(kernel_->calls(DRM_IOCTL_NPU_WAIT), 2u);
}

TEST_F(ReluRunnerTest, GivesUpAfterTwoTimeouts) {
  kernel_->timeout_next_wait(2);
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ETIMEDOUT);
  EXPECT_THAT(out.error().message, HasSubstr("WAIT failed: Connection timed out"));
}

TEST_F(ReluRunnerTest, ReportsADeviceFault) {
  kernel_->fault_next_wait({.kind = DRM_NPU_FAULT_MMU,
                            .engine = NPU_ENGINE_DMA_IN,
                            .cmd_index = 0,
                            .address = 0xdead000});
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, EIO);
  EXPECT_EQ(out.error().message, "relu job failed: fault mmu at command 0");
}

TEST_F(ReluRunnerTest, FreesItsBuffersWhenSubmitFails) {
  kernel_->fail_next(DRM_IOCTL_NPU_SUBMIT, EINVAL);
  // src, dst and the command buffer's own BO are all closed on the way out.
  EXPECT_CALL(*kernel_, ioctl(_, DRM_IOCTL_NPU_BO_CLOSE, _)).Times(3);
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, EINVAL);
  EXPECT_THAT(out.error().message, HasSubstr("submit: ctx"));
  ::testing::Mock::VerifyAndClearExpectations(kernel_.get());
}

TEST_F(ReluRunnerTest, FreesTheFirstBufferWhenTheSecondAllocationFails) {
  kernel_->on_next(DRM_IOCTL_NPU_BO_CREATE, [](npu::KernelInterface& real, int fd, void* arg) {
    return real.ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, arg);  // the first allocation succeeds
  });
  kernel_->fail_next_bo_create(ENOMEM);  // the second one does not
  EXPECT_CALL(*kernel_, ioctl(_, DRM_IOCTL_NPU_BO_CLOSE, _)).Times(1);
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ENOMEM);
  EXPECT_THAT(out.error().message, HasSubstr("allocate: 32 bytes: BO_CREATE failed"));
  ::testing::Mock::VerifyAndClearExpectations(kernel_.get());
}

TEST_F(ReluRunnerTest, SubmitsTheExpectedCommandBuffer) {
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_TRUE(out) << out.error().message;
  const auto submits = kernel_->submits();
  ASSERT_EQ(submits.size(), 1u);
  const npu::testing::SubmitRecord& s = submits[0];
  EXPECT_EQ(s.error, 0);
  EXPECT_EQ(s.args.ctx_id, ctx_->id());
  ASSERT_EQ(s.bos.size(), 3u);  // the command BO, src (read), dst (write)
  EXPECT_EQ(s.bos[1].access, uint32_t{DRM_NPU_ACCESS_READ});
  EXPECT_EQ(s.bos[2].access, uint32_t{DRM_NPU_ACCESS_WRITE});
  auto program = s.program(dev_->config());
  ASSERT_TRUE(program) << program.error().message;
  ASSERT_EQ(program->cmds.size(), 8u);  // 7 recorded + END
  EXPECT_EQ(program->cmds[3].hdr.opcode, NPU_OP_ACTIVATION);
  EXPECT_EQ(program->cmds[3].activation.func, NPU_ACT_RELU);
  EXPECT_EQ(program->cmds[7].hdr.opcode, NPU_OP_END);
}

// The synchronization checker's result can be scripted too: code that reacts to hazards
// (refuses the results, logs them) is tested without writing a racy command buffer.
TEST_F(ReluRunnerTest, ScriptedHazardsReachTheJob) {
  using namespace std::chrono_literals;
  npu::HazardReport fake;
  fake.checked = true;
  fake.total = 1;
  fake.hazards = {{npu::HazardKind::kWar,
                   npu::MemorySpace::kSram,
                   0,
                   32,
                   {3, NPU_ENGINE_VECTOR, NPU_OP_ACTIVATION},
                   {5, NPU_ENGINE_DMA_IN, NPU_OP_DMA_LOAD}}};
  kernel_->report_hazards_next_submit(fake);
  npu::CommandBuffer cb(*dev_);
  cb.nop(NPU_ENGINE_VECTOR);
  auto job = ctx_->submit(cb, {.racecheck = true});
  ASSERT_TRUE(job) << job.error().message;
  ASSERT_TRUE(job->wait(5s));
  auto h = job->hazards();
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->checked);
  EXPECT_EQ(h->total, 1u);
  EXPECT_EQ(h->hazards, fake.hazards);
  ASSERT_EQ(kernel_->submits().size(), 1u);
  EXPECT_TRUE(kernel_->submits()[0].racecheck());

  // The next job is not scripted: it reports what the device's checker found (nothing).
  auto next = ctx_->submit(cb, {.racecheck = true});
  ASSERT_TRUE(next && next->wait(5s));
  auto clean = next->hazards();
  ASSERT_TRUE(clean) << clean.error().message;
  EXPECT_TRUE(clean->checked);
  EXPECT_TRUE(clean->hazards.empty());
}

TEST_F(ReluRunnerTest, CountsIoctlsWithExpectCall) {
  // An EXPECT_CALL without an action keeps the delegating default: count, do not replace.
  EXPECT_CALL(*kernel_, ioctl(_, DRM_IOCTL_NPU_SUBMIT, _)).Times(1);
  EXPECT_CALL(*kernel_, mmap(_, _, _, _, _, _)).Times(AtLeast(2));
  auto out = myapp::run_relu(*dev_, *ctx_, in_);
  ASSERT_TRUE(out) << out.error().message;
}

}  // namespace
