// Connection: the request loop of one client, the ioctl bridge (user pointers turned into
// bytes that travel with the message) and the waiter threads that answer blocking WAITs.
#include "connection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "daemon_log.h"
#include "npu/daemon/server.h"
#include "npu/log.h"
#include "npu_accel.h"

namespace npu::daemon {

namespace {

using detail::log;

/// Most waiter threads per connection; further blocking WAITs queue behind them.
constexpr size_t kMaxWaiters = 16;
/// A waiter re-checks for the end of the connection this often while a WAIT blocks.
constexpr int64_t kWaitSliceNs = 100'000'000;
/// Most QUERY bytes a reply carries (far above any query's full size).
constexpr uint32_t kMaxQueryOut =
    NPU_DAEMON_MAX_PAYLOAD - sizeof(npu_daemon_ioctl_reply) - NPU_DAEMON_MAX_ARG;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <typename T>
T read_as(std::span<const std::byte> bytes) {
  T v{};
  if (!bytes.empty()) std::memcpy(&v, bytes.data(), std::min(sizeof(T), bytes.size()));
  return v;
}

}  // namespace

Connection::Connection(Server& server, wire::UniqueFd sock, uint32_t id)
    : server_(server), kmd_(server.kmd()), sock_(std::move(sock)), id_(id) {}

Connection::~Connection() {
  stop();
  if (reader_.joinable()) reader_.join();
}

void Connection::start() {
  reader_ = std::thread([this] { serve(); });
}

void Connection::stop() {
  ::shutdown(sock_.get(), SHUT_RDWR);
}

bool Connection::describe(npu_daemon_client& out) const {
  // A connection whose file is being closed (draining its jobs) is left out rather than
  // waited for: STATUS never stalls behind a client's clean-up.
  std::shared_lock lk(file_mu_, std::try_to_lock);
  if (!lk.owns_lock() || kmd_fd_ < 0) return false;
  const emu::Kmd::FileUsage u = kmd_.usage(kmd_fd_);
  out = {};
  out.client_id = id_;
  out.pid = pid_.load();
  out.bos = u.bos;
  out.contexts = u.contexts;
  out.bo_bytes = u.bo_bytes;
  return true;
}

void Connection::serve() {
  for (;;) {
    auto m = wire::recv_message(sock_.get());
    if (!m) {
      if (m.error().code == ECONNRESET) {
        std::shared_lock lk(file_mu_);
        if (kmd_fd_ >= 0) log().info("client {}: disconnected", id_);
      } else {
        protocol_error(0, m.error().code, m.error().message);
      }
      break;
    }
    if (!handle(*m)) break;
  }
  close_file();
  server_.connection_done();
}

bool Connection::handle(wire::Message& m) {
  if (!m.fds.empty()) {
    return protocol_error(m.header.seq, EPROTO, "descriptors sent to the daemon");
  }
  bool hello_done = false;
  {
    std::shared_lock lk(file_mu_);
    hello_done = kmd_fd_ >= 0;
  }
  if (!hello_done && m.header.type != NPU_DAEMON_HELLO) {
    return protocol_error(m.header.seq, EPROTO,
                          fmt::format("message type {} before HELLO", m.header.type));
  }
  switch (m.header.type) {
    case NPU_DAEMON_HELLO:
      if (hello_done) return protocol_error(m.header.seq, EPROTO, "a second HELLO");
      return handle_hello(m);
    case NPU_DAEMON_IOCTL:
      return handle_ioctl(m);
    case NPU_DAEMON_MAP:
      return handle_map(m);
    case NPU_DAEMON_STATUS: {
      if (!m.payload.empty()) return protocol_error(m.header.seq, EPROTO, "STATUS with a payload");
      const std::vector<std::byte> st = server_.status_payload();
      const std::array parts{std::span<const std::byte>(st)};
      return send(NPU_DAEMON_STATUS | NPU_DAEMON_REPLY, m.header.seq, parts);
    }
    default:
      return protocol_error(m.header.seq, EPROTO,
                            fmt::format("unknown message type {:#x}", m.header.type));
  }
}

bool Connection::handle_hello(const wire::Message& m) {
  if (m.payload.size() != sizeof(npu_daemon_hello)) {
    return protocol_error(
        m.header.seq, EPROTO,
        fmt::format("HELLO of {} bytes (expected {})", m.payload.size(), sizeof(npu_daemon_hello)));
  }
  const auto hello = read_as<npu_daemon_hello>(m.payload);
  if (m.header.version < NPU_DAEMON_VERSION || hello.min_version > NPU_DAEMON_VERSION) {
    return protocol_error(m.header.seq, EPROTONOSUPPORT,
                          fmt::format("client speaks protocol versions {}..{}, the daemon {}",
                                      hello.min_version, m.header.version, NPU_DAEMON_VERSION));
  }
  const int fd = kmd_.open();
  if (fd < 0) {
    return protocol_error(m.header.seq, errno,
                          fmt::format("cannot open a driver file: {}", std::strerror(errno)));
  }
  {
    std::unique_lock lk(file_mu_);
    kmd_fd_ = fd;
  }
  pid_.store(hello.pid);
  log().info("client {}: connected (pid {})", id_, hello.pid);
  npu_daemon_hello_reply r{};
  r.version = NPU_DAEMON_VERSION;
  r.client_id = id_;
  r.api_version = (DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR;
  const std::array parts{wire::bytes_of(r)};
  return send(NPU_DAEMON_HELLO | NPU_DAEMON_REPLY, m.header.seq, parts);
}

bool Connection::handle_ioctl(const wire::Message& m) {
  const uint32_t seq = m.header.seq;
  const std::span<const std::byte> p(m.payload);
  if (p.size() < sizeof(npu_daemon_ioctl)) {
    return protocol_error(seq, EPROTO, fmt::format("IOCTL of {} bytes", p.size()));
  }
  const auto req = read_as<npu_daemon_ioctl>(p);
  const auto request = static_cast<unsigned long>(req.request);
  if (req.arg_size != _IOC_SIZE(request) || req.arg_size > NPU_DAEMON_MAX_ARG ||
      p.size() != sizeof(req) + uint64_t{req.arg_size} + req.extra_size) {
    return protocol_error(
        seq, EPROTO,
        fmt::format("IOCTL {:#x}: argument of {} bytes (request says {}) and "
                    "{} extra bytes in a payload of {}",
                    request, req.arg_size, _IOC_SIZE(request), req.extra_size, p.size()));
  }
  alignas(8) std::array<std::byte, NPU_DAEMON_MAX_ARG> arg{};
  std::memcpy(arg.data(), p.data() + sizeof(req), req.arg_size);
  const std::span<const std::byte> extra = p.subspan(sizeof(req) + req.arg_size);
  const std::span<const std::byte> arg_bytes(arg.data(), req.arg_size);

  // The user pointers of the two ioctls that have them now point into this process.
  std::vector<drm_npu_bo_ref> refs;
  std::vector<std::byte> query_out;
  uint64_t user_ptr = 0;
  if (request == DRM_IOCTL_NPU_SUBMIT) {
    auto* s = reinterpret_cast<drm_npu_submit*>(arg.data());
    user_ptr = s->bos;
    if (!extra.empty()) {
      if (extra.size() != uint64_t{s->bo_count} * sizeof(drm_npu_bo_ref)) {
        return protocol_error(seq, EPROTO,
                              fmt::format("SUBMIT: {} bytes of BO references for bo_count {}",
                                          extra.size(), s->bo_count));
      }
      refs.resize(s->bo_count);
      if (!extra.empty()) std::memcpy(refs.data(), extra.data(), extra.size());
      s->bos = reinterpret_cast<uint64_t>(refs.data());
    } else {
      s->bos = 0;
    }
  } else if (!extra.empty()) {
    return protocol_error(seq, EPROTO, fmt::format("IOCTL {:#x}: unexpected extra bytes", request));
  } else if (request == DRM_IOCTL_NPU_QUERY) {
    auto* q = reinterpret_cast<drm_npu_query*>(arg.data());
    user_ptr = q->data;
    if (q->data != 0 && q->size > 0) {
      q->size = std::min(q->size, kMaxQueryOut);
      query_out.resize(q->size);
      q->data = reinterpret_cast<uint64_t>(query_out.data());
    } else {
      q->data = 0;
    }
  } else if (request == DRM_IOCTL_NPU_WAIT) {
    const auto w = read_as<drm_npu_wait>(arg_bytes);
    if (w.timeout_ns > 0) {
      // Not retired yet: a waiter answers when it is, and the reader goes on.
      drm_npu_wait probe = w;
      probe.timeout_ns = 0;
      int ret = 0;
      {
        std::shared_lock lk(file_mu_);
        ret = kmd_.ioctl(kmd_fd_, request, &probe);
      }
      const int err = errno;
      if (ret < 0 && err == EBUSY) {
        queue_wait(seq, w);
        return true;
      }
      probe.timeout_ns = w.timeout_ns;
      reply_ioctl(seq, ret, err, wire::bytes_of(probe), {});
      return true;
    }
  }

  int ret = 0;
  {
    std::shared_lock lk(file_mu_);
    ret = kmd_.ioctl(kmd_fd_, request, arg.data());
  }
  const int err = errno;
  std::span<const std::byte> out;
  if (request == DRM_IOCTL_NPU_SUBMIT) {
    reinterpret_cast<drm_npu_submit*>(arg.data())->bos = user_ptr;
  } else if (request == DRM_IOCTL_NPU_QUERY) {
    auto* q = reinterpret_cast<drm_npu_query*>(arg.data());
    q->data = user_ptr;
    if (ret == 0 && !query_out.empty()) {
      out =
          std::span<const std::byte>(query_out).first(std::min<size_t>(query_out.size(), q->size));
    }
  }
  reply_ioctl(seq, ret, err, arg_bytes, out);
  return true;
}

void Connection::reply_ioctl(uint32_t seq, int ret, int err, std::span<const std::byte> arg,
                             std::span<const std::byte> extra) {
  npu_daemon_ioctl_reply r{};
  r.ret = ret < 0 ? -1 : 0;
  r.err = ret < 0 ? static_cast<uint32_t>(err) : 0;
  r.arg_size = static_cast<uint32_t>(arg.size());
  r.extra_size = static_cast<uint32_t>(extra.size());
  const std::array parts{wire::bytes_of(r), arg, extra};
  send(NPU_DAEMON_IOCTL | NPU_DAEMON_REPLY, seq, parts);
}

bool Connection::handle_map(const wire::Message& m) {
  if (m.payload.size() != sizeof(npu_daemon_map)) {
    return protocol_error(m.header.seq, EPROTO, fmt::format("MAP of {} bytes", m.payload.size()));
  }
  const auto req = read_as<npu_daemon_map>(m.payload);
  npu_daemon_map_reply r{};
  wire::UniqueFd memfd;
  if (req.pad != 0 || req.length > SIZE_MAX) {
    r.ret = -1;
    r.err = EINVAL;
  } else {
    std::shared_lock lk(file_mu_);
    memfd.reset(kmd_.export_bo(kmd_fd_, req.offset, static_cast<size_t>(req.length),
                               static_cast<int>(req.flags)));
    if (!memfd) {
      r.ret = -1;
      r.err = static_cast<uint32_t>(errno);
    }
  }
  const std::array parts{wire::bytes_of(r)};
  const int fd = memfd.get();
  return send(NPU_DAEMON_MAP | NPU_DAEMON_REPLY, m.header.seq, parts,
              memfd ? std::span<const int>(&fd, 1) : std::span<const int>());
}

bool Connection::send(uint16_t type, uint32_t seq,
                      std::span<const std::span<const std::byte>> parts, std::span<const int> fds) {
  std::lock_guard lk(send_mu_);
  if (auto s = wire::send_message(sock_.get(), type, seq, parts, fds); !s) {
    // A client that stopped reading (send timeout) or went away: end the connection.
    const int err = s.error().code;
    if (closing_.load() || err == EPIPE || err == ECONNRESET) {
      log().debug("client {}: went away before its reply: {}", id_, s.error().message);
    } else {
      log().warn("client {}: {}; disconnecting", id_, s.error().message);
    }
    ::shutdown(sock_.get(), SHUT_RDWR);
    return false;
  }
  return true;
}

bool Connection::protocol_error(uint32_t seq, int err, const std::string& message) {
  log().warn("client {}: protocol error: {}; disconnecting", id_, message);
  npu_daemon_error e{};
  e.err = static_cast<uint32_t>(err);
  std::snprintf(e.message, sizeof(e.message), "%s", message.c_str());
  const std::array parts{wire::bytes_of(e)};
  send(NPU_DAEMON_ERROR, seq, parts);
  return false;
}

void Connection::queue_wait(uint32_t seq, const drm_npu_wait& w) {
  std::lock_guard lk(wait_mu_);
  waits_.push_back({seq, w});
  if (idle_waiters_ == 0 && waiters_.size() < kMaxWaiters) {
    ++idle_waiters_;
    waiters_.emplace_back([this] { waiter(); });
  }
  wait_cv_.notify_one();
}

void Connection::waiter() {
  std::unique_lock lk(wait_mu_);
  for (;;) {
    wait_cv_.wait(lk, [&] { return stopping_ || !waits_.empty(); });
    if (stopping_) return;  // the file is going: queued WAITs are not answered
    PendingWait pw = waits_.front();
    waits_.pop_front();
    --idle_waiters_;
    lk.unlock();
    // Slices, so that closing the file (which needs the lock exclusively) is never held up
    // for longer than one slice.
    const int64_t deadline = pw.arg.timeout_ns;
    int ret = 0;
    int err = 0;
    drm_npu_wait w{};
    for (;;) {
      w = pw.arg;
      w.timeout_ns = std::min(deadline, now_ns() + kWaitSliceNs);
      if (closing_.load()) {
        ret = -1;
        err = EBADF;
        break;
      }
      std::shared_lock flk(file_mu_);
      if (kmd_fd_ < 0) {
        ret = -1;
        err = EBADF;
        break;
      }
      ret = kmd_.ioctl(kmd_fd_, DRM_IOCTL_NPU_WAIT, &w);
      err = errno;
      if (!(ret < 0 && err == ETIMEDOUT && w.timeout_ns < deadline)) break;
    }
    w.timeout_ns = deadline;
    reply_ioctl(pw.seq, ret, err, wire::bytes_of(w), {});
    lk.lock();
    ++idle_waiters_;
  }
}

void Connection::close_file() {
  {
    std::lock_guard lk(wait_mu_);
    stopping_ = true;
  }
  wait_cv_.notify_all();
  closing_.store(true);
  int fd = -1;
  {
    std::unique_lock lk(file_mu_);
    fd = std::exchange(kmd_fd_, -1);
    // Closing under the lock: its jobs are aborted or drained, its BOs and contexts freed.
    if (fd >= 0) kmd_.close(fd);
  }
  for (auto& t : waiters_) t.join();
  if (fd >= 0) {
    log().info("client {}: closed (pid {}); its jobs, buffers and contexts are released", id_,
               pid_.load());
  }
  done_.store(true);
}

}  // namespace npu::daemon
