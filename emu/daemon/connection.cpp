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
#include <tuple>

#include "daemon_log.h"
#include "npu/daemon/server.h"
#include "npu/ioctl_marshal.h"
#include "npu/log.h"
#include "npu_accel.h"

namespace npu::daemon {

namespace {

using detail::log;

/// Most waiter threads per connection; further blocking WAITs queue behind them.
constexpr size_t kMaxWaiters = 16;
/// A waiter re-checks for the end of the connection this often while a WAIT blocks.
constexpr int64_t kWaitSliceNs = 100'000'000;
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

Connection::Connection(Server& server, wire::UniqueFd sock, uint32_t id,
                       const emu::Credentials& peer)
    : server_(server), kmd_(server.kmd()), sock_(std::move(sock)), id_(id), peer_(peer) {}

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

std::shared_ptr<DriverFile> Connection::file() const {
  std::shared_lock lk(file_mu_);
  return file_;
}

bool Connection::describe(npu_daemon_client& out) const {
  // A connection whose file is being closed (draining its jobs) is left out: STATUS never
  // stalls behind a client's clean-up.
  const std::shared_ptr<DriverFile> f = file();
  if (f == nullptr) return false;
  const emu::Kmd::FileUsage u = kmd_.usage(f->fd());
  out = {};
  out.client_id = id_;
  out.pid = static_cast<uint32_t>(peer_.pid);
  out.bos = u.bos;
  out.contexts = u.contexts;
  out.bo_bytes = u.bo_bytes;
  out.uid = peer_.uid;
  out.gid = peer_.gid;
  out.hello_pid = hello_pid_.load();
  out.jobs_in_flight = u.jobs_in_flight;
  out.flags = u.realtime ? NPU_DAEMON_CLIENT_REALTIME : 0u;
  return true;
}

void Connection::serve() {
  for (;;) {
    auto m = wire::recv_message(sock_.get());
    if (!m) {
      if (m.error().code == ECONNRESET) {
        if (file() != nullptr) log().info("client {}: disconnected", id_);
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
  if (!m.fds.empty() && m.header.type != NPU_DAEMON_HELLO && m.header.type != NPU_DAEMON_IOCTL) {
    return protocol_error(m.header.seq, EPROTO, "descriptors sent to the daemon");
  }
  const bool hello_done = file() != nullptr;
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
      const std::vector<std::byte> st = server_.status_payload(version_.load());
      const std::array parts{std::span<const std::byte>(st)};
      return send(NPU_DAEMON_STATUS | NPU_DAEMON_REPLY, m.header.seq, parts);
    }
    default:
      return protocol_error(m.header.seq, EPROTO,
                            fmt::format("unknown message type {:#x}", m.header.type));
  }
}

bool Connection::handle_hello(const wire::Message& m) {
  // Version 1 sent {min_version, pid}; version 2 added {flags, pad}.
  constexpr size_t kV1Size = 8;
  if (m.payload.size() != kV1Size && m.payload.size() != sizeof(npu_daemon_hello)) {
    return protocol_error(m.header.seq, EPROTO,
                          fmt::format("HELLO of {} bytes (expected {} or {})", m.payload.size(),
                                      kV1Size, sizeof(npu_daemon_hello)));
  }
  const auto hello = read_as<npu_daemon_hello>(m.payload);
  if (m.header.version < 1 || hello.min_version > NPU_DAEMON_VERSION) {
    return protocol_error(m.header.seq, EPROTONOSUPPORT,
                          fmt::format("client speaks protocol versions {}..{}, the daemon 1..{}",
                                      hello.min_version, m.header.version, NPU_DAEMON_VERSION));
  }
  const uint32_t version = std::min<uint32_t>(m.header.version, NPU_DAEMON_VERSION);
  constexpr uint32_t kKnown = NPU_DAEMON_HELLO_SHAREABLE | NPU_DAEMON_HELLO_ATTACH;
  if ((hello.flags & ~kKnown) != 0 || hello.pad != 0 || hello.flags == kKnown ||
      (hello.flags != 0 && version < 2)) {
    return protocol_error(m.header.seq, EINVAL,
                          fmt::format("HELLO flags {:#x} (version {})", hello.flags, version));
  }
  if (m.fds.size() != (hello.flags != 0 ? 1u : 0u)) {
    return protocol_error(
        m.header.seq, EPROTO,
        fmt::format("HELLO with flags {:#x} and {} descriptors", hello.flags, m.fds.size()));
  }

  std::shared_ptr<DriverFile> f;
  if ((hello.flags & NPU_DAEMON_HELLO_ATTACH) != 0) {
    f = server_.files().find(socket_cookie(m.fds[0].get()));
    if (f == nullptr) {
      return protocol_error(m.header.seq, ENOENT,
                            "ATTACH: the descriptor is no shareable connection of this daemon");
    }
  } else {
    const int fd = kmd_.open(emu::Kmd::Opener{server_.may_realtime(peer_)});
    if (fd < 0) {
      return protocol_error(m.header.seq, errno,
                            fmt::format("cannot open a driver file: {}", std::strerror(errno)));
    }
    f = std::make_shared<DriverFile>(kmd_, fd, id_);
    if ((hello.flags & NPU_DAEMON_HELLO_SHAREABLE) != 0) {
      const uint64_t cookie = socket_cookie(m.fds[0].get());
      if (cookie == 0) {
        return protocol_error(m.header.seq, EINVAL, "SHAREABLE: the descriptor is no socket");
      }
      server_.files().add(cookie, f);
    }
  }
  {
    std::unique_lock lk(file_mu_);
    file_ = f;
  }
  hello_pid_.store(hello.pid);
  version_.store(version);
  log().info("client {}: connected (pid {}, uid {}{}){}", id_, peer_.pid, peer_.uid,
             server_.may_realtime(peer_) ? ", may use realtime" : "",
             (hello.flags & NPU_DAEMON_HELLO_ATTACH) != 0
                 ? fmt::format(", attached to the file of client {}", f->id())
                 : "");
  npu_daemon_hello_reply r{};
  r.version = version;
  r.client_id = id_;
  r.api_version = (DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR;
  r.file_id = version >= 2 ? f->id() : 0;
  const std::array parts{wire::bytes_of(r)};
  return send(NPU_DAEMON_HELLO | NPU_DAEMON_REPLY, m.header.seq, parts);
}

bool Connection::handle_ioctl(wire::Message& m) {
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
  PendingCall call;
  call.seq = seq;
  call.request = request;
  call.arg.assign(p.begin() + sizeof(req), p.begin() + sizeof(req) + req.arg_size);
  const std::span<const std::byte> extra = p.subspan(sizeof(req) + req.arg_size);

  // The user pointers inside the struct now point into this process (npu/ioctl_marshal.h).
  // A request the table does not know has none: the driver answers it (EINVAL) as it is.
  call.info = find_ioctl(request);
  if (call.info != nullptr && call.info->size == req.arg_size) {
    if (auto u = wire::unpack_request(*call.info, call.arg, extra, std::move(m.fds), call.marshal);
        !u) {
      return protocol_error(seq, u.error().code, u.error().message);
    }
  } else if (!extra.empty() || !m.fds.empty()) {
    return protocol_error(seq, EPROTO, fmt::format("IOCTL {:#x}: unexpected extra bytes", request));
  } else {
    call.info = nullptr;
  }

  if (call.info != nullptr && call.info->blocks() && call.info->deadline(call.arg.data()) > 0) {
    // A blocking call: try it without blocking; if it would block, a waiter answers it when
    // it is done and the reader goes on with the next request.
    const int64_t deadline = call.info->deadline(call.arg.data());
    call.info->set_deadline(call.arg.data(), 0);
    const auto [ret, err] = call_driver(call);
    if (ret < 0 && err == EBUSY) {
      call.info->set_deadline(call.arg.data(), deadline);
      queue_wait(std::move(call));
      return true;
    }
    call.info->set_deadline(call.arg.data(), deadline);
    finish(call, ret, err);
    return true;
  }
  const auto [ret, err] = call_driver(call);
  finish(call, ret, err);
  return true;
}

std::pair<int, int> Connection::call_driver(PendingCall& call) {
  const std::shared_ptr<DriverFile> f = file();
  if (f == nullptr) return {-1, EBADF};
  const int ret = kmd_.ioctl(f->fd(), call.request, call.arg.data());
  return {ret, ret < 0 ? errno : 0};
}

void Connection::log_refusal(const PendingCall& call, int err) {
  const std::shared_ptr<DriverFile> f = file();
  if (f == nullptr) return;
  std::string reason(256, '\0');
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_LAST_ERROR;
  q.size = static_cast<uint32_t>(reason.size());
  q.data = reinterpret_cast<uintptr_t>(reason.data());
  if (kmd_.ioctl(f->fd(), DRM_IOCTL_NPU_QUERY, &q) != 0) reason.clear();
  reason.resize(std::strlen(reason.c_str()));
  log().warn("client {} (pid {}, uid {}): {} refused: {}", id_, peer_.pid, peer_.uid,
             call.info != nullptr ? call.info->name : "ioctl",
             reason.empty() ? std::strerror(err) : reason);
}

void Connection::finish(PendingCall& call, int ret, int err) {
  if (ret < 0 && (err == EDQUOT || err == EPERM)) log_refusal(call, err);
  std::vector<std::byte> out;
  std::vector<wire::UniqueFd> fds;  // made by the driver for the client: sent, then closed
  if (call.info != nullptr) {
    out = wire::pack_reply(*call.info, call.arg, call.marshal, ret == 0, fds);
  }
  call.marshal.received.clear();  // the client's descriptors are done with
  reply_ioctl(call.seq, ret, err, call.arg, out, fds);
}

void Connection::reply_ioctl(uint32_t seq, int ret, int err, std::span<const std::byte> arg,
                             std::span<const std::byte> extra,
                             std::span<const wire::UniqueFd> fds) {
  npu_daemon_ioctl_reply r{};
  r.ret = ret < 0 ? -1 : 0;
  r.err = ret < 0 ? static_cast<uint32_t>(err) : 0;
  r.arg_size = static_cast<uint32_t>(arg.size());
  r.extra_size = static_cast<uint32_t>(extra.size());
  const std::array parts{wire::bytes_of(r), arg, extra};
  std::vector<int> raw;
  for (const wire::UniqueFd& fd : fds) raw.push_back(fd.get());
  send(NPU_DAEMON_IOCTL | NPU_DAEMON_REPLY, seq, parts, raw);
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
  } else if (const std::shared_ptr<DriverFile> f = file(); f != nullptr) {
    memfd.reset(kmd_.export_bo(f->fd(), req.offset, static_cast<size_t>(req.length),
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

void Connection::queue_wait(PendingCall call) {
  std::lock_guard lk(wait_mu_);
  waits_.push_back(std::move(call));
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
    if (stopping_) return;  // the file is going: queued calls are not answered
    PendingCall call = std::move(waits_.front());
    waits_.pop_front();
    --idle_waiters_;
    lk.unlock();
    // Slices, so that closing the file (which needs the lock exclusively) is never held up
    // for longer than one slice.
    const int64_t deadline = call.info->deadline(call.arg.data());
    int ret = 0;
    int err = 0;
    for (;;) {
      if (closing_.load()) {
        ret = -1;
        err = EBADF;
        break;
      }
      const int64_t slice_end = std::min(deadline, now_ns() + kWaitSliceNs);
      call.info->set_deadline(call.arg.data(), slice_end);
      std::tie(ret, err) = call_driver(call);
      if (!(ret < 0 && err == ETIMEDOUT && slice_end < deadline)) break;
    }
    call.info->set_deadline(call.arg.data(), deadline);
    finish(call, ret, err);
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
  std::shared_ptr<DriverFile> f;
  {
    std::unique_lock lk(file_mu_);
    f = std::exchange(file_, nullptr);
  }
  for (auto& t : waiters_) t.join();
  if (f != nullptr) {
    const bool last = f.use_count() == 1;
    // The last channel closes the driver file here: its jobs are aborted or drained, its BOs
    // and contexts freed.
    f.reset();
    log().info("client {}: closed (pid {}){}", id_, peer_.pid,
               last ? "; its jobs, buffers and contexts are released"
                    : "; its file stays open for the other channels");
  }
  done_.store(true);
}

}  // namespace npu::daemon
