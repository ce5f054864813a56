// UnixKernel: libnpu's kernel seam over connections to npu-daemon (one DaemonChannel per
// open file), and the daemon STATUS helpers.
#include "npu/unix_kernel.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "npu/daemon_wire.h"
#include "npu/log.h"
#include "npu_accel.h"

namespace npu {

namespace {

constexpr uint64_t kPopulateLimit = 256ull << 20;  // as the in-process driver

int fail(int err) {
  errno = err;
  return -1;
}

}  // namespace

UnixKernel::UnixKernel(std::string socket_path) : path_(std::move(socket_path)) {}

UnixKernel::~UnixKernel() = default;

Expected<std::shared_ptr<UnixKernel>> UnixKernel::create(std::string_view device) {
  if (!device.starts_with("unix:") || device.size() == 5) {
    return make_error(EINVAL, fmt::format("open: device '{}': not a daemon device string "
                                          "('unix:/path/to/npu.sock')",
                                          device));
  }
  return std::make_shared<UnixKernel>(std::string(device.substr(5)));
}

std::shared_ptr<DaemonChannel> UnixKernel::find(int fd) {
  std::shared_lock lk(mu_);
  const auto it = conns_.find(fd);
  return it == conns_.end() ? nullptr : it->second;
}

int UnixKernel::open(std::string_view /*path*/) {
  auto ch = DaemonChannel::connect(path_);
  if (!ch) {
    logger("npu").debug("unix: {}", ch.error().message);
    return fail(ch.error().code);
  }
  const int fd = (*ch)->fd();
  std::unique_lock lk(mu_);
  conns_[fd] = std::move(*ch);
  return fd;
}

int UnixKernel::close(int fd) {
  std::shared_ptr<DaemonChannel> ch;
  {
    std::unique_lock lk(mu_);
    const auto it = conns_.find(fd);
    if (it == conns_.end()) return fail(EBADF);
    ch = std::move(it->second);
    conns_.erase(it);
  }
  // Callers still blocked on it fail; the socket closes with the last reference.
  ch->shutdown();
  return 0;
}

int UnixKernel::ioctl(int fd, unsigned long request, void* arg) {
  const auto ch = find(fd);
  if (ch == nullptr) return fail(EBADF);
  return ch->ioctl(request, arg);
}

void* UnixKernel::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  const auto ch = find(fd);
  if (ch == nullptr) {
    errno = EBADF;
    return MAP_FAILED;
  }
  auto memfd = ch->map(static_cast<uint64_t>(offset), length, flags);
  if (!memfd) {
    errno = memfd.error().code;
    return MAP_FAILED;
  }
  // The memfd itself is not kept: the mapping holds the pages.
  const int populate = length <= kPopulateLimit ? MAP_POPULATE : 0;
  return ::mmap(addr, length, prot, flags | populate, memfd->get(), 0);
}

int UnixKernel::munmap(void* addr, size_t length) {
  return ::munmap(addr, length);
}

Expected<DaemonStatus> UnixKernel::status(int fd) {
  const auto ch = find(fd);
  if (ch == nullptr) {
    return make_error(EBADF, fmt::format("daemon status: fd {} is not open", fd));
  }
  return ch->status();
}

uint32_t UnixKernel::client_id(int fd) {
  const auto ch = find(fd);
  return ch == nullptr ? 0 : ch->client_id();
}

Expected<DaemonStatus> daemon_status_of_others(const std::string& socket_path) {
  UnixKernel k(socket_path);
  const int fd = k.open(socket_path);
  if (fd < 0) return make_error(errno, "socket " + socket_path + ": " + std::strerror(errno));
  auto st = k.status(fd);
  const uint32_t self = k.client_id(fd);
  k.close(fd);
  if (!st) return st.error();
  std::erase_if(st->clients, [&](const npu_daemon_client& c) { return c.client_id == self; });
  st->summary.num_clients = static_cast<uint32_t>(st->clients.size());
  return st;
}

std::string format_daemon_status(const std::string& socket_path, const DaemonStatus& st) {
  std::string out =
      fmt::format("daemon {}: {} client(s) besides this one, {} served, {} bytes of BO memory",
                  socket_path, st.clients.size(), st.summary.clients_served, st.summary.bo_memory);
  if (st.version >= 3) out += fmt::format(" (limit {})", st.summary.bo_memory_limit);
  out += "\n";
  if (st.version >= 3) {
    out +=
        fmt::format("  per client: at most {} bytes of BO memory, {} contexts, {} jobs in flight\n",
                    st.summary.client_bo_memory_limit, st.summary.client_contexts_limit,
                    st.summary.client_jobs_limit);
  }
  for (const auto& c : st.clients) {
    if (st.version >= 3) {
      out += fmt::format(
          "  client {} pid {} uid {}: {} bo(s) {} bytes, {} context(s), {} job(s) in flight{}\n",
          c.client_id, c.pid, c.uid, c.bos, c.bo_bytes, c.contexts, c.jobs_in_flight,
          (c.flags & NPU_DAEMON_CLIENT_REALTIME) != 0 ? ", may use realtime" : "");
    } else {
      out += fmt::format("  client {} pid {}: {} bo(s) {} bytes, {} context(s)\n", c.client_id,
                         c.pid, c.bos, c.bo_bytes, c.contexts);
    }
  }
  return out;
}

Expected<std::string> daemon_status_report(const std::string& socket_path) {
  auto st = daemon_status_of_others(socket_path);
  if (!st) return st.error();
  return format_daemon_status(socket_path, *st);
}

}  // namespace npu
