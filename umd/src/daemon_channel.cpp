// DaemonChannel: the handshake, request/reply matching by sequence number, and the ioctl, MAP
// and STATUS requests of one connection to npu-daemon.
#include "npu/daemon_channel.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "npu/ioctl_marshal.h"
#include "npu/ioctl_table.h"
#include "npu/log.h"
#include "npu_accel.h"

namespace npu {

namespace {

Error errno_error(int err, std::string message) {
  return make_error(err, std::move(message) + ": " + std::strerror(err));
}

}  // namespace

Expected<std::unique_ptr<DaemonChannel>> DaemonChannel::connect(const std::string& socket_path,
                                                                bool shareable) {
  return open(socket_path, shareable ? NPU_DAEMON_HELLO_SHAREABLE : 0u, -1);
}

Expected<std::unique_ptr<DaemonChannel>> DaemonChannel::attach(const std::string& socket_path,
                                                               int held_socket) {
  return open(socket_path, NPU_DAEMON_HELLO_ATTACH, held_socket);
}

Expected<std::unique_ptr<DaemonChannel>> DaemonChannel::open(const std::string& socket_path,
                                                             uint32_t flags, int fd_to_send) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return make_error(ENAMETOOLONG, fmt::format("socket {}: path too long", socket_path));
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  wire::UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return errno_error(errno, "socket " + socket_path);
  if (::connect(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return errno_error(errno, "socket " + socket_path);
  }
  std::unique_ptr<DaemonChannel> ch(new DaemonChannel(std::move(sock)));
  npu_daemon_hello hello{};
  hello.min_version = flags != 0 ? 2u : 1u;
  hello.pid = static_cast<uint32_t>(::getpid());
  hello.flags = flags;
  // A version-1 HELLO (8 bytes) when no version-2 flag is needed, so old daemons still talk.
  const std::span<const std::byte> body =
      wire::bytes_of(hello).first(flags != 0 ? sizeof(hello) : 8);
  const std::array parts{body};
  const int own = ch->fd();
  const int send_fd = (flags & NPU_DAEMON_HELLO_SHAREABLE) != 0 ? own : fd_to_send;
  auto reply = ch->call(NPU_DAEMON_HELLO, parts,
                        flags != 0 ? std::span<const int>(&send_fd, 1) : std::span<const int>());
  if (!reply) {
    // A refused HELLO comes back as ERROR with the daemon's code (ENOENT for an ATTACH to no
    // shareable file, EPROTONOSUPPORT, ...); a broken connection as EIO.
    const int code = reply.error().code == EIO ? EPROTO : reply.error().code;
    return make_error(
        code, fmt::format("socket {}: handshake failed: {}", socket_path, reply.error().message));
  }
  if (reply->header.type != (NPU_DAEMON_HELLO | NPU_DAEMON_REPLY) ||
      reply->payload.size() != sizeof(npu_daemon_hello_reply)) {
    return make_error(EPROTO,
                      fmt::format("socket {}: handshake failed: unexpected reply", socket_path));
  }
  npu_daemon_hello_reply hr{};
  std::memcpy(&hr, reply->payload.data(), sizeof(hr));
  if (hr.version < hello.min_version || hr.version > NPU_DAEMON_VERSION) {
    return make_error(
        EPROTONOSUPPORT,
        fmt::format("socket {}: the daemon speaks protocol version {}", socket_path, hr.version));
  }
  ch->client_id_ = hr.client_id;
  ch->file_id_ = hr.version >= 2 ? hr.file_id : hr.client_id;
  ch->version_ = hr.version;
  return ch;
}

DaemonChannel::~DaemonChannel() = default;

void DaemonChannel::shutdown() {
  ::shutdown(sock_.get(), SHUT_RDWR);
}

Error DaemonChannel::gone() const {
  return make_error(EIO, reason_.empty() ? "the daemon connection is broken" : reason_);
}

Expected<wire::Message> DaemonChannel::call(uint16_t type,
                                            std::span<const std::span<const std::byte>> parts,
                                            std::span<const int> fds) {
  const uint32_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lk(send_mu_);
    if (broken_.load()) {
      std::lock_guard rl(mu_);
      return gone();
    }
    if (auto s = wire::send_message(sock_.get(), type, seq, parts, fds); !s) {
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
      broken_.store(true);
      cv_.notify_all();
      return make_error(e.err != 0 ? static_cast<int>(e.err) : EIO, reason_);
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

int DaemonChannel::ioctl(unsigned long request, void* arg) {
  // What the daemon's driver does not answer fails there as here (EINVAL), but without a
  // table row the user pointers inside the struct are unknown, so it is not sent at all.
  const IoctlInfo* info = find_ioctl(request);
  if (info == nullptr) {
    errno = EINVAL;
    return -1;
  }
  const uint32_t user_size = _IOC_SIZE(request);
  auto packed = wire::pack_request(*info, arg, user_size);
  if (!packed) {
    errno = packed.error().code;
    return -1;
  }
  npu_daemon_ioctl req{};
  req.request = info->request;  // at the struct's current size
  req.arg_size = info->size;
  req.extra_size = static_cast<uint32_t>(packed->extra.size());
  const std::array parts{wire::bytes_of(req), std::span<const std::byte>(packed->arg),
                         std::span<const std::byte>(packed->extra)};
  auto reply = call(NPU_DAEMON_IOCTL, parts, packed->fds);
  if (!reply) {
    errno = EIO;  // the daemon is gone or ended the connection
    return -1;
  }
  npu_daemon_ioctl_reply r{};
  const auto& p = reply->payload;
  if (reply->header.type != (NPU_DAEMON_IOCTL | NPU_DAEMON_REPLY) || p.size() < sizeof(r)) {
    errno = EIO;
    return -1;
  }
  std::memcpy(&r, p.data(), sizeof(r));
  if (r.arg_size != info->size || p.size() != sizeof(r) + info->size + r.extra_size) {
    errno = EIO;
    return -1;
  }
  const std::span<const std::byte> body(p.data() + sizeof(r), p.size() - sizeof(r));
  if (const int err = wire::unpack_reply(*info, arg, user_size, body.first(info->size),
                                         body.subspan(info->size), reply->fds, r.ret == 0);
      err != 0) {
    errno = err;
    return -1;
  }
  if (r.ret < 0) {
    errno = static_cast<int>(r.err);
    return -1;
  }
  return 0;
}

Expected<wire::UniqueFd> DaemonChannel::map(uint64_t offset, uint64_t length, int flags) {
  npu_daemon_map req{};
  req.offset = offset;
  req.length = length;
  req.flags = static_cast<uint32_t>(flags);
  const std::array parts{wire::bytes_of(req)};
  auto reply = call(NPU_DAEMON_MAP, parts);
  if (!reply) return make_error(EIO, reply.error().message);
  npu_daemon_map_reply r{};
  if (reply->header.type != (NPU_DAEMON_MAP | NPU_DAEMON_REPLY) ||
      reply->payload.size() != sizeof(r)) {
    return make_error(EIO, "daemon map: malformed reply");
  }
  std::memcpy(&r, reply->payload.data(), sizeof(r));
  if (r.ret < 0) return make_error(static_cast<int>(r.err), "daemon map: refused");
  if (reply->fds.size() != 1) return make_error(EIO, "daemon map: no descriptor in the reply");
  return std::move(reply->fds[0]);
}

Expected<DaemonStatus> DaemonChannel::status() {
  auto reply = call(NPU_DAEMON_STATUS, {});
  if (!reply) return make_error(EIO, reply.error().message);
  DaemonStatus st;
  st.version = version_;
  const auto& p = reply->payload;
  // Version 3 added fields at the end of both structs, and says how long an entry is.
  const size_t head = version_ >= 3 ? sizeof(st.summary) : NPU_DAEMON_STATUS_V2_SIZE;
  if (reply->header.type != (NPU_DAEMON_STATUS | NPU_DAEMON_REPLY) || p.size() < head) {
    return make_error(EIO, "daemon status: malformed reply");
  }
  std::memcpy(&st.summary, p.data(), head);
  const size_t each = version_ >= 3 ? st.summary.client_size : NPU_DAEMON_CLIENT_V2_SIZE;
  if (each < NPU_DAEMON_CLIENT_V2_SIZE || p.size() != head + st.summary.num_clients * each) {
    return make_error(EIO, "daemon status: malformed reply");
  }
  st.clients.resize(st.summary.num_clients);
  for (size_t i = 0; i < st.clients.size(); ++i) {
    std::memcpy(&st.clients[i], p.data() + head + i * each,
                std::min(each, sizeof(npu_daemon_client)));
  }
  return st;
}

}  // namespace npu
