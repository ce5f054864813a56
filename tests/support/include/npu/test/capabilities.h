// An unprivileged caller, as the driver's priority policy sees one (API 1.4): REALTIME
// contexts need CAP_SYS_NICE in the effective set of the process that opens the file (the
// daemon reads its client's from the kernel when it connects). The tests run as root, so they
// take the capability out of the calling thread's effective set — it stays permitted, so it can
// be put back — and open a file while it is out.
//
// Threading: capabilities are per thread on Linux (capset acts on the calling thread only);
// hold a WithoutCapSysNice on the thread that opens the file. Lifetime: the capability comes
// back when the object goes away.
#pragma once

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace npu::test {

/// Whether the calling thread has CAP_SYS_NICE in its effective set now.
inline bool has_cap_sys_nice() {
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  if (::syscall(SYS_capget, &h, d) != 0) return false;
  return (d[0].effective & (1u << CAP_SYS_NICE)) != 0;
}

/// Takes CAP_SYS_NICE out of the calling thread's effective set for the object's lifetime.
class WithoutCapSysNice {
 public:
  WithoutCapSysNice() {
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    if (::syscall(SYS_capget, &header_, data_) != 0) return;
    held_ = (data_[0].effective & (1u << CAP_SYS_NICE)) != 0;
    if (!held_) return;
    __user_cap_data_struct dropped[2] = {data_[0], data_[1]};
    dropped[0].effective &= ~(1u << CAP_SYS_NICE);
    dropped_ = ::syscall(SYS_capset, &header_, dropped) == 0;
  }
  ~WithoutCapSysNice() {
    if (dropped_) (void)::syscall(SYS_capset, &header_, data_);
  }
  WithoutCapSysNice(const WithoutCapSysNice&) = delete;
  WithoutCapSysNice& operator=(const WithoutCapSysNice&) = delete;

  /// The caller lacks CAP_SYS_NICE now (it never had it, or it was taken out).
  bool unprivileged() const { return !held_ || dropped_; }

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct data_[2]{};
  bool held_ = false;
  bool dropped_ = false;
};

}  // namespace npu::test
