// The synchronization checker across jobs (API 1.3, QUERY JOB_RACES): at SUBMIT of a job
// under the checker, every job still pending (queued or running) in another context that
// touches the same bytes of a BO's memory, one of them writing, and that no chain of fences
// orders before the new job, is a race: on a device with several queues the two could run in
// either order or at once. A job that had retired by the time of SUBMIT is ordered by the
// host (it waited, or could have), and jobs of one context run in order.
//
// Footprints: a job under the checker carries every command's bytes (Job::touches, from the
// validator's DRAM accesses); any other job only the BOs it lists with their access
// (Job::bo_uses: the whole BO), which is what the check then uses for it (its command is
// reported as unknown, cmd_index 0xffffffff).
//
// Threading: called under the scheduler lock, on footprints fixed at SUBMIT.
#pragma once

#include <vector>

#include "job.h"

namespace npu::emu::kmd {

/// Most races one job reports (Job::races_total counts them all).
inline constexpr size_t kMaxJobRaces = 256;
/// A command the footprint does not know.
inline constexpr uint32_t kUnknownCmd = 0xffffffffu;

/// Fills job.races / races_total against `pending` (the job itself is not among them; its
/// ctx, id, ancestors and footprints are set).
void find_job_races(Job& job, const std::vector<const Job*>& pending);

}  // namespace npu::emu::kmd
