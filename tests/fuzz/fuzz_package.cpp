// libFuzzer target: the .npub package reader and its validation on any bytes (what
// npu-submit and Model::load do before they touch a device).
#include <cstddef>
#include <cstdint>
#include <span>

#include "npu/format/package.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  auto p = npu::format::parse_package(bytes, "fuzz.npub");
  if (p) (void)npu::format::validate_package(*p, "fuzz.npub");
  return 0;
}
