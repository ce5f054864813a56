// ShimDevice: the emulated device the preload shim puts behind /dev/accel/accel0, chosen once
// per process from $NPU_SHIM_DEVICE (set by npu-shim; else $NPU_DEVICE when it names an
// "emu:" or "unix:" device; else "emu:"):
//
//   emu:[CONFIG]  in-process: the process's own mock kernel driver (emu::Kmd, with checked
//                 user copies: a bad pointer is EFAULT), created on the first open(). Each
//                 open is one file of it, reached by the program through one end of a socket
//                 pair (a real descriptor: dup, poll, SCM_RIGHTS and close work on it); the
//                 shim keeps the other end and releases the driver file once every copy of
//                 the program's end, in every process, is closed (it sees the hang-up).
//   unix:PATH     npu-daemon: each open is a connection made SHAREABLE; the program's
//                 descriptor is a copy of the connected socket, so the daemon closes the file
//                 when the last copy anywhere is closed, as the kernel does. A forked child,
//                 or any process the descriptor reaches, ATTACHes a channel of its own.
//
// Threading: every call may come from any thread. Lifetime: a process-wide singleton, never
// destroyed (hooks run during exit); in a forked child an in-process device is abandoned
// (its threads are gone) and a new one is made on the next open().
#pragma once

#include <memory>
#include <string>

#include "npu/expected.h"
#include "open_file.h"

namespace npu::shim {

struct Opened {
  int fd = -1;  // the program's descriptor
  std::shared_ptr<OpenFile> file;
};

class ShimDevice {
 public:
  virtual ~ShimDevice() = default;

  /// The device of this process (from the environment, on first use). An unusable device
  /// string is reported on stderr once; open() then fails with ENODEV.
  static ShimDevice& get();

  /// Opens a file: the program's new descriptor (close-on-exec with `cloexec`) and its file.
  virtual Expected<Opened> open(bool cloexec) = 0;
  /// The file behind `fd`, a descriptor the shim never saw being made, when it is one of this
  /// device's (an inherited or received copy); nullptr otherwise.
  virtual std::shared_ptr<OpenFile> adopt(int fd) = 0;
  /// Releases files whose last descriptor closed elsewhere (the in-process device's hang-up
  /// check); called on every open and close of a device descriptor.
  virtual void reap() {}
  /// In the forked child, inside the atfork handler.
  virtual void forked() {}
  /// "emu:..." or "unix:...", as configured.
  virtual const std::string& spec() const = 0;
};

}  // namespace npu::shim
