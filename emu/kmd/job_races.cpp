// The cross-job synchronization checker (job_races.h): per shared memory, the first
// overlapping pair of the earlier job's writes with the new job's reads (RAW), reads with
// writes (WAR) and writes with writes (WAW), found by sorting both sides' ranges.
#include "job_races.h"

#include <algorithm>
#include <map>

#include "context.h"

namespace npu::emu::kmd {
namespace {

struct Range {
  uint64_t begin;
  uint64_t end;
  drm_npu_hazard_cmd cmd;
};

struct Side {
  std::vector<Range> reads, writes;
};

// Per memory id, the ranges one job reads and writes: its touches, or its listed BOs whole.
std::map<uint64_t, Side> footprint(const Job& job) {
  std::map<uint64_t, Side> out;
  if (!job.touches.empty()) {
    for (const Job::Touch& t : job.touches) {
      Side& s = out[t.mem_id];
      if (t.access & DRM_NPU_ACCESS_READ) s.reads.push_back({t.begin, t.end, t.cmd});
      if (t.access & DRM_NPU_ACCESS_WRITE) s.writes.push_back({t.begin, t.end, t.cmd});
    }
  } else {
    const drm_npu_hazard_cmd unknown{kUnknownCmd, 0, 0};
    for (const Job::BoUse& u : job.bo_uses) {
      Side& s = out[u.mem_id];
      if (u.access & DRM_NPU_ACCESS_READ) s.reads.push_back({0, u.size, unknown});
      if (u.access & DRM_NPU_ACCESS_WRITE) s.writes.push_back({0, u.size, unknown});
    }
  }
  for (auto& [id, s] : out) {
    auto by_begin = [](const Range& a, const Range& b) { return a.begin < b.begin; };
    std::sort(s.reads.begin(), s.reads.end(), by_begin);
    std::sort(s.writes.begin(), s.writes.end(), by_begin);
  }
  return out;
}

// The pair of ranges of `a` and `b` (each sorted by begin) whose overlap starts lowest, if
// any overlap. For a range x of a: a range of b beginning at or before x overlaps it iff the
// largest end among those passes x.begin (then the overlap starts at x.begin); else the first
// range of b beginning inside x does. O((|a| + |b|) log |b|).
bool first_overlap(const std::vector<Range>& a, const std::vector<Range>& b, Range& ra, Range& rb) {
  if (a.empty() || b.empty()) return false;
  std::vector<size_t> max_end_at(b.size());  // index of the largest end in b[0..i]
  for (size_t i = 0; i < b.size(); ++i) {
    max_end_at[i] = i == 0 || b[i].end > b[max_end_at[i - 1]].end ? i : max_end_at[i - 1];
  }
  bool found = false;
  uint64_t best = UINT64_MAX;
  for (const Range& x : a) {
    const auto after = std::upper_bound(b.begin(), b.end(), x.begin,
                                        [](uint64_t v, const Range& r) { return v < r.begin; });
    const size_t j1 = static_cast<size_t>(after - b.begin());
    if (j1 > 0 && b[max_end_at[j1 - 1]].end > x.begin) {
      if (x.begin < best) {
        best = x.begin;
        ra = x;
        rb = b[max_end_at[j1 - 1]];
        found = true;
      }
    } else if (j1 < b.size() && b[j1].begin < x.end && b[j1].begin < best) {
      best = b[j1].begin;
      ra = x;
      rb = b[j1];
      found = true;
    }
  }
  return found;
}

}  // namespace

void find_job_races(Job& job, const std::vector<const Job*>& pending) {
  const std::map<uint64_t, Side> mine = footprint(job);
  for (const Job* other : pending) {
    if (other->ctx == job.ctx) continue;  // one context's jobs run in order
    if (std::binary_search(job.ancestors.begin(), job.ancestors.end(), other->id)) continue;
    const std::map<uint64_t, Side> theirs = footprint(*other);
    for (const auto& [mem, b] : mine) {
      const auto it = theirs.find(mem);
      if (it == theirs.end()) continue;
      const Side& a = it->second;
      struct Pair {
        uint32_t kind;
        const std::vector<Range>* earlier;
        const std::vector<Range>* later;
      };
      const Pair pairs[] = {{DRM_NPU_HAZARD_RAW, &a.writes, &b.reads},
                            {DRM_NPU_HAZARD_WAR, &a.reads, &b.writes},
                            {DRM_NPU_HAZARD_WAW, &a.writes, &b.writes}};
      for (const Pair& p : pairs) {
        Range ra{}, rb{};
        if (!first_overlap(*p.earlier, *p.later, ra, rb)) continue;
        ++job.races_total;
        if (job.races.size() >= kMaxJobRaces) continue;
        drm_npu_job_race r{};
        r.kind = p.kind;
        const bool same_file = other->ctx->owner() == job.ctx->owner();
        r.flags = same_file ? 0u : DRM_NPU_RACE_OTHER_FILE;
        r.other_ctx = same_file ? other->ctx->id() : 0;
        r.other_seqno = same_file ? other->seqno : 0;
        for (const Job::BoUse& u : job.bo_uses) {
          if (u.mem_id == mem) r.bo_handle = u.handle;
        }
        r.begin = std::max(ra.begin, rb.begin);
        r.end = std::min(ra.end, rb.end);
        r.first = ra.cmd;
        r.second = rb.cmd;
        job.races.push_back(r);
      }
    }
  }
}

}  // namespace npu::emu::kmd
