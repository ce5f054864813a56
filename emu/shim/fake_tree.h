// FakeTree: the part of the file system that a real accel node brings and the emulated one
// lacks: /dev/accel/accel0 and the sysfs entries generic code reads to find and identify it.
// The preload shim answers path calls under these prefixes from a real directory tree (the
// root: $NPU_SHIM_ROOT, made by npu-shim, or a private temporary directory), so every libc
// path function behaves naturally on it; only the device node itself needs faking (it is an
// empty regular file in the tree, reported as the character device 261:0).
//
//   /dev/accel/                        directory, one entry: accel0
//   /dev/accel/accel0                  the device node (char 261:0, mode 0666)
//   /sys/class/accel/accel0/dev        "261:0"
//   /sys/class/accel/accel0/uevent     MAJOR, MINOR, DEVNAME
//   /sys/class/accel/accel0/device/uevent   DRIVER=npu, MODALIAS
//   /sys/dev/char/261:0                -> ../../class/accel/accel0 (a symlink, as in sysfs)
//
// Only absolute paths are recognised (a program that chdir()s into /dev and opens
// "accel/accel0" reaches the real file system).
//
// Threading: the tree is built once (thread-safe); the queries are const.
// Lifetime: static; a private root is removed at exit by the process that made it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace npu::shim {

inline constexpr const char* kNodePath = "/dev/accel/accel0";
inline constexpr const char* kAccelDir = "/dev/accel";

class FakeTree {
 public:
  /// The tree (built on first use; a failure is reported on stderr and leaves no tree: the
  /// node still opens, sysfs lookups fail with ENOENT).
  static const FakeTree& get();

  /// True for the device node's path.
  static bool is_node(std::string_view path);
  /// True for a path under one of the faked prefixes (checked without building the tree).
  static bool covers(std::string_view path);
  /// Where `path` lives in the tree, if it is one of the faked prefixes; nullopt otherwise.
  std::optional<std::string> redirect(std::string_view path) const;
  /// The tree path of the /dev/accel directory (for readdir's d_type fix-up).
  const std::string& accel_dir() const { return accel_dir_; }
  /// The path as the program named it, for a tree path (realpath()), else nullopt.
  std::optional<std::string> unredirect(std::string_view tree_path) const;
  /// st_rdev of the node.
  static dev_t node_rdev();

 private:
  template <typename T>
  friend class NoDestructor;
  FakeTree();
  std::string root_;
  std::string accel_dir_;
};

}  // namespace npu::shim
