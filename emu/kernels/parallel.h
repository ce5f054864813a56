// Both host cores for the matrix engine's arithmetic (issue 9): a large GEMM (convolution or
// matmul of at least kParallelMacs multiply-accumulates) is split by blocks of output rows
// between the calling engine thread and one worker thread shared by every device in the
// process. Each half computes whole blocks exactly as the serial loop would, so results are
// bit-identical to a serial run (int8 and fp32 alike); virtual time is not involved.
//
// Threading: parallel_for2() may be called from any thread. The worker takes one split at a
// time; a caller that finds it busy (the vector engine splitting too, another device) runs
// the whole range itself. The worker runs under the caller's cancel flag (cancel.h), so a
// device reset stops both halves. Lifetime: the worker starts on first use and is joined at
// exit; after that every call runs serially.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace npu::emu::kern {

/// Commands with at least this many MACs are worth a hand-off to the worker (a wake-up costs
/// a few microseconds when the worker is spinning, tens when it parked).
inline constexpr uint64_t kParallelMacs = uint64_t{1} << 21;

/// Calls body(begin, end) on sub-ranges covering [0, n) once each: with `split` (and n >= 2
/// and the worker free) [n/2, n) runs on the worker while the caller runs [0, n/2); returns
/// when both are done. Otherwise body(0, n) on the caller.
void parallel_for2(size_t n, bool split, const std::function<void(size_t, size_t)>& body);

/// Whether the two byte ranges [a, a + an) and [b, b + bn) overlap (an in-place command must
/// not be split: its serial order is part of its meaning).
inline bool ranges_overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
  return a < b + bn && b < a + an;
}

}  // namespace npu::emu::kern
