// Credentials: who calls the kernel driver, as the kernel knows it — a process's pid, user and
// group, and whether it holds CAP_SYS_NICE, the capability the DRM drivers (amdgpu, i915) ask
// for before they grant a raised scheduling priority. The mock driver decides at open() whether
// the file may create REALTIME contexts (Kmd::Opener); in-process that is the calling process,
// behind npu-daemon the client at the other end of the socket (SO_PEERCRED, then the
// capability from /proc/PID/status), never what a client says about itself.
//
// Pure functions over /proc; thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>

namespace npu::emu {

struct Credentials {
  pid_t pid = 0;
  uid_t uid = 0;              // effective, as SO_PEERCRED reports it
  gid_t gid = 0;              // effective
  bool cap_sys_nice = false;  // CAP_SYS_NICE in the effective set
};

/// The calling process's credentials.
Credentials own_credentials();

/// The credentials of process `pid` from /proc/PID/status (Uid, Gid and CapEff: the effective
/// user, group and capabilities); nullopt when it cannot be read (the process is gone).
std::optional<Credentials> process_credentials(pid_t pid);

}  // namespace npu::emu
