// libFuzzer target: the ONNX importer and the compiler on any bytes: a model that imports is
// compiled for the default device (docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "npu/compiler/compile.h"
#include "npu/compiler/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto g = npu::compiler::import_onnx_bytes(bytes, {}, "fuzz.onnx");
  if (g) (void)npu::compiler::compile_graph(std::move(*g), {}, "fuzz.onnx");
  return 0;
}
