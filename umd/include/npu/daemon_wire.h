// The framing of npu-daemon's wire protocol (uapi/npu_daemon.h, docs/daemon.md), shared by
// the daemon (emu/daemon) and libnpu's "unix:" backend: one message is a header, a payload and
// optional descriptors passed with SCM_RIGHTS, sent with one sendmsg() and received whole.
//
// Semantics: send_message() writes all of a message or fails (a stream socket may take it in
// pieces; the descriptors travel with the first piece); MSG_NOSIGNAL, so a peer that went away
// gives EPIPE, not SIGPIPE. recv_message() reads exactly one message, checks the header (magic,
// payload bound) before reading the payload, and takes ownership of every descriptor that
// arrived with it (closing them on error), so a peer cannot leak descriptors into us.
// Threading: a socket may be read by one thread and written by another at the same time; two
// writers (or two readers) of one socket need a lock around each call.
// Lifetime: UniqueFd closes its descriptor when destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "npu/expected.h"
#include "npu_daemon.h"

namespace npu::wire {

/// An owned file descriptor (-1: none).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

/// Most descriptors one message may carry (MAP replies carry one).
inline constexpr size_t kMaxFds = 4;

struct Message {
  npu_daemon_header header{};
  std::vector<std::byte> payload;
  std::vector<UniqueFd> fds;
};

/// Sends a header (magic, NPU_DAEMON_VERSION, type, seq, length = total of `parts`) and the
/// parts, with `fds` attached. Error codes: EMSGSIZE (payload too large), errno of sendmsg
/// (EPIPE when the peer is gone, EAGAIN when a send timeout passed).
Expected<void> send_message(int sock, uint16_t type, uint32_t seq,
                            std::span<const std::span<const std::byte>> parts,
                            std::span<const int> fds = {});

/// Receives one message. Error codes: ECONNRESET for end of stream (clean or in the middle of
/// a message; the message says which), EPROTO for a bad magic, EMSGSIZE for a payload over
/// NPU_DAEMON_MAX_PAYLOAD or more than kMaxFds descriptors, recvmsg's errno otherwise.
Expected<Message> recv_message(int sock);

/// The bytes of a trivially copyable value (for send_message parts).
template <typename T>
std::span<const std::byte> bytes_of(const T& v) {
  return std::as_bytes(std::span<const T, 1>(&v, 1));
}

}  // namespace npu::wire
