// Message framing over a UNIX stream socket: sendmsg with SCM_RIGHTS, recvmsg collecting them.
#include "npu/daemon_wire.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>

namespace npu {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

}  // namespace npu

namespace npu::wire {

static_assert(std::endian::native == std::endian::little,
              "the npu-daemon protocol is little-endian; this host is not");
static_assert(sizeof(npu_daemon_header) == 16);

namespace {

Error sys_error(int err, const char* what) {
  return make_error(err, fmt::format("daemon socket: {}: {}", what, std::strerror(err)));
}

}  // namespace

Expected<void> send_message(int sock, uint16_t type, uint32_t seq,
                            std::span<const std::span<const std::byte>> parts,
                            std::span<const int> fds) {
  size_t total = 0;
  for (const auto& p : parts) total += p.size();
  if (total > NPU_DAEMON_MAX_PAYLOAD || parts.size() > 7 || fds.size() > kMaxFds) {
    return make_error(EMSGSIZE, fmt::format("daemon socket: message of {} bytes in {} parts "
                                            "with {} fds is over the limit",
                                            total, parts.size(), fds.size()));
  }
  npu_daemon_header h{};
  h.magic = NPU_DAEMON_MAGIC;
  h.version = NPU_DAEMON_VERSION;
  h.type = type;
  h.length = static_cast<uint32_t>(total);
  h.seq = seq;

  std::array<iovec, 8> iov{};
  size_t n = 0;
  iov[n++] = {&h, sizeof(h)};
  for (const auto& p : parts) {
    if (!p.empty()) iov[n++] = {const_cast<std::byte*>(p.data()), p.size()};
  }
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kMaxFds)> control{};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = n;
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  size_t left = sizeof(h) + total;
  while (left > 0) {
    const ssize_t w = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, "send");
    }
    left -= static_cast<size_t>(w);
    // The descriptors went with the first bytes; skip what was written.
    msg.msg_control = nullptr;
    msg.msg_controllen = 0;
    size_t skip = static_cast<size_t>(w);
    while (skip > 0 && msg.msg_iovlen > 0) {
      if (skip >= msg.msg_iov->iov_len) {
        skip -= msg.msg_iov->iov_len;
        ++msg.msg_iov;
        --msg.msg_iovlen;
      } else {
        msg.msg_iov->iov_base = static_cast<char*>(msg.msg_iov->iov_base) + skip;
        msg.msg_iov->iov_len -= skip;
        skip = 0;
      }
    }
  }
  return ok();
}

namespace {

// Reads exactly `size` bytes into `dst`, adopting any descriptors that come along.
Expected<void> recv_exact(int sock, std::byte* dst, size_t size, std::vector<UniqueFd>& fds,
                          bool at_start) {
  size_t got = 0;
  while (got < size) {
    iovec iov{dst + got, size - got};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kMaxFds)> control{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    const ssize_t r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, "receive");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds.emplace_back(fd);
      }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0 || fds.size() > kMaxFds) {
      return make_error(EMSGSIZE, "daemon socket: more descriptors than a message may carry");
    }
    if (r == 0) {
      return make_error(ECONNRESET, at_start && got == 0
                                        ? "daemon socket: connection closed"
                                        : "daemon socket: connection closed in a message");
    }
    got += static_cast<size_t>(r);
  }
  return ok();
}

}  // namespace

Expected<Message> recv_message(int sock) {
  Message m;
  NPU_TRY(recv_exact(sock, reinterpret_cast<std::byte*>(&m.header), sizeof(m.header), m.fds, true));
  if (m.header.magic != NPU_DAEMON_MAGIC) {
    return make_error(EPROTO, fmt::format("daemon socket: bad magic {:#x} (expected {:#x})",
                                          m.header.magic, NPU_DAEMON_MAGIC));
  }
  if (m.header.length > NPU_DAEMON_MAX_PAYLOAD) {
    return make_error(EMSGSIZE, fmt::format("daemon socket: payload of {} bytes is over the "
                                            "limit of {}",
                                            m.header.length, NPU_DAEMON_MAX_PAYLOAD));
  }
  m.payload.resize(m.header.length);
  if (!m.payload.empty()) {
    NPU_TRY(recv_exact(sock, m.payload.data(), m.payload.size(), m.fds, false));
  }
  return m;
}

}  // namespace npu::wire
