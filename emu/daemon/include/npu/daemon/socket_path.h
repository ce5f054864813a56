// Where npu-daemon listens, and the listening socket itself.
//
// Semantics: default_socket_path() is $XDG_RUNTIME_DIR/npu/npu0.sock, or /tmp/npu-$UID/npu0.sock
// when XDG_RUNTIME_DIR is unset. listen_unix() binds a UNIX stream socket there, creating the
// last directory of the path (mode 0700, or 0750 and the group's for a group socket) when
// missing; the socket itself is 0600 (0660 and owned by `group` with one), set between bind
// and listen, so nobody connects before the mode is right. A socket file left by a daemon that died
// is stale: nothing accepts on it, so it is removed and reused. A socket a live daemon answers
// on is refused with EADDRINUSE; a path that exists and is not a socket with EEXIST.
// Threading: free functions, no shared state. Lifetime: the returned descriptor is the caller's.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "npu/daemon_wire.h"
#include "npu/expected.h"

namespace npu::daemon {

/// $XDG_RUNTIME_DIR/npu/npu0.sock, else /tmp/npu-$UID/npu0.sock.
std::string default_socket_path();

/// A listening, non-blocking socket bound at `path` (stale sockets replaced, see above), mode
/// 0600, or 0660 owned by `group`.
Expected<wire::UniqueFd> listen_unix(const std::string& path,
                                     std::optional<gid_t> group = std::nullopt);

}  // namespace npu::daemon
