// Submission-path benchmarks through the mock kernel driver's ioctls: the round trip of an
// empty job (SUBMIT -> device -> WAIT) and the throughput of back-to-back empty jobs.
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <time.h>

#include <cstring>
#include <stdexcept>

#include "npu/emu/kmd.h"
#include "npu/isa/builder.h"
#include "npu_accel.h"

namespace {

struct Rig {
  npu::emu::Kmd kmd;
  int fd = -1;
  uint32_t ctx = 0;
  drm_npu_bo_ref ref{};
  uint64_t cmd_size = 0;

  Rig() {
    fd = kmd.open();
    npu::isa::CommandBufferBuilder b;
    auto bytes = b.finish();  // just END
    drm_npu_bo_create c{};
    c.size = 4096;
    check(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c), "bo_create");
    drm_npu_bo_info info{};
    info.handle = c.handle;
    check(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &info), "bo_info");
    void* p = kmd.mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       static_cast<off_t>(info.mmap_offset));
    std::memcpy(p, bytes.data(), bytes.size());
    kmd.munmap(p, info.size);
    cmd_size = bytes.size();
    ref = {c.handle, DRM_NPU_ACCESS_READ};
    drm_npu_ctx_create cc{};
    cc.priority = DRM_NPU_PRIORITY_NORMAL;
    check(kmd.ioctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &cc), "ctx_create");
    ctx = cc.ctx_id;
  }
  ~Rig() { kmd.close(fd); }

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
    check(kmd.ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s), "submit");
    return s.seqno;
  }

  void wait(uint64_t seqno) {
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = seqno;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    w.timeout_ns = now.tv_sec * 1000000000ll + now.tv_nsec + 5000000000ll;
    check(kmd.ioctl(fd, DRM_IOCTL_NPU_WAIT, &w), "wait");
  }
};

void BM_EmptyJobRoundTrip(benchmark::State& state) {
  Rig rig;
  for (auto _ : state) rig.wait(rig.submit());
}
BENCHMARK(BM_EmptyJobRoundTrip)->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);

void BM_EmptyJobThroughput(benchmark::State& state) {
  Rig rig;
  const int64_t batch = 256;
  for (auto _ : state) {
    uint64_t last = 0;
    for (int64_t i = 0; i < batch; ++i) last = rig.submit();
    rig.wait(last);
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(state.iterations() * batch),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EmptyJobThroughput)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
