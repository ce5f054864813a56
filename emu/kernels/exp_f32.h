// The fp32 exponential of the vector engine's EXP and SIGMOID activations, 8 elements per
// AVX-512 instruction (in double precision) and 32 in flight, bit for bit what the scalar
// rule computes (npu/ref/scalar.h: std::exp(float), the C library's expf, and 1 / (1 +
// exp(-x)) in fp32). The vector loop replays glibc's expf (2^(k/32) from a 32-entry table
// times a cubic in double precision, with the FMAs of its FMA build, the variant glibc picks
// on every CPU with AVX-512); lanes whose |x| >= 88 (overflow, underflow, infinities, NaN)
// take the scalar function. Before the first use the loop is compared with std::exp on 4352
// inputs spread over every float exponent and the special thresholds; a C library that
// computes otherwise keeps the scalar rule. So the results never depend on the path, only the
// speed does.
//
// Pure functions; any thread (the one-time check is a function-local static).
#pragma once

#include <cstddef>

namespace npu::emu::kern {

/// Whether the vector loop runs here (AVX-512 selected, cpu_isa.h, and the C library agrees).
bool exp_f32_vectorized();

/// y[i] = std::exp(x[i]) for n floats; neither pointer needs alignment; x == y is allowed.
void exp_f32(const std::byte* x, std::byte* y, size_t n);
/// y[i] = 1.0f / (1.0f + std::exp(-x[i])) (ref::activation's SIGMOID); same conventions.
void sigmoid_f32(const std::byte* x, std::byte* y, size_t n);

}  // namespace npu::emu::kern
