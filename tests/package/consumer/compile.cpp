// Links npu::npuc from the installed package: a malformed model gives a one-line error, and a
// real model from Debian's libonnx-testdata imports.
#include <cstdio>
#include <string>

#include "npu/compiler/onnx_import.h"

int main(int argc, char** argv) {
  auto bad = npu::compiler::import_onnx_bytes("not a model", {}, "garbage.onnx");
  if (bad) {
    std::fprintf(stderr, "consumer_compile: garbage imported\n");
    return 1;
  }
  const std::string path =
      argc > 1 ? argv[1] : "/usr/include/onnx/backend/test/data/node/test_relu/model.onnx";
  auto graph = npu::compiler::import_onnx(path);
  if (!graph) {
    std::fprintf(stderr, "consumer_compile: %s\n", graph.error().message.c_str());
    return 1;
  }
  std::printf("consumer_compile: imported %s (%zu nodes)\n", path.c_str(), graph->nodes.size());
  return 0;
}
