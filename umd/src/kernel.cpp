// The backend registry and open_kernel(): the one place a device string becomes a kernel.
// Also the ioctl name lookup.
#include "npu/kernel.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "npu/drm_kernel.h"
#include "npu/ioctl_table.h"
#include "npu/tracing_kernel.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"

namespace npu {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, KernelFactory, std::less<>> factories;

  Registry() {
    // "emu" is not built in: the emulator registers it from emu/ (npu/emu/backend.h).
    // "drm:[NODE]" (and "file:NODE", a bare path): a device node (npu/drm_kernel.h). The
    // node is checked here, so a wrong one fails with its reason, not just an errno.
    const KernelFactory drm =
        [](std::string_view dev) -> Expected<std::shared_ptr<KernelInterface>> {
      auto node = DrmKernel::resolve(dev);
      if (!node) return node.error();
      const int fd = ::open(node->c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) {
        return make_error(errno, fmt::format("open: device {}: {}", *node, std::strerror(errno)));
      }
      auto c = DrmKernel::check_driver(fd, *node);
      ::close(fd);
      if (!c) return c.error();
      return std::shared_ptr<KernelInterface>(std::make_shared<DrmKernel>());
    };
    factories["drm"] = drm;
    factories["file"] = drm;
    // "unix:PATH": a device served by npu-daemon (npu/unix_kernel.h).
    factories["unix"] = [](std::string_view dev) -> Expected<std::shared_ptr<KernelInterface>> {
      auto k = UnixKernel::create(dev);
      if (!k) return k.error();
      return std::shared_ptr<KernelInterface>(std::move(*k));
    };
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

// -1: follow NPU_TRACE_IOCTL; 0/1: set programmatically.
std::atomic<int> g_tracing{-1};

}  // namespace

Expected<void> register_kernel_backend(std::string scheme, KernelFactory factory) {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  if (r.factories.count(scheme) != 0) {
    return make_error(EEXIST, fmt::format("register backend: scheme '{}' is taken", scheme));
  }
  r.factories.emplace(std::move(scheme), std::move(factory));
  return ok();
}

std::string default_device() {
  const char* env = std::getenv("NPU_DEVICE");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("emu:");
}

void set_ioctl_tracing(bool enabled) {
  g_tracing.store(enabled ? 1 : 0);
}

bool ioctl_tracing_enabled() {
  const int t = g_tracing.load();
  if (t >= 0) return t == 1;
  const char* env = std::getenv("NPU_TRACE_IOCTL");
  return env != nullptr && std::string_view(env) != "" && std::string_view(env) != "0";
}

Expected<std::shared_ptr<KernelInterface>> open_kernel(std::string_view device) {
  const std::string dev = device.empty() ? default_device() : std::string(device);
  std::string scheme;
  if (dev.starts_with('/')) {
    scheme = "file";
  } else if (const size_t colon = dev.find(':'); colon != std::string::npos) {
    scheme = dev.substr(0, colon);
  } else {
    scheme = dev;  // "emu" alone
  }
  KernelFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lk(r.mu);
    const auto it = r.factories.find(scheme);
    if (it == r.factories.end() && scheme == "emu") {
      return make_error(ENODEV, fmt::format("open: device '{}': the emulator backend is not "
                                            "linked in (link the CMake target npu::emu)",
                                            dev));
    }
    if (it == r.factories.end()) {
      return make_error(
          ENODEV, fmt::format("open: device '{}': no backend for scheme '{}' (built in: "
                              "'drm:[/dev/accel/accelN]', 'unix:/path/npu.sock'; with npu::emu "
                              "linked: "
                              "'emu:[config.json]')",
                              dev, scheme));
    }
    factory = it->second;
  }
  auto kernel = factory(dev);
  if (!kernel) return kernel.error();
  if (ioctl_tracing_enabled()) {
    return std::shared_ptr<KernelInterface>(std::make_shared<TracingKernel>(std::move(*kernel)));
  }
  return kernel;
}

const char* ioctl_name(unsigned long request) {
  const IoctlInfo* info = find_ioctl(request);
  return info != nullptr ? info->name : "UNKNOWN";
}

}  // namespace npu
