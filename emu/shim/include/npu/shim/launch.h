// Running a program under the preload shim (what npu-shim does): the program sees the
// emulated device as /dev/accel/accel0 (docs/driver-prototyping.md).
//
// run_under_shim() checks the device first (an "emu:" config that loads, an "unix:" socket a
// daemon answers on), makes the fake /dev and /sys tree's directory, starts the program with
// libnpu-shim.so preloaded (LD_PRELOAD, after the sanitizer runtime the shim was built with,
// if any) and NPU_SHIM_DEVICE / NPU_SHIM_ROOT set, forwards SIGINT, SIGTERM and SIGHUP to it,
// waits for it and removes the directory.
//
// Threading: call from one thread (it forks and waits). Lifetime: returns when the program
// has exited.
#pragma once

#include <string>
#include <vector>

#include "npu/expected.h"

namespace npu::shim {

struct LaunchOptions {
  /// "emu:", "emu:CONFIG" or "unix:PATH"; empty: $NPU_DEVICE when it is one of those, else
  /// "emu:".
  std::string device;
  /// The program and its arguments (argv[0] is looked up in PATH).
  std::vector<std::string> argv;
  /// The shim library; empty: found next to the installed tools or in the build tree.
  std::string library;
};

/// The device string `requested` resolves to (see LaunchOptions::device).
std::string resolve_device(const std::string& requested);

/// The path of libnpu-shim.so: $NPU_SHIM_LIBRARY, the install tree next to the running
/// executable, or the build tree. ENOENT (naming the places looked at) when none exists.
Expected<std::string> find_shim_library();

/// Runs the program; returns its exit status (128 + N when signal N ended it, 127 when it
/// could not be started). Errors: the device is unusable, the library is missing.
Expected<int> run_under_shim(const LaunchOptions& options);

}  // namespace npu::shim
