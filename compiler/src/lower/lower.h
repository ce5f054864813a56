// Private: lowering of a partitioned Graph to a model package (the last step of
// compile_graph, compile.cpp). The files of compiler/src/lower/, by concern:
//   lower.cpp              the entry: plan, walk the segments in order, write the package
//   lowering.h             the state shared while one package is lowered (class Lowering)
//   memory.h/.cpp          the constants buffer and the activation arena
//   liveness.h/.cpp        execution order and last uses: when a value's bytes are freed
//   storage.h/.cpp         storage orders of device tensors, aliases, views and relayouts
//   segments.h             device_segment.cpp (command buffers, layer reports) and
//                          host_segment.cpp (host ops, fused bias/activation steps)
//   package_builder.h/.cpp tensor table, locations, constant outputs, buffers, metadata
//   lower_ops.h/.cpp       the per-op entries (one signature) and the node dispatch;
//                          lower_conv/matmul/vector/move.cpp implement the op families
// Everything runs on the calling thread; nothing outlives the lower() call.
#pragma once

#include <string>
#include <variant>

#include "npu/compiler/graph.h"
#include "npu/compiler/support.h"
#include "npu/expected.h"
#include "npu/format/package.h"
#include "npu/isa/device_config.h"

namespace npu::compiler::detail {

struct LowerOptions {
  isa::DeviceConfig cfg;
  /// 0: every tensor in its graph type. NPU_DTYPE_FP16/BF16: float32 tensors only the device
  /// reads and writes (and matrix weights) are stored in that type, convolutions and matrix
  /// products run on the half-precision array, vector ops compute in fp32 (DMA converts).
  uint8_t precision = 0;
  std::string model_name, source, producer;
};

/// A lowering failure; `node` is the index of the node that could not be lowered (-1: not
/// specific to one node), so the driver can move it to the host and try again.
struct LowerError {
  Error error;
  int node = -1;
};

/// Lowers every segment of `p` and builds the package.
std::variant<format::Package, LowerError> lower(const Graph& g, const Partition& p,
                                                const LowerOptions& o);

}  // namespace npu::compiler::detail
