// FakeTree (fake_tree.h): the directory tree behind /dev/accel and the accel sysfs entries.
#include "fake_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "no_destructor.h"
#include "npu_accel.h"
#include "real_libc.h"

namespace npu::shim {
namespace {

constexpr std::array<std::string_view, 3> kPrefixes = {"/dev/accel", "/sys/class/accel",
                                                       "/sys/dev/char/261:0"};

bool under(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Writes `text` to `path` atomically (a temporary name, then rename), so concurrent shimmed
// processes sharing a root never see a half-written file.
bool write_file(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = real().open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  real().close(fd);
  return ok && ::rename(tmp.c_str(), path.c_str()) == 0;
}

bool build(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string cls = root + "/sys/class/accel/accel0";
  fs::create_directories(root + "/dev/accel", ec);
  fs::create_directories(cls + "/device", ec);
  fs::create_directories(root + "/sys/dev/char", ec);
  if (ec) return false;
  const std::string major = std::to_string(DRM_NPU_ACCEL_MAJOR);
  bool ok = write_file(root + "/dev/accel/accel0", "");
  ok = ok && write_file(cls + "/dev", major + ":0\n");
  ok = ok && write_file(cls + "/uevent", "MAJOR=" + major + "\nMINOR=0\nDEVNAME=accel/accel0\n");
  ok = ok && write_file(cls + "/device/uevent", std::string("DRIVER=") + DRM_NPU_DRIVER_NAME +
                                                    "\nMODALIAS=platform:npu-emulator\n");
  const std::string link = root + "/sys/dev/char/" + major + ":0";
  if (::symlink("../../class/accel/accel0", link.c_str()) != 0 && errno != EEXIST) ok = false;
  return ok;
}

std::string make_private_root() {
  const char* tmpdir = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read once
  std::string templ =
      std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/npu-shim.XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return {};
  // Removed at exit by this process (not by forked children, which share it).
  static const pid_t owner = ::getpid();
  static std::string to_remove;
  to_remove = templ;
  std::atexit([] {
    if (::getpid() != owner) return;
    std::error_code ec;
    std::filesystem::remove_all(to_remove, ec);
  });
  return templ;
}

}  // namespace

FakeTree::FakeTree() {
  const char* env = std::getenv("NPU_SHIM_ROOT");  // NOLINT(concurrency-mt-unsafe): read once
  root_ = env != nullptr && *env == '/' ? std::string(env) : make_private_root();
  if (root_.empty() || !build(root_)) {
    std::fprintf(stderr, "npu-shim: cannot build the fake /dev and /sys tree under '%s': %s\n",
                 root_.c_str(), std::strerror(errno));
    root_.clear();
  }
  accel_dir_ = root_ + kAccelDir;
}

const FakeTree& FakeTree::get() {
  static NoDestructor<FakeTree> tree;  // used by hooks that run during exit
  return *tree;
}

bool FakeTree::is_node(std::string_view path) {
  return path == kNodePath;
}

bool FakeTree::covers(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  for (std::string_view p : kPrefixes) {
    if (under(path, p)) return true;
  }
  return false;
}

std::optional<std::string> FakeTree::redirect(std::string_view path) const {
  if (root_.empty() || !covers(path)) return std::nullopt;
  return root_ + std::string(path);
}

std::optional<std::string> FakeTree::unredirect(std::string_view tree_path) const {
  if (root_.empty() || !under(tree_path, root_)) return std::nullopt;
  std::string_view rest = tree_path.substr(root_.size());
  if (rest.empty()) rest = "/";
  return std::string(rest);
}

dev_t FakeTree::node_rdev() {
  return makedev(DRM_NPU_ACCEL_MAJOR, 0);
}

}  // namespace npu::shim
