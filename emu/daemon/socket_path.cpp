// The daemon's socket: default location, stale-socket detection, bind and listen.
#include "npu/daemon/socket_path.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace npu::daemon {

std::string default_socket_path() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");  // NOLINT(concurrency-mt-unsafe)
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/npu/npu0.sock";
  return fmt::format("/tmp/npu-{}/npu0.sock", ::getuid());
}

namespace {

Error sys_error(int err, const std::string& path, const char* what) {
  return make_error(err, fmt::format("socket {}: {}: {}", path, what, std::strerror(err)));
}

Expected<sockaddr_un> address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return make_error(ENAMETOOLONG, fmt::format("socket {}: path is empty or longer than {} bytes",
                                                path, sizeof(addr.sun_path) - 1));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Removes a socket file nobody accepts on; EADDRINUSE when a daemon answers, EEXIST when the
// path is not a socket.
Expected<void> clear_stale(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return ok();  // nothing there
  if (!S_ISSOCK(st.st_mode)) {
    return make_error(EEXIST, fmt::format("socket {}: exists and is not a socket", path));
  }
  wire::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) return sys_error(errno, path, "socket");
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    return make_error(EADDRINUSE,
                      fmt::format("socket {}: in use by a running daemon (stop it or pass "
                                  "--socket)",
                                  path));
  }
  if (errno != ECONNREFUSED) return sys_error(errno, path, "probing the existing socket");
  if (::unlink(path.c_str()) != 0) return sys_error(errno, path, "removing the stale socket");
  return ok();
}

}  // namespace

Expected<wire::UniqueFd> listen_unix(const std::string& path, std::optional<gid_t> group) {
  auto addr = address(path);
  if (!addr) return addr.error();
  if (const size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), group ? 0750 : 0700) == 0) {
      if (group && ::chown(dir.c_str(), static_cast<uid_t>(-1), *group) != 0) {
        return sys_error(errno, path, "giving its directory to the group");
      }
    } else if (errno != EEXIST) {
      return sys_error(errno, path, "creating its directory");
    }
  }
  NPU_TRY(clear_stale(path, *addr));
  wire::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return sys_error(errno, path, "socket");
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return sys_error(errno, path, "bind");
  }
  // Before listen(): until then a connect() is refused, so the mode holds from the first client.
  if (group && ::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return sys_error(err, path, "giving the socket to the group");
  }
  if (::chmod(path.c_str(), group ? 0660 : 0600) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return sys_error(err, path, "chmod");
  }
  if (::listen(fd.get(), 64) != 0) return sys_error(errno, path, "listen");
  return fd;
}

}  // namespace npu::daemon
