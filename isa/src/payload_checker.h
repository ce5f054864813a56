// Private to libnpuisa: PayloadChecker, the toolbox of the per-opcode CHECK functions
// (payload_checks.cpp). It knows which command it checks (its index, header and the device)
// and turns a failed rule into the validator's error text:
//   "command <index> (<mnemonic>): field <name>: <what>".
// A checker is a short-lived view of one command; it borrows the command and the config.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu_isa.h"

namespace npu::isa::detail {

class PayloadChecker {
 public:
  PayloadChecker(uint32_t index, const npu_cmd& cmd, const DeviceConfig& cfg)
      : index_(index), cmd_(cmd), cfg_(cfg) {}

  const npu_cmd_header& hdr() const { return cmd_.hdr; }
  const DeviceConfig& cfg() const { return cfg_; }

  /// "command i (op): what".
  Error error(const std::string& what) const;
  /// "command i (op): field <field>: what".
  Error field_error(const std::string& field, const std::string& what) const;

  /// Every byte of [p, p + n) is zero ("field reserved[3]: must be zero, got 0x1").
  Expected<void> zero(const char* field, const void* p, size_t n) const;
  /// A scalar reserved field is zero.
  template <typename T>
  Expected<void> zero_field(const char* field, const T& v) const {
    return zero_value(field, static_cast<uint64_t>(v));
  }
  Expected<void> positive(const std::string& field, uint64_t v) const;
  Expected<void> in_range(const std::string& field, int64_t v, int64_t lo, int64_t hi) const;
  Expected<void> equal(const char* field, uint64_t expected, uint64_t got) const;
  /// `d` is one of `allowed`; otherwise "expected <expected>, got <dtype>".
  Expected<void> dtype_in(const char* field, uint8_t d, std::initializer_list<uint8_t> allowed,
                          const char* expected) const;
  /// Element size 1, 2 or 4.
  Expected<void> elem_size(uint32_t v) const;
  /// out == (in + pad0 + pad1 - dil*(k-1) - 1) / stride + 1, with the window fitting.
  Expected<void> window(const char* out_field, const char* k_field, uint64_t in, uint64_t pad0,
                        uint64_t pad1, uint64_t k, uint64_t dil, uint64_t stride,
                        uint64_t out) const;
  /// clamp_min <= clamp_max ("greater than clamp_max (a > b)").
  Expected<void> ordered_clamps(int64_t cmin, int64_t cmax) const;

 private:
  Expected<void> zero_value(const char* field, uint64_t v) const;

  uint32_t index_;
  const npu_cmd& cmd_;
  const DeviceConfig& cfg_;
};

/// The payload rules of the checked command's opcode (its CHECK function in the opcode table).
Expected<void> check_payload(const PayloadChecker& k, const npu_cmd& cmd);

}  // namespace npu::isa::detail
