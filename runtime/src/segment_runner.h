// Segment runner: executes a package's segments in order for one run.
//
// Semantics: a device segment is its command-buffer section (CommandBuffer::from_bytes)
// with the buffers it lists use()d — built, validated and uploaded when the model is loaded
// (prepare_device_segments) and kept in ModelState::cmdbufs — submitted on the model's Context and
// waited for; a fault or a failed wait drops the Context (a banned context is useless), and the
// next segment or run creates a new one. After a device segment, the host copies of its outputs are
// dropped (the device wrote them). A host segment runs npu::ops::run() on the host copies of its
// inputs (read from their locations when needed), checks each output's dtype and shape against the
// package (binding symbolic dims it fixes) and writes outputs that have a location back for
// later device segments. run_segments() records a SegmentStats per executed segment and the
// sums (not wall_ns) in ModelState::stats, also when a segment fails (up to and including it).
//
// Errors name the model and the segment: "m.npub: segment 'conv0': job error: mmu on dma_in
// at command 0 (dma_load), address 0x200000000", "m.npub: segment 'sm' (host Foo): host op
// 'Foo' is not supported".
//
// Threading and lifetime: as RunState.
#pragma once

#include "model_state.h"
#include "npu/expected.h"

namespace npu::runtime {

/// Builds, validates (CommandBuffer::finalize) and uploads every device segment's command
/// buffer and splits its commands for the statistics, so that the first run does none of it:
/// for ResNet-18 (13,626 commands) that was 8-9 ms of a 48 ms first inference. Called by
/// load_package(); errors name the model and the segment.
Expected<void> prepare_device_segments(ModelState& m);

/// Runs every segment of the package in order (see above).
Expected<void> run_segments(RunState& run, const RunOptions& options);

}  // namespace npu::runtime
