// npu-abi-test: the kernel ABI's conformance suite (tests/abi), raw ioctl()/mmap() on a node.
//   npu-abi-test [--device NODE] [--backend NAME --expected-failures FILE] [--gtest_* flags]
// Runs every test against NODE (default /dev/accel/accel0: under npu-shim, the emulated one);
// tests the node's API version or capabilities do not cover are skipped, saying why. Exit 0
// when every test passed or failed as FILE expects for backend NAME, 1 otherwise (each
// unexpected result is named), 2 when the node cannot be opened.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <xf86drm.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "abi.h"
#include "cli.h"
#include "expected_failures.h"

static int tool_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);  // takes the --gtest_* flags out of argv
  CLI::App app{"The NPU kernel ABI's conformance suite: raw ioctl()/mmap() on a device node"};
  std::string backend;
  std::string expected_path;
  app.add_option("--device", npu::abi::device_path(),
                 "the device node (default " + npu::abi::device_path() + ")");
  app.add_option("--backend", backend, "the backend's name in the expected-failures file");
  app.add_option("--expected-failures", expected_path,
                 "lines 'BACKEND Suite.Test reason': failures that do not fail the run");
  if (auto s = npu::tools::parse_args(app, argc, argv, "npu-abi-test")) return *s;

  std::map<std::string, std::string> expected;
  if (!expected_path.empty()) {
    auto e = npu::abi::load_expected_failures(expected_path, backend);
    if (!e) return npu::tools::fail("npu-abi-test", e.error().message);
    expected = std::move(*e);
  }
  const int fd = ::open(npu::abi::device_path().c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return npu::tools::fail("npu-abi-test", npu::abi::device_path() + ": " + std::strerror(errno),
                            2);
  }
  if (drmVersionPtr v = drmGetVersion(fd)) {
    std::printf("npu-abi-test: %s: driver %s %d.%d.%d (%s), %s\n", npu::abi::device_path().c_str(),
                v->name, v->version_major, v->version_minor, v->version_patchlevel, v->date,
                v->desc);
    drmFreeVersion(v);
  }
  ::close(fd);

  auto* sorter = new npu::abi::ResultSorter;  // NOLINT: gtest's listener list owns it
  ::testing::UnitTest::GetInstance()->listeners().Append(sorter);
  // The verdict, not gtest's status, decides (expected failures).
  [[maybe_unused]] const int gtest_status = RUN_ALL_TESTS();
  return npu::abi::verdict(*sorter, expected);
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-abi-test", [&] { return tool_main(argc, argv); });
}
