// The cost of one ioctl by the path it takes (docs/driver-prototyping.md): libnpu's in-process
// seam (EmulatorKernel, the mock driver called directly), libnpu's "unix:" seam to npu-daemon
// (UnixKernel, when NPU_BENCH_SOCKET names a daemon's socket), and raw ioctl(2) on
// /dev/accel/accel0 (present under npu-shim: in-process or through a daemon, as npu-shim was
// told). GET_PARAM (the cheapest ioctl), an empty job's SUBMIT + WAIT, and two dependent
// empty jobs ordered by the host (submit, wait, submit, wait) or by a fence (API 1.3: submit
// with an out-fence, the second after it, wait for the second).
// bench/abi_cost.sh runs it the three ways and prints the table.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "npu/emu/emulator_kernel.h"
#include "npu/isa/builder.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"

namespace {

// One open file reached through `io`/`map` (a seam's calls or the system calls).
struct Rig {
  std::function<int(unsigned long, void*)> io;
  uint32_t ctx = 0;
  drm_npu_bo_ref ref{};
  uint64_t cmd_size = 0;

  void check(int rc, const char* what) const {
    if (rc != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
  }

  void setup(const std::function<void*(size_t, off_t)>& map) {
    npu::isa::CommandBufferBuilder b;
    const auto bytes = b.finish();  // just END
    drm_npu_bo_create c{};
    c.size = 4096;
    check(io(DRM_IOCTL_NPU_BO_CREATE, &c), "bo_create");
    drm_npu_bo_info info{};
    info.handle = c.handle;
    check(io(DRM_IOCTL_NPU_BO_INFO, &info), "bo_info");
    void* p = map(info.size, static_cast<off_t>(info.mmap_offset));
    if (p == MAP_FAILED) throw std::runtime_error("mmap");
    std::memcpy(p, bytes.data(), bytes.size());
    ::munmap(p, info.size);
    cmd_size = bytes.size();
    ref = {c.handle, DRM_NPU_ACCESS_READ};
    drm_npu_ctx_create cc{};
    cc.priority = DRM_NPU_PRIORITY_NORMAL;
    check(io(DRM_IOCTL_NPU_CTX_CREATE, &cc), "ctx_create");
    ctx = cc.ctx_id;
  }

  void get_param() const {
    drm_npu_get_param g{};
    g.param = DRM_NPU_PARAM_API_VERSION;
    check(io(DRM_IOCTL_NPU_GET_PARAM, &g), "get_param");
  }

  uint64_t submit(uint32_t flags = 0, int32_t* in_fence = nullptr, int* fence_out = nullptr) const {
    drm_npu_submit s{};
    s.ctx_id = ctx;
    s.flags = flags;
    s.cmd_handle = ref.handle;
    s.bo_count = 1;
    s.cmd_size = cmd_size;
    s.bos = reinterpret_cast<uint64_t>(&ref);
    if (in_fence != nullptr) {
      s.in_fences = reinterpret_cast<uint64_t>(in_fence);
      s.in_fence_count = 1;
    }
    check(io(DRM_IOCTL_NPU_SUBMIT, &s), "submit");
    if (fence_out != nullptr) *fence_out = s.fence_fd;
    return s.seqno;
  }

  void wait(uint64_t seqno) const {
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = seqno;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    w.timeout_ns = now.tv_sec * 1000000000ll + now.tv_nsec + 5000000000ll;
    check(io(DRM_IOCTL_NPU_WAIT, &w), "wait");
  }

  // Two dependent jobs, ordered by the host: submit, wait, submit, wait.
  void pair_by_host() const {
    wait(submit());
    wait(submit());
  }

  // Two dependent jobs, ordered by a fence: submit A with an out-fence, B after it, wait B.
  void pair_by_fence() const {
    int fence = -1;
    submit(DRM_NPU_SUBMIT_FENCE_OUT, nullptr, &fence);
    int32_t in = fence;
    wait(submit(0, &in));
    ::close(fence);
  }

  void round_trip() const {
    drm_npu_submit s{};
    s.ctx_id = ctx;
    s.cmd_handle = ref.handle;
    s.bo_count = 1;
    s.cmd_size = cmd_size;
    s.bos = reinterpret_cast<uint64_t>(&ref);
    check(io(DRM_IOCTL_NPU_SUBMIT, &s), "submit");
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = s.seqno;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    w.timeout_ns = now.tv_sec * 1000000000ll + now.tv_nsec + 5000000000ll;
    check(io(DRM_IOCTL_NPU_WAIT, &w), "wait");
  }
};

// A rig over a libnpu seam (KernelInterface).
struct SeamRig : Rig {
  std::shared_ptr<npu::KernelInterface> kernel;
  int fd = -1;
  explicit SeamRig(std::shared_ptr<npu::KernelInterface> k) : kernel(std::move(k)) {
    fd = kernel->open("bench");
    if (fd < 0) throw std::runtime_error("open");
    io = [this](unsigned long r, void* a) { return kernel->ioctl(fd, r, a); };
    setup([this](size_t n, off_t off) {
      return kernel->mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    });
  }
  ~SeamRig() { kernel->close(fd); }
};

// A rig over the node's system calls.
struct NodeRig : Rig {
  int fd = -1;
  NodeRig() {
    fd = ::open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("open /dev/accel/accel0");
    io = [this](unsigned long r, void* a) { return ::ioctl(fd, r, a); };
    setup([this](size_t n, off_t off) {
      return ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    });
  }
  ~NodeRig() { ::close(fd); }
};

template <typename Make>
void run_get_param(benchmark::State& state, Make make) {
  auto rig = make();
  for (auto _ : state) rig->get_param();
}

template <typename Make>
void run_round_trip(benchmark::State& state, Make make) {
  auto rig = make();
  for (auto _ : state) rig->round_trip();
}

template <typename Make>
void run_pair_by_host(benchmark::State& state, Make make) {
  auto rig = make();
  for (auto _ : state) rig->pair_by_host();
}

template <typename Make>
void run_pair_by_fence(benchmark::State& state, Make make) {
  auto rig = make();
  for (auto _ : state) rig->pair_by_fence();
}

void register_all() {
  auto emu = [] { return std::make_unique<SeamRig>(std::make_shared<npu::emu::EmulatorKernel>()); };
  auto reg = [](const std::string& name, auto make) {
    benchmark::RegisterBenchmark((name + "/get_param").c_str(), [make](benchmark::State& s) {
      run_get_param(s, make);
    })->UseRealTime();
    benchmark::RegisterBenchmark((name + "/submit_wait").c_str(), [make](benchmark::State& s) {
      run_round_trip(s, make);
    })->UseRealTime();
    benchmark::RegisterBenchmark((name + "/pair_by_host").c_str(), [make](benchmark::State& s) {
      run_pair_by_host(s, make);
    })->UseRealTime();
    benchmark::RegisterBenchmark((name + "/pair_by_fence").c_str(), [make](benchmark::State& s) {
      run_pair_by_fence(s, make);
    })->UseRealTime();
  };
  reg("seam_emu", emu);
  if (const char* sock = std::getenv("NPU_BENCH_SOCKET"); sock != nullptr && *sock != '\0') {
    const std::string path = sock;
    reg("seam_unix",
        [path] { return std::make_unique<SeamRig>(std::make_shared<npu::UnixKernel>(path)); });
  }
  if (::access("/dev/accel/accel0", F_OK) == 0) {
    const char* how = std::getenv("NPU_SHIM_DEVICE");
    const std::string name = how != nullptr && std::string(how).starts_with("unix:")
                                 ? "node_shim_daemon"
                                 : "node_shim_emu";
    reg(name, [] { return std::make_unique<NodeRig>(); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
