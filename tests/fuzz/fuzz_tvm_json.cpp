// libFuzzer target: the TVM BYOC JSON importer and the compiler on any text: a graph that
// imports is compiled for the default device (docs/tvm.md, docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "npu/compiler/compile.h"
#include "npu/compiler/tvm_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto g = npu::compiler::import_tvm_json_text(text, {}, "fuzz.json");
  if (g) (void)npu::compiler::compile_graph(std::move(*g), {}, "fuzz.json");
  return 0;
}
