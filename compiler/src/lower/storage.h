// Private: how the lowering stores a device tensor. A tensor lives densely in a byte range of
// the constants buffer or the activation arena (memory.h), its logical (ONNX) dims in some
// permutation: `perm[j]` is the logical dim stored j-th (channels-last for convolutions and
// pools, identity for most other ops). A permutation change is a TRANSPOSE layer (a relayout
// copy, cached per value and order) or, for Transpose nodes and reshapes of identity-ordered
// tensors, no data movement at all (an alias). The stored element type may be narrower than
// the graph's (float32 values at --precision fp16|bf16); values the runtime reads or writes
// keep their own. The Lowering methods that place, alias and view values are in storage.cpp;
// these are plain value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npu::compiler::detail {

using Perm = std::vector<int>;

/// Identity permutation of rank r.
Perm identity_perm(size_t rank);
/// Channels-last permutation of rank r (3: [0, 2, 1], 4: [0, 2, 3, 1]).
Perm channels_last_perm(size_t rank);

/// A device tensor's storage: a byte range of a buffer holding the logical dims densely in
/// the order `perm`.
struct Storage {
  uint64_t va = 0;
  uint64_t bytes = 0;
  int alloc = -1;  // arena allocation id (-1: constants or not in the arena)
  Perm perm;
  /// NPU_DTYPE_* of the stored elements: the value's own type, or fp16/bf16 for a float32
  /// value the device alone reads and writes when compiling at a half precision (0: a type
  /// the device does not compute on).
  uint8_t dtype = 0;
};

}  // namespace npu::compiler::detail
