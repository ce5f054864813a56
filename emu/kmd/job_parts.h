// A job run in parts: the kernel driver stops a job at a safe point (ISA 1.2) when another
// should have the device, and later runs the rest from the next command (Device::run with
// JobOptions::begin). Each part's profile starts at cycle 0 and covers its own commands; these
// functions put the parts together into the one profile the job reports (WAIT's cycles, QUERY
// JOB_PROFILE, the counters): each part shifted to start where the job's profile ends, with
// each switch between two parts as a DRM_NPU_PROFILE_PREEMPT entry costing the configured
// cycles. Because the device is drained at a safe point, the result is the profile of an
// uninterrupted run with the switches inserted.
//
// Pure functions on values; the scheduler calls them under its lock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "npu/emu/device.h"

namespace npu::emu::kmd {

/// Adds the per-engine and data statistics of `p` (busy cycles, commands, DMA bytes, MACs,
/// vector elements, semaphore stalls) to `to`: a job's profile or the device's counters
/// (drm_npu_counters), which name them alike.
template <typename Totals>
void add_statistics(Totals& to, const JobProfile& p) {
  for (size_t e = 0; e < p.busy_cycles.size(); ++e) {
    to.busy_cycles[e] += p.busy_cycles[e];
    to.commands[e] += p.commands[e];
  }
  to.dma_bytes_in += p.dma_bytes_in;
  to.dma_bytes_out += p.dma_bytes_out;
  to.macs += p.macs;
  to.vector_elements += p.vector_elements;
  to.semaphore_stall_cycles += p.semaphore_stall_cycles;
}

/// Appends `part` to `job`: its timeline and cycles shifted by job.cycles, its statistics,
/// interrupts and hazards added (hazards up to DRM_NPU_MAX_HAZARDS).
void add_part(JobProfile& job, JobProfile&& part);

/// Appends a switch at safe point `safe_point` costing `cycles` to `job`.
void add_switch(JobProfile& job, uint32_t safe_point, uint64_t cycles);

}  // namespace npu::emu::kmd
