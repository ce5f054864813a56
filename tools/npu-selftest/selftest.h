// The device self-test behind `make demo`: runs a small int8 conv -> pool -> fp32 classifier
// head through the mock kernel driver (open, BO_CREATE, mmap, SUBMIT, WAIT, QUERY), checks
// the device's results against the reference interpreter and prints cycles and counters.
#pragma once

#include <iosfwd>

#include "npu/isa/device_config.h"

namespace npu::selftest {

/// Runs the self-test; returns 0 when every result matches the reference, 1 otherwise.
int run(const isa::DeviceConfig& cfg, std::ostream& out);

}  // namespace npu::selftest
