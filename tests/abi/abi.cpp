// The ABI suite's helpers (abi.h).
#include "abi.h"

namespace npu::abi {

std::string& device_path() {
  static std::string path = "/dev/accel/accel0";
  return path;
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

void* File::map_pages(uint64_t size, uint64_t offset) {
  void* p =
      ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
  if (p != MAP_FAILED) maps_.emplace_back(p, size);
  return p;
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
