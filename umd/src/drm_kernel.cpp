// DrmKernel (npu/drm_kernel.h): a device node through plain system calls and libdrm.
#include "npu/drm_kernel.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "npu/log.h"
#include "npu_accel.h"

namespace npu {
namespace {

constexpr std::string_view kAccelDir = "/dev/accel";

// The accel nodes in number order (accel0, accel1, ..., accel10).
std::vector<std::string> accel_nodes() {
  std::vector<std::pair<long, std::string>> found;
  DIR* d = ::opendir(std::string(kAccelDir).c_str());
  if (d == nullptr) return {};
  for (const dirent* e = ::readdir(d); e != nullptr; e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (!name.starts_with("accel") || name.size() == 5) continue;
    char* end = nullptr;
    const long n = std::strtol(e->d_name + 5, &end, 10);
    if (end == nullptr || *end != '\0') continue;
    found.emplace_back(n, fmt::format("{}/{}", kAccelDir, name));
  }
  ::closedir(d);
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [n, path] : found) out.push_back(std::move(path));
  return out;
}

}  // namespace

Expected<void> DrmKernel::check_driver(int fd, std::string_view path) {
  drmVersionPtr v = drmGetVersion(fd);
  if (v == nullptr) {
    return make_error(ENODEV, fmt::format("open: device {}: not a DRM node (DRM_IOCTL_VERSION "
                                          "failed: {})",
                                          path, std::strerror(errno)));
  }
  const std::string name(v->name != nullptr ? v->name : "");
  const int major = v->version_major;
  const int minor = v->version_minor;
  drmFreeVersion(v);
  if (name != DRM_NPU_DRIVER_NAME) {
    return make_error(ENODEV, fmt::format("open: device {}: its driver is '{}', not '{}'", path,
                                          name, DRM_NPU_DRIVER_NAME));
  }
  if (major != DRM_NPU_API_VERSION_MAJOR) {
    return make_error(EPROTO, fmt::format("open: device {}: driver version {}.{}, libnpu speaks "
                                          "{}.x",
                                          path, major, minor, DRM_NPU_API_VERSION_MAJOR));
  }
  return ok();
}

Expected<std::string> DrmKernel::resolve(std::string_view device) {
  std::string_view path = device;
  if (device.starts_with("drm:")) {
    path = device.substr(4);
  } else if (device.starts_with("file:")) {
    path = device.substr(5);
  } else if (!device.starts_with('/')) {
    return make_error(EINVAL, fmt::format("open: device '{}': not a device node string "
                                          "('drm:', 'drm:/dev/accel/accelN' or a path)",
                                          device));
  }
  if (!path.empty()) return std::string(path);
  // "drm:": the first node whose driver is ours.
  const std::vector<std::string> nodes = accel_nodes();
  std::string seen;
  for (const std::string& node : nodes) {
    const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      seen += fmt::format("; {}: {}", node, std::strerror(errno));
      continue;
    }
    auto c = check_driver(fd, node);
    ::close(fd);
    if (c) return node;
    seen += "; " + c.error().message;
  }
  return make_error(ENODEV, fmt::format("open: device 'drm:': no accel node with the '{}' driver "
                                        "in {} ({} node(s){})",
                                        DRM_NPU_DRIVER_NAME, kAccelDir, nodes.size(), seen));
}

int DrmKernel::open(std::string_view path) {
  auto node = resolve(path);
  if (!node) {
    logger("npu").warn("{}", node.error().message);
    errno = node.error().code;
    return -1;
  }
  const int fd = ::open(node->c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  if (auto c = check_driver(fd, *node); !c) {
    logger("npu").warn("{}", c.error().message);
    ::close(fd);
    errno = c.error().code;
    return -1;
  }
  return fd;
}

int DrmKernel::close(int fd) {
  return ::close(fd);
}

int DrmKernel::ioctl(int fd, unsigned long request, void* arg) {
  return drmIoctl(fd, request, arg);
}

void* DrmKernel::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return ::mmap(addr, length, prot, flags, fd, offset);
}

int DrmKernel::munmap(void* addr, size_t length) {
  return ::munmap(addr, length);
}

}  // namespace npu
