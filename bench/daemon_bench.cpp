// The submission path through npu-daemon next to the in-process one: the round trip of an
// empty job (SUBMIT -> device -> WAIT) and back-to-back empty jobs, both through libnpu's
// kernel seam — EmulatorKernel in process, UnixKernel to a daemon (a Server on a thread of
// this process; the client side crosses a real UNIX socket, as another process would).
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <time.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "npu/daemon/server_thread.h"
#include "npu/emu/emulator_kernel.h"
#include "npu/isa/builder.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"

namespace {

struct Rig {
  std::unique_ptr<npu::daemon::ServerThread> server;
  std::shared_ptr<npu::KernelInterface> k;
  int fd = -1;
  uint32_t ctx = 0;
  drm_npu_bo_ref ref{};
  uint64_t cmd_size = 0;

  explicit Rig(bool daemon) {
    if (daemon) {
      auto s = npu::daemon::ServerThread::start();
      if (!s) throw std::runtime_error(s.error().message);
      server = std::move(*s);
      k = std::make_shared<npu::UnixKernel>(server->socket_path());
    } else {
      k = std::make_shared<npu::emu::EmulatorKernel>();
    }
    fd = k->open("npu");
    check(fd >= 0 ? 0 : -1, "open");
    npu::isa::CommandBufferBuilder b;
    auto bytes = b.finish();  // just END
    drm_npu_bo_create c{};
    c.size = 4096;
    check(k->ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c), "bo_create");
    drm_npu_bo_info info{};
    info.handle = c.handle;
    check(k->ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &info), "bo_info");
    void* p = k->mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                      static_cast<off_t>(info.mmap_offset));
    if (p == MAP_FAILED) throw std::runtime_error("mmap");
    std::memcpy(p, bytes.data(), bytes.size());
    k->munmap(p, info.size);
    cmd_size = bytes.size();
    ref = {c.handle, DRM_NPU_ACCESS_READ};
    drm_npu_ctx_create cc{};
    cc.priority = DRM_NPU_PRIORITY_NORMAL;
    check(k->ioctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &cc), "ctx_create");
    ctx = cc.ctx_id;
  }
  ~Rig() {
    k->close(fd);
    k.reset();
  }

  static void check(int rc, const char* what) {
    if (rc != 0) throw std::runtime_error(what);
  }

  uint64_t submit() {
    drm_npu_submit s{};
    s.ctx_id = ctx;
    s.cmd_handle = ref.handle;
    s.bo_count = 1;
    s.cmd_size = cmd_size;
    s.bos = reinterpret_cast<uint64_t>(&ref);
    check(k->ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s), "submit");
    return s.seqno;
  }

  void wait(uint64_t seqno) {
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = seqno;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    w.timeout_ns = now.tv_sec * 1000000000ll + now.tv_nsec + 5000000000ll;
    check(k->ioctl(fd, DRM_IOCTL_NPU_WAIT, &w), "wait");
  }

  void get_param() {
    drm_npu_get_param p{};
    p.param = DRM_NPU_PARAM_DEVICE_ID;
    check(k->ioctl(fd, DRM_IOCTL_NPU_GET_PARAM, &p), "get_param");
  }
};

// arg 0: in process, 1: through the daemon.
void BM_EmptyJobRoundTrip(benchmark::State& state) {
  Rig rig(state.range(0) == 1);
  for (auto _ : state) rig.wait(rig.submit());
  state.SetLabel(state.range(0) == 1 ? "daemon" : "in-process");
}
BENCHMARK(BM_EmptyJobRoundTrip)
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

void BM_EmptyJobThroughput(benchmark::State& state) {
  Rig rig(state.range(0) == 1);
  const int64_t batch = 256;
  for (auto _ : state) {
    uint64_t last = 0;
    for (int64_t i = 0; i < batch; ++i) last = rig.submit();
    rig.wait(last);
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(state.iterations() * batch),
                                                benchmark::Counter::kIsRate);
  state.SetLabel(state.range(0) == 1 ? "daemon" : "in-process");
}
BENCHMARK(BM_EmptyJobThroughput)->Arg(0)->Arg(1)->UseRealTime();

// The cost of one request/reply that does no device work (GET_PARAM).
void BM_IoctlRoundTrip(benchmark::State& state) {
  Rig rig(state.range(0) == 1);
  for (auto _ : state) rig.get_param();
  state.SetLabel(state.range(0) == 1 ? "daemon" : "in-process");
}
BENCHMARK(BM_IoctlRoundTrip)->Arg(0)->Arg(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
