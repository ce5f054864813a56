// The backends the conformance suite runs against, and the shared fixture.
#include <cstring>
#include <stdexcept>

#include "cts.h"
#include "npu/daemon/server_thread.h"
#include "npu/drm_kernel.h"
#include "npu/emu/emulator_kernel.h"
#include "npu/testing/mock_kernel.h"
#include "npu/tracing_kernel.h"
#include "npu/unix_kernel.h"

namespace npu::cts {

namespace {

// The "unix:" backend against a daemon of its own: a Server on a thread of this process (a
// fresh device per test, as the other backends), reached through libnpu's UnixKernel over a
// real socket, with BO memory shared by memfd.
class DaemonKernel final : public KernelInterface {
 public:
  explicit DaemonKernel(const isa::DeviceConfig& cfg) {
    auto s = daemon::ServerThread::start(cfg);
    if (!s) throw std::runtime_error(s.error().message);
    server_ = std::move(*s);
    client_ = std::make_shared<UnixKernel>(server_->socket_path());
  }
  ~DaemonKernel() override {
    client_.reset();  // closes the connections left open before the server goes
    server_.reset();
  }
  int open(std::string_view path) override { return client_->open(path); }
  int close(int fd) override { return client_->close(fd); }
  int ioctl(int fd, unsigned long request, void* arg) override {
    return client_->ioctl(fd, request, arg);
  }
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override {
    return client_->mmap(addr, length, prot, flags, fd, offset);
  }
  int munmap(void* addr, size_t length) override { return client_->munmap(addr, length); }

 private:
  std::unique_ptr<daemon::ServerThread> server_;
  std::shared_ptr<UnixKernel> client_;
};

}  // namespace

isa::DeviceConfig cts_config() {
  isa::DeviceConfig cfg;
  cfg.watchdog_ms = 300;
  return cfg;
}

const std::vector<Backend>& backends() {
  static const std::vector<Backend> list = [] {
    std::vector<Backend> list = {
        {"emulator",
         [](const isa::DeviceConfig& cfg) -> std::shared_ptr<KernelInterface> {
           return std::make_shared<emu::EmulatorKernel>(cfg);
         },
         {}},
        // The shipped gmock mock with its default actions: everything delegates to an
        // emulator, so libnpu must behave identically through the mock.
        {"mock",
         [](const isa::DeviceConfig& cfg) -> std::shared_ptr<KernelInterface> {
           return std::make_shared<::testing::NiceMock<testing::FakeNpuKernel>>(cfg);
         },
         {}},
        // The ioctl tracer must be transparent (results, errno, out-fields).
        {"traced",
         [](const isa::DeviceConfig& cfg) -> std::shared_ptr<KernelInterface> {
           return std::make_shared<TracingKernel>(std::make_shared<emu::EmulatorKernel>(cfg),
                                                  [](std::string_view) {});
         },
         {}},
        // A daemon over a UNIX socket (npu-daemon's server on a thread, libnpu's "unix:").
        {"daemon",
         [](const isa::DeviceConfig& cfg) -> std::shared_ptr<KernelInterface> {
           return std::make_shared<DaemonKernel>(cfg);
         },
         {}},
    };
    // libnpu on a device node (plain open/ioctl/mmap and libdrm): present when a node with our
    // driver is there — under npu-shim, the emulated one, in-process or through a daemon. Every
    // test opens a new file of that one device, which lives as long as the process.
    if (auto node = DrmKernel::resolve("drm:")) {
      list.push_back(
          {"drm",
           [](const isa::DeviceConfig&) -> std::shared_ptr<KernelInterface> {
             return std::make_shared<DrmKernel>();
           },
           {{"DeviceCts.CountersStartAtZero",
             "a device node's counters are the device's lifetime: other tests ran jobs on it"}},
           *node});
    }
    return list;
  }();
  return list;
}

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param.name;
}

void CtsTest::SetUp() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  // "Backends/BufferCts" + "AllocateMapWriteRead/emulator" -> "BufferCts.AllocateMapWriteRead"
  std::string suite = test->test_suite_name();
  suite = suite.substr(suite.find('/') + 1);
  std::string name = test->name();
  name = name.substr(0, name.find('/'));
  if (const auto it = GetParam().unsupported.find(suite + "." + name);
      it != GetParam().unsupported.end()) {
    GTEST_SKIP() << "unsupported on " << GetParam().name << ": " << it->second;
  }
  kernel_ = GetParam().make(cts_config());
  auto dev = Device::open_with(kernel_, GetParam().path);
  ASSERT_TRUE(dev) << dev.error().message;
  device_.emplace(std::move(*dev));
}

Buffer CtsTest::floats(const std::vector<float>& values) {
  auto b = Buffer::allocate(*device_, values.size() * sizeof(float));
  EXPECT_TRUE(b) << b.error().message;
  auto w = b->write(0, std::as_bytes(std::span(values)));
  EXPECT_TRUE(w) << w.error().message;
  return std::move(*b);
}

void ContextCtsTest::SetUp() {
  CtsTest::SetUp();
  if (IsSkipped() || HasFatalFailure()) return;
  auto ctx = Context::create(*device_);
  ASSERT_TRUE(ctx) << ctx.error().message;
  ctx_.emplace(std::move(*ctx));
}

std::vector<float> CtsTest::read_floats(Buffer& b, size_t n) {
  std::vector<float> out(n);
  auto r = b.read(0, std::as_writable_bytes(std::span(out)));
  EXPECT_TRUE(r) << r.error().message;
  return out;
}

void record_hang(CommandBuffer& cb) {
  cb.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  auto f = cb.finalize({.skip_validation = true});
  ASSERT_TRUE(f) << f.error().message;
}

}  // namespace npu::cts
