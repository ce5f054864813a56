// The statistics of one model run as Python sees them (npu.RunStats, bind_stats.cpp): a
// snapshot of npu::RunStats plus what is needed to name and time it — the package (layer
// names, estimates), the device's engines and clock.
// Threading/lifetime: immutable after construction; shares the RunStats and the package.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "npu/device.h"
#include "npu/format/package.h"
#include "npu/runtime/run_stats.h"

namespace npu::python {

struct StatsSnapshot {
  std::shared_ptr<const RunStats> stats;
  std::shared_ptr<const format::Package> package;
  std::vector<EngineInfo> engines;
  uint64_t clock_hz = 0;
};

}  // namespace npu::python
