// Private to libnpuisa: the declarations of every opcode's semantic functions, generated from
// the opcode table (npu/isa/opcodes.def), whose CHECK, FEATURES, REGIONS and COST columns name
// them. Each is defined in the file of its concern (payload_checks.cpp, features.cpp,
// regions.cpp, timing.cpp) and called only through the table-generated dispatch there. A
// function a row names but nobody defines fails at link time.
#pragma once

#include <cstdint>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu/isa/regions.h"
#include "npu/isa/timing.h"
#include "npu_isa.h"

namespace npu::isa::detail {

class PayloadChecker;

#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, CYCLES) \
  Expected<void> CHECK(const PayloadChecker& k, const decltype(npu_cmd::PAYLOAD)& c);
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, COST, \
                 REF, KERNEL)                                                                  \
  Expected<void> CHECK(const PayloadChecker& k, const decltype(npu_cmd::PAYLOAD)& c);          \
  uint64_t FEATURES(const decltype(npu_cmd::PAYLOAD)& c);                                      \
  Expected<void> REGIONS(const decltype(npu_cmd::PAYLOAD)& c, std::vector<Region>& out);       \
  CommandCost COST(const decltype(npu_cmd::PAYLOAD)& c, const DeviceConfig& cfg);
#include "npu/isa/opcodes.def"

}  // namespace npu::isa::detail
