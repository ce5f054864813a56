// RaceChecker: the engines' logs and the deterministic pass over them (racecheck.h).
#include "racecheck.h"

#include <algorithm>
#include <tuple>

namespace npu::emu {

void EngineLog::record(uint32_t index, uint8_t opcode, uint32_t position, const VectorClock& clock,
                       const std::vector<isa::Region>& regions) {
  entries_.push_back(Entry{index, position, clock, static_cast<uint32_t>(regions_.size()),
                           static_cast<uint16_t>(regions.size()), opcode});
  regions_.insert(regions_.end(), regions.begin(), regions.end());
}

/// Collects hazards: counts all, keeps the DRM_NPU_MAX_HAZARDS smallest in report order
/// (a max-heap on that order, so memory stays bounded however racy the buffer).
class HazardSink {
 public:
  void add(const drm_npu_hazard& h) {
    ++total_;
    if (heap_.size() < DRM_NPU_MAX_HAZARDS) {
      heap_.push_back(h);
      std::push_heap(heap_.begin(), heap_.end(), before);
    } else if (before(h, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), before);
      heap_.back() = h;
      std::push_heap(heap_.begin(), heap_.end(), before);
    }
  }

  RaceReport finish(bool partial) {
    std::sort_heap(heap_.begin(), heap_.end(), before);
    RaceReport r;
    r.checked = true;
    r.partial = partial;
    r.total = total_;
    r.hazards = std::move(heap_);
    return r;
  }

  static bool before(const drm_npu_hazard& a, const drm_npu_hazard& b) {
    return std::tie(a.first.cmd_index, a.second.cmd_index, a.kind, a.space) <
           std::tie(b.first.cmd_index, b.second.cmd_index, b.kind, b.space);
  }

 private:
  std::vector<drm_npu_hazard> heap_;
  uint64_t total_ = 0;
};

namespace {

/// The overlap of one (kind, space) between two commands: the hull of every overlapping
/// operand pair.
struct Hull {
  uint64_t begin = UINT64_MAX, end = 0;
  void add(uint64_t b, uint64_t e) {
    begin = std::min(begin, b);
    end = std::max(end, e);
  }
  bool empty() const { return begin >= end; }
};

constexpr uint32_t kKinds[] = {DRM_NPU_HAZARD_RAW, DRM_NPU_HAZARD_WAR, DRM_NPU_HAZARD_WAW};

}  // namespace

void RaceChecker::begin(size_t num_cmds) {
  for (EngineLog& l : logs_) l.clear();
  signal_clocks_.assign(num_cmds, VectorClock{});
}

/// Every unordered pair of a command on engine `a` and one on engine `b`. For q on b, the
/// commands p on a that q does not know of are those from position clock(q)[a] on; those that
/// do not know of q are the prefix with clock(p)[b] <= position(q). Both bounds only move
/// forward as q does.
void RaceChecker::check_engines(uint32_t a, uint32_t b, HazardSink& sink) const {
  using Entry = EngineLog::Entry;
  const EngineLog& la = logs_[a];
  const EngineLog& lb = logs_[b];
  const auto& as = la.entries_;
  size_t lo = 0, hi = 0;
  for (const Entry& q : lb.entries_) {
    while (lo < as.size() && as[lo].position < q.clock[a]) ++lo;
    while (hi < as.size() && as[hi].clock[b] <= q.position) ++hi;
    for (size_t i = lo; i < hi; ++i) {
      const Entry& p = as[i];
      // Name the pair in buffer order: the hazard kind reads from the earlier command.
      const bool p_first = p.index < q.index;
      const Entry& f = p_first ? p : q;
      const Entry& s = p_first ? q : p;
      const isa::Region* fr = (p_first ? la : lb).regions_.data() + f.first_region;
      const isa::Region* sr = (p_first ? lb : la).regions_.data() + s.first_region;
      Hull hull[3][2];  // [kind][space]
      for (uint16_t x = 0; x < f.num_regions; ++x) {
        for (uint16_t y = 0; y < s.num_regions; ++y) {
          const isa::Region& r1 = fr[x];
          const isa::Region& r2 = sr[y];
          if (r1.space != r2.space) continue;
          const uint64_t lo_b = std::max(r1.begin, r2.begin), hi_e = std::min(r1.end, r2.end);
          if (lo_b >= hi_e) continue;
          const bool w1 = r1.access & isa::kWrite, w2 = r2.access & isa::kWrite;
          const bool rd1 = r1.access & isa::kRead, rd2 = r2.access & isa::kRead;
          const int sp = r1.space == isa::Space::Sram ? 0 : 1;
          if (w1 && rd2) hull[0][sp].add(lo_b, hi_e);
          if (rd1 && w2) hull[1][sp].add(lo_b, hi_e);
          if (w1 && w2) hull[2][sp].add(lo_b, hi_e);
        }
      }
      for (int k = 0; k < 3; ++k) {
        for (int sp = 0; sp < 2; ++sp) {
          if (hull[k][sp].empty()) continue;
          drm_npu_hazard h{};
          h.kind = kKinds[k];
          h.space = sp == 0 ? DRM_NPU_HAZARD_SPACE_SRAM : DRM_NPU_HAZARD_SPACE_DRAM;
          h.begin = hull[k][sp].begin;
          h.end = hull[k][sp].end;
          h.first = {f.index, static_cast<uint16_t>(p_first ? a : b), f.opcode};
          h.second = {s.index, static_cast<uint16_t>(p_first ? b : a), s.opcode};
          sink.add(h);
        }
      }
    }
  }
}

RaceReport RaceChecker::find_hazards(bool partial) const {
  HazardSink sink;
  for (uint32_t a = 1; a < NPU_NUM_ENGINES; ++a) {
    for (uint32_t b = a + 1; b < NPU_NUM_ENGINES; ++b) check_engines(a, b, sink);
  }
  return sink.finish(partial);
}

}  // namespace npu::emu
