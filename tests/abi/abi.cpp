// The ABI suite's helpers (abi.h).
#include "abi.h"

namespace npu::abi {

std::string& device_path() {
  static std::string path = "/dev/accel/accel0";
  return path;
}

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t deadline_ms(int64_t ms) {
  return now_ns() + ms * 1'000'000;
}

File::File() : fd_(::open(device_path().c_str(), O_RDWR | O_CLOEXEC)) {
  EXPECT_GE(fd_, 0) << "open " << device_path() << ": " << std::strerror(errno);
}

File::~File() {
  for (auto& [p, n] : maps_) ::munmap(p, n);
  if (fd_ >= 0) ::close(fd_);
}

int File::io(unsigned long request, void* arg) const {
  for (;;) {
    if (::ioctl(fd_, request, arg) == 0) return 0;
    if (errno != EINTR && errno != EAGAIN) return errno;
  }
}

uint64_t File::param(uint32_t p) const {
  drm_npu_get_param g{};
  g.param = p;
  EXPECT_EQ(io(DRM_IOCTL_NPU_GET_PARAM, &g), 0) << "GET_PARAM " << p;
  return g.value;
}

Bo File::bo(uint64_t size, uint32_t flags, uint64_t fixed_va) {
  drm_npu_bo_create c{};
  c.size = size;
  c.flags = flags;
  c.device_addr = fixed_va;
  EXPECT_EQ(io(DRM_IOCTL_NPU_BO_CREATE, &c), 0) << "BO_CREATE of " << size << " bytes";
  drm_npu_bo_info i{};
  i.handle = c.handle;
  EXPECT_EQ(io(DRM_IOCTL_NPU_BO_INFO, &i), 0);
  return {c.handle, c.device_addr, i.size, i.mmap_offset};
}

int File::bo_close(uint32_t handle) const {
  drm_npu_bo_close c{};
  c.handle = handle;
  return io(DRM_IOCTL_NPU_BO_CLOSE, &c);
}

std::byte* File::map(const Bo& b) {
  void* p = ::mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                   static_cast<off_t>(b.mmap_offset));
  EXPECT_NE(p, MAP_FAILED) << "mmap of bo " << b.handle << ": " << std::strerror(errno);
  if (p == MAP_FAILED) return nullptr;
  maps_.emplace_back(p, b.size);
  return static_cast<std::byte*>(p);
}

Bo File::upload(std::span<const std::byte> bytes) {
  Bo b = bo(bytes.size());
  if (std::byte* p = map(b)) std::memcpy(p, bytes.data(), bytes.size());
  return b;
}

uint32_t File::ctx(uint32_t priority) {
  drm_npu_ctx_create c{};
  c.priority = priority;
  EXPECT_EQ(io(DRM_IOCTL_NPU_CTX_CREATE, &c), 0);
  return c.ctx_id;
}

int File::submit(uint32_t ctx, const Bo& cmd, uint64_t cmd_size, std::vector<drm_npu_bo_ref> refs,
                 uint32_t flags, uint64_t* seqno) const {
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.flags = flags;
  s.cmd_handle = cmd.handle;
  s.bo_count = static_cast<uint32_t>(refs.size());
  s.cmd_size = cmd_size;
  s.bos = reinterpret_cast<uintptr_t>(refs.data());
  const int r = io(DRM_IOCTL_NPU_SUBMIT, &s);
  if (r == 0 && seqno != nullptr) *seqno = s.seqno;
  return r;
}

int File::wait(uint32_t ctx, uint64_t seqno, int64_t deadline, drm_npu_wait* out) const {
  drm_npu_wait w{};
  w.ctx_id = ctx;
  w.seqno = seqno;
  w.timeout_ns = deadline;
  const int r = io(DRM_IOCTL_NPU_WAIT, &w);
  if (out != nullptr) *out = w;
  return r;
}

drm_npu_context_state File::ctx_state(uint32_t ctx) const {
  drm_npu_context_state s{};
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_CONTEXT_STATE;
  q.size = sizeof(s);
  q.arg0 = ctx;
  q.data = reinterpret_cast<uintptr_t>(&s);
  EXPECT_EQ(io(DRM_IOCTL_NPU_QUERY, &q), 0);
  return s;
}

std::string File::last_error() const {
  char text[512] = {};
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_LAST_ERROR;
  q.size = sizeof(text) - 1;
  q.data = reinterpret_cast<uintptr_t>(text);
  if (io(DRM_IOCTL_NPU_QUERY, &q) != 0) return "<QUERY LAST_ERROR failed>";
  return text;
}

std::vector<std::byte> empty_job() {
  isa::CommandBufferBuilder b;
  return b.finish();
}

std::vector<std::byte> copy_job(uint64_t src, uint64_t dst, uint32_t n) {
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  b.dma_store({.dram = dst, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  return b.finish();
}

std::vector<std::byte> hung_job() {
  isa::CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  return b.finish();
}

namespace {

struct NodeFacts {
  uint32_t api = 0;
  uint64_t caps = 0;
  uint32_t watchdog = 0;
};

const NodeFacts& facts() {
  static const NodeFacts f = [] {
    NodeFacts n;
    File file;
    if (file.fd() < 0) return n;
    drm_npu_get_param g{};
    g.param = DRM_NPU_PARAM_API_VERSION;
    if (file.io(DRM_IOCTL_NPU_GET_PARAM, &g) == 0) n.api = static_cast<uint32_t>(g.value);
    g = {};
    g.param = DRM_NPU_PARAM_CAPABILITIES;
    if (file.io(DRM_IOCTL_NPU_GET_PARAM, &g) == 0) n.caps = g.value;
    g = {};
    g.param = DRM_NPU_PARAM_WATCHDOG_MS;
    if (file.io(DRM_IOCTL_NPU_GET_PARAM, &g) == 0) n.watchdog = static_cast<uint32_t>(g.value);
    return n;
  }();
  return f;
}

}  // namespace

uint32_t api_version() {
  return facts().api;
}
uint64_t capabilities() {
  return facts().caps;
}
uint32_t watchdog_ms() {
  return facts().watchdog;
}

}  // namespace npu::abi
