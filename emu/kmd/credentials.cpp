// own_credentials() and process_credentials() (npu/emu/credentials.h).
#include "npu/emu/credentials.h"

#include <linux/capability.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace npu::emu {

std::optional<Credentials> process_credentials(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  Credentials c;
  c.pid = pid;
  bool uid = false, gid = false, caps = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    uint32_t real = 0;  // "Uid:" and "Gid:" list real, effective, saved and fs ids
    if (key == "Uid:") {
      uid = static_cast<bool>(fields >> real >> c.uid);
    } else if (key == "Gid:") {
      gid = static_cast<bool>(fields >> real >> c.gid);
    } else if (key == "CapEff:") {
      unsigned long long bits = 0;
      caps = static_cast<bool>(fields >> std::hex >> bits);
      c.cap_sys_nice = ((bits >> CAP_SYS_NICE) & 1) != 0;
    }
  }
  if (!uid || !gid || !caps) return std::nullopt;
  return c;
}

Credentials own_credentials() {
  if (auto c = process_credentials(::getpid())) return *c;
  Credentials c;  // no /proc: ids from the system calls, no capability
  c.pid = ::getpid();
  c.uid = ::geteuid();
  c.gid = ::getegid();
  return c;
}

}  // namespace npu::emu
