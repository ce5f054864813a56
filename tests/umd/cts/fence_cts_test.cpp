// Conformance (API 1.3): fences and shared buffers through libnpu, on every backend — the
// in-process emulator, the gmock fake, the tracer, a daemon over a socket (fences and
// exported buffers travel as descriptors) and, under npu-shim, the device node.
#include <gmock/gmock.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "cts.h"

namespace npu::cts {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class FenceCts : public CtsTest {
 protected:
  static std::vector<float> ramp(uint32_t n) {
    std::vector<float> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) - n / 2.0f;
    return v;
  }

  // A job only the watchdog ends (cts_config: 300 ms), on its own context: it holds the
  // device while the jobs under test queue behind it. On a REALTIME context it is the first
  // pick even if the runner has not picked it yet when the jobs under test arrive.
  Expected<Job> block_device(Context& ctx) {
    CommandBuffer cb(*device_);
    record_hang(cb);
    return ctx.submit(cb, {.fence_out = true});
  }

  Expected<Context> ctx(Priority p) { return Context::create(*device_, p); }
};
NPU_CTS_INSTANTIATE(FenceCts);

TEST_P(FenceCts, OutFenceSignalsWithTheJobsStatus) {
  auto c = ctx(Priority::kNormal);
  ASSERT_TRUE(c);
  Buffer src = floats(ramp(64)), dst = floats(std::vector<float>(64));
  CommandBuffer cb(*device_);
  record_relu(cb, src, dst, 64);
  auto job = c->submit(cb, {.fence_out = true});
  ASSERT_TRUE(job) << job.error().message;
  auto fence = job->fence();
  ASSERT_TRUE(fence) << fence.error().message;
  auto status = fence->wait(5s);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(*status, JobStatus::kOk);
  EXPECT_TRUE(fence->signalled());
  auto again = fence->dup();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again->status(), JobStatus::kOk);
  // A job without fence_out has none.
  auto plain = c->submit(cb);
  ASSERT_TRUE(plain);
  auto none = plain->fence();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ENOENT);
}

// A: relu(src) -> mid on a NORMAL context; B: relu(mid) -> out on a HIGH one, after A's
// fence. Both queue behind a job that holds the device; strict priority would run B first,
// reading mid before A wrote it. With the fence, B's output is relu(src); without, it is
// relu(-1) = 0 (the second case shows the check can fail).
TEST_P(FenceCts, FenceOrdersAJobOfAnotherContext) {
  for (bool fenced : {true, false}) {
    SCOPED_TRACE(fenced ? "with the fence" : "without the fence");
    auto blocker = ctx(Priority::kRealtime);
    auto normal = ctx(Priority::kNormal);
    auto high = ctx(Priority::kHigh);
    ASSERT_TRUE(blocker && normal && high);
    constexpr uint32_t n = 256;
    const std::vector<float> in = ramp(n);
    Buffer src = floats(in), mid = floats(std::vector<float>(n, -1.0f)),
           out = floats(std::vector<float>(n, -7.0f));
    auto gate = block_device(*blocker);
    ASSERT_TRUE(gate) << gate.error().message;
    CommandBuffer a(*device_), b(*device_);
    record_relu(a, src, mid, n);
    record_relu(b, mid, out, n);
    auto ja = normal->submit(a, {.fence_out = true});
    ASSERT_TRUE(ja) << ja.error().message;
    std::vector<Fence> after;
    if (fenced) {
      auto f = ja->fence();
      ASSERT_TRUE(f);
      after.push_back(std::move(*f));
    }
    auto jb = high->submit(b, {.after = after});
    ASSERT_TRUE(jb) << jb.error().message;
    auto rb = jb->wait(10s);
    ASSERT_TRUE(rb) << rb.error().message;
    ASSERT_EQ(rb->status, JobStatus::kOk);
    ASSERT_TRUE(ja->wait(10s));
    const std::vector<float> got = read_floats(out, n);
    for (uint32_t i = 0; i < n; ++i) {
      const float want = fenced ? std::max(in[i], 0.0f) : 0.0f;
      ASSERT_EQ(got[i], want) << "element " << i;
    }
  }
}

TEST_P(FenceCts, FailedDependencyAbortsTheJob) {
  auto a = ctx(Priority::kNormal), b = ctx(Priority::kNormal);
  ASSERT_TRUE(a && b);
  auto hung = block_device(*a);
  ASSERT_TRUE(hung);
  auto dep = hung->fence();
  ASSERT_TRUE(dep);
  Buffer src = floats(ramp(16)), dst = floats(std::vector<float>(16));
  CommandBuffer cb(*device_);
  record_relu(cb, src, dst, 16);
  std::vector<Fence> after;
  after.push_back(std::move(*dep));
  auto job = b->submit(cb, {.fence_out = true, .after = after});
  ASSERT_TRUE(job) << job.error().message;
  auto r = job->wait(10s);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, JobStatus::kAborted);
  EXPECT_EQ(r->fault.kind, uint32_t{DRM_NPU_FAULT_DEPENDENCY});
  auto f = job->fence();
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->status(), JobStatus::kAborted);
  auto s = b->state();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->banned) << "a failed dependency does not ban the waiting context";
}

TEST_P(FenceCts, WaitAnyAndAll) {
  auto a = ctx(Priority::kNormal), b = ctx(Priority::kNormal);
  ASSERT_TRUE(a && b);
  auto hung = block_device(*a);
  ASSERT_TRUE(hung);
  CommandBuffer empty(*device_);
  auto quick = b->submit(empty, {.fence_out = true});
  ASSERT_TRUE(quick);
  std::vector<Fence> fences;
  fences.push_back(std::move(*hung->fence()));
  fences.push_back(std::move(*quick->fence()));
  auto none = wait_all(fences, 0ns);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, EBUSY);
  auto any = wait_any(fences, 10s);
  ASSERT_TRUE(any) << any.error().message;
  auto all = wait_all(fences, 10s);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(*fences[0].status(), JobStatus::kError);
  EXPECT_EQ(*fences[1].status(), JobStatus::kOk);
}

TEST_P(FenceCts, BufferSharedBetweenTwoDevices) {
  auto other = Device::open_with(kernel_, GetParam().path);  // another open file
  ASSERT_TRUE(other) << other.error().message;
  Buffer mine = floats(ramp(64));
  auto fd = mine.export_fd();
  ASSERT_TRUE(fd) << fd.error().message;
  auto theirs = other->import_buffer(fd->get());
  ASSERT_TRUE(theirs) << theirs.error().message;
  EXPECT_EQ(theirs->allocation_size(), mine.allocation_size());
  EXPECT_EQ(read_floats(*theirs, 64), ramp(64)) << "one memory, two files";
  // A job on the other file reads the shared memory.
  auto c = Context::create(*other);
  ASSERT_TRUE(c);
  auto out = Buffer::allocate(*other, 64 * 4);
  ASSERT_TRUE(out);
  CommandBuffer cb(*other);
  record_relu(cb, *theirs, *out, 64);
  auto job = c->submit(cb);
  ASSERT_TRUE(job);
  ASSERT_TRUE(job->wait(5s));
  const std::vector<float> got = read_floats(*out, 64);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(got[i], std::max(ramp(64)[i], 0.0f));
  // Its own export comes back as the buffer it already is.
  auto own = device_->import_buffer(fd->get());
  ASSERT_FALSE(own);
  EXPECT_EQ(own.error().code, EEXIST);
  // A descriptor that is no exported buffer.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  auto bad = other->import_buffer(p[0]);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL);
  EXPECT_THAT(bad.error().message, HasSubstr("BO_IMPORT failed"));
  ::close(p[0]);
  ::close(p[1]);
}

TEST_P(FenceCts, EventFdTellsOfAFault) {
  auto c = ctx(Priority::kNormal);
  ASSERT_TRUE(c);
  auto ev = c->event_fd();
  ASSERT_TRUE(ev) << ev.error().message;
  pollfd p{ev->get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0) << "nothing happened yet";
  auto hung = block_device(*c);
  ASSERT_TRUE(hung);
  ASSERT_TRUE(hung->wait(10s));
  EXPECT_EQ(::poll(&p, 1, 5000), 1) << "the watchdog's reset bans the context";
  auto s = c->state();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->banned);
}

}  // namespace
}  // namespace npu::cts
