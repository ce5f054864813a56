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
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "npu/expected.h"
#include "npu/unique_fd.h"
#include "npu_daemon.h"

namespace npu::wire {

/// The owned descriptor (npu/unique_fd.h), by its former name here.
using UniqueFd = npu::UniqueFd;

/// Most descriptors one message may carry (MAP replies carry one, SUBMIT up to
/// DRM_NPU_MAX_IN_FENCES in-fences).
inline constexpr size_t kMaxFds = 64;

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
