// UnixKernel: connections to npu-daemon, request/reply matching by sequence number, and the
// marshalling of the two ioctls whose argument structs hold user pointers (SUBMIT, QUERY).
#include "npu/unix_kernel.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
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

// One connection = one open file of the daemon's driver. call() sends a request and returns
// its reply; whichever caller finds nobody reading the socket reads it (leader/follower), so a
// lone caller pays one send and one receive, and concurrent callers each get their own reply.
class UnixKernel::Connection {
 public:
  explicit Connection(wire::UniqueFd sock) : sock_(std::move(sock)) {}

  int fd() const { return sock_.get(); }
  uint32_t client_id = 0;

  Expected<wire::Message> call(uint16_t type, std::span<const std::span<const std::byte>> parts) {
    const uint32_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lk(send_mu_);
      if (broken_.load()) {
        std::lock_guard rl(mu_);
        return gone();
      }
      if (auto s = wire::send_message(sock_.get(), type, seq, parts); !s) {
        broken_.store(true);
        return make_error(EIO, s.error().message);
      }
    }
    std::unique_lock lk(mu_);
    for (;;) {
      if (const auto it = arrived_.find(seq); it != arrived_.end()) {
        wire::Message m = std::move(it->second);
        arrived_.erase(it);
        return m;
      }
      if (broken_.load()) return gone();
      if (reading_) {
        cv_.wait(lk);
        continue;
      }
      reading_ = true;
      lk.unlock();
      auto m = wire::recv_message(sock_.get());
      lk.lock();
      reading_ = false;
      if (m && m->header.type == NPU_DAEMON_ERROR) {
        npu_daemon_error e{};
        if (!m->payload.empty()) {
          std::memcpy(&e, m->payload.data(), std::min(sizeof(e), m->payload.size()));
        }
        e.message[sizeof(e.message) - 1] = '\0';
        reason_ = fmt::format("the daemon closed the connection: {}", e.message);
        m = make_error(EIO, reason_);
      }
      if (!m) {
        if (reason_.empty()) reason_ = m.error().message;
        broken_.store(true);
        cv_.notify_all();
        return make_error(EIO, reason_);
      }
      arrived_.emplace(m->header.seq, std::move(*m));
      cv_.notify_all();
    }
  }

  /// Wakes every caller (the socket is shut down; their reads fail).
  void shutdown() { ::shutdown(sock_.get(), SHUT_RDWR); }

 private:
  // Needs mu_ (reason_).
  Error gone() const {
    return make_error(EIO, reason_.empty() ? "the daemon connection is broken" : reason_);
  }

  wire::UniqueFd sock_;
  std::atomic<uint32_t> next_seq_{1};
  std::atomic<bool> broken_{false};
  std::mutex send_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool reading_ = false;
  std::string reason_;
  std::map<uint32_t, wire::Message> arrived_;
};

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

std::shared_ptr<UnixKernel::Connection> UnixKernel::find(int fd) {
  std::shared_lock lk(mu_);
  const auto it = conns_.find(fd);
  return it == conns_.end() ? nullptr : it->second;
}

int UnixKernel::open(std::string_view /*path*/) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof(addr.sun_path)) return fail(ENAMETOOLONG);
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  wire::UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return -1;
  if (::connect(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    logger("npu").debug("unix: connect to {}: {}", path_, std::strerror(err));
    return fail(err);
  }
  auto conn = std::make_shared<Connection>(std::move(sock));
  npu_daemon_hello hello{};
  hello.min_version = NPU_DAEMON_VERSION;
  hello.pid = static_cast<uint32_t>(::getpid());
  const std::array parts{wire::bytes_of(hello)};
  auto reply = conn->call(NPU_DAEMON_HELLO, parts);
  if (!reply || reply->header.type != (NPU_DAEMON_HELLO | NPU_DAEMON_REPLY) ||
      reply->payload.size() != sizeof(npu_daemon_hello_reply)) {
    logger("npu").warn("unix: handshake with {} failed: {}", path_,
                       reply ? "unexpected reply" : reply.error().message);
    return fail(EPROTO);
  }
  npu_daemon_hello_reply hr{};
  std::memcpy(&hr, reply->payload.data(), sizeof(hr));
  if (hr.version != NPU_DAEMON_VERSION) return fail(EPROTONOSUPPORT);
  conn->client_id = hr.client_id;
  const int fd = conn->fd();
  std::unique_lock lk(mu_);
  conns_[fd] = std::move(conn);
  return fd;
}

int UnixKernel::close(int fd) {
  std::shared_ptr<Connection> conn;
  {
    std::unique_lock lk(mu_);
    const auto it = conns_.find(fd);
    if (it == conns_.end()) return fail(EBADF);
    conn = std::move(it->second);
    conns_.erase(it);
  }
  // Callers still blocked on it fail; the socket closes with the last reference.
  conn->shutdown();
  return 0;
}

int UnixKernel::ioctl(int fd, unsigned long request, void* arg) {
  const auto conn = find(fd);
  if (conn == nullptr) return fail(EBADF);
  const uint32_t size = _IOC_SIZE(request);
  if (size > NPU_DAEMON_MAX_ARG) return fail(EINVAL);
  if (arg == nullptr) return fail(EFAULT);

  npu_daemon_ioctl req{};
  req.request = request;
  req.arg_size = size;
  std::span<const std::byte> extra;
  uint64_t user_ptr = 0;   // the user pointer field the daemon cannot follow
  uint32_t user_size = 0;  // QUERY: the room at user_ptr
  if (request == DRM_IOCTL_NPU_SUBMIT) {
    const auto* s = static_cast<const drm_npu_submit*>(arg);
    user_ptr = s->bos;
    if (s->bos != 0 && s->bo_count > 0 && s->bo_count <= DRM_NPU_MAX_BO_REFS) {
      extra = {reinterpret_cast<const std::byte*>(static_cast<uintptr_t>(s->bos)),
               s->bo_count * sizeof(drm_npu_bo_ref)};
    }
  } else if (request == DRM_IOCTL_NPU_QUERY) {
    user_ptr = static_cast<const drm_npu_query*>(arg)->data;
    user_size = static_cast<const drm_npu_query*>(arg)->size;
  }
  req.extra_size = static_cast<uint32_t>(extra.size());
  const std::array parts{wire::bytes_of(req),
                         std::span<const std::byte>(static_cast<const std::byte*>(arg), size),
                         extra};
  auto reply = conn->call(NPU_DAEMON_IOCTL, parts);
  if (!reply) return fail(reply.error().code);
  npu_daemon_ioctl_reply r{};
  const auto& p = reply->payload;
  if (reply->header.type != (NPU_DAEMON_IOCTL | NPU_DAEMON_REPLY) || p.size() < sizeof(r)) {
    return fail(EIO);
  }
  std::memcpy(&r, p.data(), sizeof(r));
  if (r.arg_size != size || p.size() != sizeof(r) + size + r.extra_size) return fail(EIO);
  if (size > 0) std::memcpy(arg, p.data() + sizeof(r), size);
  if (request == DRM_IOCTL_NPU_SUBMIT) {
    static_cast<drm_npu_submit*>(arg)->bos = user_ptr;
  } else if (request == DRM_IOCTL_NPU_QUERY) {
    static_cast<drm_npu_query*>(arg)->data = user_ptr;
    if (r.extra_size > 0) {
      if (user_ptr == 0 || r.extra_size > user_size) return fail(EIO);
      std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(user_ptr)),
                  p.data() + sizeof(r) + size, r.extra_size);
    }
  } else if (r.extra_size != 0) {
    return fail(EIO);
  }
  if (r.ret < 0) return fail(static_cast<int>(r.err));
  return 0;
}

void* UnixKernel::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  const auto conn = find(fd);
  if (conn == nullptr) {
    errno = EBADF;
    return MAP_FAILED;
  }
  npu_daemon_map req{};
  req.offset = static_cast<uint64_t>(offset);
  req.length = length;
  req.flags = static_cast<uint32_t>(flags);
  const std::array parts{wire::bytes_of(req)};
  auto reply = conn->call(NPU_DAEMON_MAP, parts);
  if (!reply) {
    errno = reply.error().code;
    return MAP_FAILED;
  }
  npu_daemon_map_reply r{};
  if (reply->header.type != (NPU_DAEMON_MAP | NPU_DAEMON_REPLY) ||
      reply->payload.size() != sizeof(r)) {
    errno = EIO;
    return MAP_FAILED;
  }
  std::memcpy(&r, reply->payload.data(), sizeof(r));
  if (r.ret < 0) {
    errno = static_cast<int>(r.err);
    return MAP_FAILED;
  }
  if (reply->fds.size() != 1) {
    errno = EIO;
    return MAP_FAILED;
  }
  // The memfd itself is not kept: the mapping holds the pages.
  const int populate = length <= kPopulateLimit ? MAP_POPULATE : 0;
  return ::mmap(addr, length, prot, flags | populate, reply->fds[0].get(), 0);
}

int UnixKernel::munmap(void* addr, size_t length) {
  return ::munmap(addr, length);
}

Expected<DaemonStatus> UnixKernel::status(int fd) {
  const auto conn = find(fd);
  if (conn == nullptr)
    return make_error(EBADF, fmt::format("daemon status: fd {} is not open", fd));
  auto reply = conn->call(NPU_DAEMON_STATUS, {});
  if (!reply) return reply.error();
  DaemonStatus st;
  const auto& p = reply->payload;
  if (reply->header.type != (NPU_DAEMON_STATUS | NPU_DAEMON_REPLY) ||
      p.size() < sizeof(st.summary)) {
    return make_error(EIO, "daemon status: malformed reply");
  }
  std::memcpy(&st.summary, p.data(), sizeof(st.summary));
  if (p.size() != sizeof(st.summary) + st.summary.num_clients * sizeof(npu_daemon_client)) {
    return make_error(EIO, "daemon status: malformed reply");
  }
  st.clients.resize(st.summary.num_clients);
  if (!st.clients.empty()) {
    std::memcpy(st.clients.data(), p.data() + sizeof(st.summary),
                st.clients.size() * sizeof(npu_daemon_client));
  }
  return st;
}

uint32_t UnixKernel::client_id(int fd) {
  const auto conn = find(fd);
  return conn == nullptr ? 0 : conn->client_id;
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
      fmt::format("daemon {}: {} client(s) besides this one, {} served, {} bytes of BO memory\n",
                  socket_path, st.clients.size(), st.summary.clients_served, st.summary.bo_memory);
  for (const auto& c : st.clients) {
    out += fmt::format("  client {} pid {}: {} bo(s) {} bytes, {} context(s)\n", c.client_id, c.pid,
                       c.bos, c.bo_bytes, c.contexts);
  }
  return out;
}

Expected<std::string> daemon_status_report(const std::string& socket_path) {
  auto st = daemon_status_of_others(socket_path);
  if (!st) return st.error();
  return format_daemon_status(socket_path, *st);
}

}  // namespace npu
