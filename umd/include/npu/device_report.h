// DeviceReport: everything npu-info shows about a device, gathered in one call, and its two
// renderings (a human-readable table and a stable JSON object, keys in docs/tools.md).
//
// Semantics: query_device_report() reads Device::params() (read once at open) and issues
// QUERY ENGINE_INFO, QUERY COUNTERS and (with quotas, API 1.4) QUERY QUOTA; for a device
// served by npu-daemon ("unix:PATH") it also asks the daemon for its other clients. The formatters
// are pure functions of the report. Errors: those of the queries, e.g. "query counters: fd 5: QUERY
// failed: Invalid argument". Threading/lifetime: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/expected.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"

namespace npu {

struct DeviceReport {
  std::string device;  // the device string the Device was opened on
  DeviceParams params;
  std::vector<EngineInfo> engines;
  drm_npu_counters counters{};
  /// This file's use of its limits (API 1.4, DRM_NPU_CAP_QUOTAS).
  std::optional<drm_npu_quota> quota;
  /// "unix:PATH" devices: the daemon's other clients and the BO memory alive in it.
  std::optional<DaemonStatus> daemon;
};

/// Reads params, engine info and counters of `device`.
Expected<DeviceReport> query_device_report(const Device& device);

/// "silicon", "emulator", or "unknown (N)".
std::string platform_name(uint32_t platform);
/// Names of the DRM_NPU_CAP_* bits set in `caps` ("int8", "fp32", "priority", "job_profile",
/// "skip_validation"); unknown bits as "bit N".
std::vector<std::string> capability_names(uint64_t caps);
/// Names of the NPU_FEATURE_* bits set in `features` ("int8", "fp32", "transcendental");
/// unknown bits as "bit N".
std::vector<std::string> feature_names(uint64_t features);
/// Unit of EngineInfo::throughput for an NPU_ENGINE_* id: "bytes/cycle" (DMA),
/// "macs/cycle" (matrix), "elements/cycle" (vector), "commands/cycle" (CP).
const char* engine_throughput_unit(uint32_t engine);

/// The human-readable report (identity, parameters, engines table, counters), '\n'-terminated.
std::string format_device_report(const DeviceReport& report);
/// The report as a JSON object (2-space indented, '\n'-terminated); keys in docs/tools.md.
std::string device_report_json(const DeviceReport& report);

}  // namespace npu
