// libFuzzer target: the .npy reader on any bytes. An array it accepts must pass check_npy and
// survive a write and a re-read unchanged (docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "npu/format/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  auto a = npu::format::parse_npy(bytes, "fuzz.npy");
  if (!a) return 0;
  if (!npu::format::check_npy(*a, "fuzz.npy")) std::abort();
  const auto again = npu::format::parse_npy(npu::format::serialize_npy(*a), "again.npy");
  if (!again || again->shape != a->shape || again->dtype != a->dtype || again->data != a->data) {
    std::abort();
  }
  return 0;
}
