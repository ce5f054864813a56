// The libnpu conformance suite: written once, run against every backend below the
// KernelInterface seam (as IREE's hal/cts). A backend registers only a factory and a list of
// tests it does not support, with the reason; everything else must pass on it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/isa/device_config.h"
#include "npu/job.h"
#include "npu/kernel.h"
#include "relu_job.h"

namespace npu::cts {

struct Backend {
  std::string name;
  /// A fresh kernel (a fresh device) for one test.
  std::function<std::shared_ptr<KernelInterface>(const isa::DeviceConfig&)> make;
  /// "Suite.Test" -> why this backend cannot run it.
  std::map<std::string, std::string> unsupported;
  /// What Device::open_with() is given as the node's path.
  std::string path = "emu:";
};

/// gtest prints the backend by name.
inline void PrintTo(const Backend& b, std::ostream* os) {
  *os << b.name;
}

/// The registered backends (backends.cpp). "drm" (libnpu's device-node backend) is among them
/// only when a node with our driver exists: run the suite under npu-shim for it
/// (`npu-shim -- umd_tests --gtest_filter='*/drm'`).
const std::vector<Backend>& backends();

/// The device config every conformance test runs with: defaults plus a short watchdog, so
/// hung-job tests finish quickly.
isa::DeviceConfig cts_config();

class CtsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;

  /// A buffer of `n` floats holding `values` (or zeros).
  Buffer floats(const std::vector<float>& values);
  std::vector<float> read_floats(Buffer& b, size_t n);

  std::shared_ptr<KernelInterface> kernel_;
  std::optional<Device> device_;
};

/// A CtsTest with a Context on the device in ctx_.
class ContextCtsTest : public CtsTest {
 protected:
  void SetUp() override;

  std::optional<Context> ctx_;
};

using npu::record_relu;  // relu_job.h

/// A job that never ends by itself: DMA_OUT waits on a semaphore nobody signals. The validator
/// rejects such a wait at finalize (docs/racecheck.md), so record_hang() finalizes the buffer
/// unvalidated (skip_validation): the device meets the wait and the watchdog ends the job.
void record_hang(CommandBuffer& cb);

std::string backend_name(const ::testing::TestParamInfo<Backend>& info);

}  // namespace npu::cts

/// Instantiates a conformance fixture (a subclass of CtsTest) for every backend.
#define NPU_CTS_INSTANTIATE(Suite)                                                       \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::ValuesIn(::npu::cts::backends()), \
                           ::npu::cts::backend_name)
