// The device self-test: an int8 conv3x3+ReLU -> maxpool -> dequantize -> fp32 fully-connected
// -> softmax pipeline across all four engines, synchronised by semaphores, submitted through
// the mock kernel driver's ioctls and checked against the reference interpreter.
#include "selftest.h"

#include <sys/mman.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "npu/emu/kmd.h"
#include "npu/isa/builder.h"
#include "npu/isa/validate.h"
#include "npu/ref/interp.h"
#include "npu/ref/scalar.h"
#include "npu_accel.h"

namespace npu::selftest {
namespace {

// Shapes of the pipeline.
constexpr uint32_t H = 16, W = 16, C = 16, OC = 32, K = 3, PH = 8, PW = 8, CLASSES = 10;
constexpr uint32_t FEATURES = PH * PW * OC;

// SRAM layout.
constexpr uint32_t S_IN = 0x0000, S_W = 0x1000, S_Q = 0x2400, S_CONV = 0x2800, S_POOL = 0x4800,
                   S_DEQ = 0x5000, S_FCW = 0x7000, S_FCB = 0x1B000, S_LOGITS = 0x1B100,
                   S_PROB = 0x1B200;
// Offsets in the parameter BO.
constexpr uint64_t D_IN = 0x0000, D_W = 0x1000, D_Q = 0x2400, D_FCW = 0x2800, D_FCB = 0x16800,
                   D_PARAMS_SIZE = 0x17000;
// Offsets in the output BO.
constexpr uint64_t O_PROB = 0, O_POOL = 0x100, O_SIZE = 0x1000;

constexpr int32_t IN_ZP = -3, CONV_OUT_ZP = -128;
constexpr float CONV_OUT_SCALE = 0.05f;

Error errno_error(const char* call) {
  return make_error(errno, std::string(call) + ": " + std::strerror(errno));
}

/// One open file of the mock kernel driver, with the mappings it made.
class Session {
 public:
  explicit Session(emu::Kmd& kmd) : kmd_(kmd), fd_(kmd.open()) {}
  ~Session() {
    unmap_all();
    if (fd_ >= 0) kmd_.close(fd_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool is_open() const { return fd_ >= 0; }

  template <typename T>
  Expected<void> ioctl(unsigned long request, T& arg, const char* name) {
    if (kmd_.ioctl(fd_, request, &arg) != 0) return errno_error(name);
    return ok();
  }

  struct Bo {
    uint32_t handle;
    uint64_t va;
    uint64_t size;
    std::byte* map;
  };

  Expected<Bo> create_bo(uint64_t size, uint32_t flags = 0) {
    drm_npu_bo_create c{};
    c.size = size;
    c.flags = flags;
    NPU_TRY(ioctl(DRM_IOCTL_NPU_BO_CREATE, c, "BO_CREATE"));
    drm_npu_bo_info info{};
    info.handle = c.handle;
    NPU_TRY(ioctl(DRM_IOCTL_NPU_BO_INFO, info, "BO_INFO"));
    void* p = kmd_.mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                        static_cast<off_t>(info.mmap_offset));
    if (p == MAP_FAILED) return errno_error("mmap");
    bos_.push_back({c.handle, info.device_addr, info.size, static_cast<std::byte*>(p)});
    return bos_.back();
  }

  /// A size-negotiated QUERY: asks for the size, then reads that many bytes.
  template <typename T>
  Expected<std::vector<std::byte>> query(uint32_t type, uint64_t arg0 = 0, uint64_t arg1 = 0) {
    drm_npu_query q{};
    q.type = type;
    q.arg0 = arg0;
    q.arg1 = arg1;
    NPU_TRY(ioctl(DRM_IOCTL_NPU_QUERY, q, "QUERY"));
    std::vector<std::byte> buf(std::max<size_t>(q.size, sizeof(T)));
    q.data = reinterpret_cast<uint64_t>(buf.data());
    NPU_TRY(ioctl(DRM_IOCTL_NPU_QUERY, q, "QUERY"));
    return buf;
  }

  void unmap_all() {
    for (const Bo& b : bos_) kmd_.munmap(b.map, b.size);
    bos_.clear();
  }

 private:
  emu::Kmd& kmd_;
  int fd_;
  std::vector<Bo> bos_;
};

/// Fills the parameter BO: input, conv weights and per-channel requantization, FC layer.
void fill_params(std::byte* p) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> i8(-128, 127), w8(-64, 63), bias(-600, 600);
  std::uniform_real_distribution<float> wf(-0.05f, 0.05f);
  for (uint32_t i = 0; i < H * W * C; ++i) p[D_IN + i] = std::byte(static_cast<int8_t>(i8(rng)));
  for (uint32_t i = 0; i < OC * K * K * C; ++i)
    p[D_W + i] = std::byte(static_cast<int8_t>(w8(rng)));
  for (uint32_t oc = 0; oc < OC; ++oc) {
    // acc scale = in_scale (0.1) * w_scale (0.002 .. 0.004); requantize to CONV_OUT_SCALE.
    const double scale = 0.1 * (0.002 + 0.00006 * oc) / CONV_OUT_SCALE;
    const auto m = ref::quantize_multiplier(scale);
    npu_chan_qparams q{bias(rng), m.multiplier, m.shift, oc % 4 == 0 ? 1 : 0};
    std::memcpy(p + D_Q + oc * sizeof q, &q, sizeof q);
  }
  for (uint32_t i = 0; i < FEATURES * CLASSES; ++i) {
    float v = wf(rng);
    std::memcpy(p + D_FCW + i * 4, &v, 4);
  }
  for (uint32_t i = 0; i < CLASSES; ++i) {
    float v = 0.1f * static_cast<float>(i) - 0.5f;
    std::memcpy(p + D_FCB + i * 4, &v, 4);
  }
}

/// The whole pipeline as a command buffer.
std::vector<std::byte> build_program(uint64_t params, uint64_t out) {
  using namespace isa;
  CommandBufferBuilder b;
  enum : uint32_t { kConvInputs, kFcInputs, kConvDone, kPoolDone, kPoolReady, kLogits, kProbs };
  // DMA_IN: conv operands, then the FC layer (overlaps the convolution).
  b.dma_load({.dram = params + D_IN, .sram = S_IN, .size = {C, W, H}});
  b.dma_load({.dram = params + D_W, .sram = S_W, .size = {OC * K * K * C, 1, 1}});
  b.dma_load({.dram = params + D_Q, .sram = S_Q, .elem_size = 4, .size = {OC * 4, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, kConvInputs);
  b.dma_load(
      {.dram = params + D_FCW, .sram = S_FCW, .elem_size = 4, .size = {CLASSES, FEATURES, 1}});
  b.dma_load({.dram = params + D_FCB, .sram = S_FCB, .elem_size = 4, .size = {CLASSES, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, kFcInputs);
  // MATRIX: int8 conv 3x3, pad 1, fused ReLU (clamp at the output zero point).
  b.sem_wait(NPU_ENGINE_MATRIX, kConvInputs);
  b.conv2d({.in_addr = S_IN,
            .w_addr = S_W,
            .out_addr = S_CONV,
            .chan_addr = S_Q,
            .in_h = H,
            .in_w = W,
            .in_c = C,
            .out_c = OC,
            .k_h = K,
            .k_w = K,
            .pad_top = 1,
            .pad_left = 1,
            .pad_bottom = 1,
            .pad_right = 1,
            .in_zp = IN_ZP,
            .out_zp = CONV_OUT_ZP,
            .clamp_min = CONV_OUT_ZP});
  b.sem_signal(NPU_ENGINE_MATRIX, kConvDone);
  // VECTOR: 2x2 max pool, dequantize to fp32.
  b.sem_wait(NPU_ENGINE_VECTOR, kConvDone);
  b.pool({.kind = NPU_POOL_MAX,
          .dtype = NPU_DTYPE_INT8,
          .in_addr = S_CONV,
          .out_addr = S_POOL,
          .in_h = H,
          .in_w = W,
          .channels = OC,
          .k_h = 2,
          .k_w = 2,
          .stride_h = 2,
          .stride_w = 2});
  b.sem_signal(NPU_ENGINE_VECTOR, kPoolReady);
  b.dequantize({.in_addr = S_POOL,
                .out_addr = S_DEQ,
                .count = FEATURES,
                .scale = CONV_OUT_SCALE,
                .zp = CONV_OUT_ZP,
                .dtype = NPU_DTYPE_INT8});
  b.sem_signal(NPU_ENGINE_VECTOR, kPoolDone);
  // DMA_OUT: the int8 feature map, for a bit-exact check.
  b.sem_wait(NPU_ENGINE_DMA_OUT, kPoolReady);
  b.dma_store({.dram = out + O_POOL, .sram = S_POOL, .size = {FEATURES, 1, 1}});
  // MATRIX: fully connected fp32 with bias.
  b.sem_wait(NPU_ENGINE_MATRIX, kPoolDone);
  b.sem_wait(NPU_ENGINE_MATRIX, kFcInputs);
  b.matmul({.a_addr = S_DEQ,
            .b_addr = S_FCW,
            .out_addr = S_LOGITS,
            .chan_addr = S_FCB,
            .m = 1,
            .k = FEATURES,
            .n = CLASSES,
            .a_dtype = NPU_DTYPE_FP32,
            .b_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32,
            .bias = true});
  b.sem_signal(NPU_ENGINE_MATRIX, kLogits);
  // VECTOR: softmax; DMA_OUT: probabilities.
  b.sem_wait(NPU_ENGINE_VECTOR, kLogits);
  b.softmax({.in_addr = S_LOGITS, .out_addr = S_PROB, .rows = 1, .len = CLASSES});
  b.sem_signal(NPU_ENGINE_VECTOR, kProbs);
  b.sem_wait(NPU_ENGINE_DMA_OUT, kProbs);
  b.dma_store({.dram = out + O_PROB, .sram = S_PROB, .elem_size = 4, .size = {CLASSES, 1, 1}});
  b.fence(true, 0x5e1f);
  return b.finish();
}

/// Runs the job and the reference; true when every result matched.
Expected<bool> run_checked(const isa::DeviceConfig& cfg, std::ostream& out) {
  emu::Kmd kmd(cfg);
  Session s(kmd);
  if (!s.is_open()) return errno_error("open");

  auto info_bytes = s.query<drm_npu_device_info>(DRM_NPU_QUERY_DEVICE_INFO);
  if (!info_bytes) return info_bytes.error();
  drm_npu_device_info info;
  std::memcpy(&info, info_bytes->data(), sizeof info);
  out << "device   " << info.name << " id 0x" << std::hex << info.device_id << std::dec << " rev "
      << info.revision << ", " << info.sram_size / 1024 << " KiB SRAM in " << info.sram_banks
      << " banks, " << info.clock_hz / 1000000 << " MHz, " << info.num_engines << " engines\n";

  auto params = s.create_bo(D_PARAMS_SIZE, DRM_NPU_BO_DEVICE_READ_ONLY);
  if (!params) return params.error();
  auto result = s.create_bo(O_SIZE);
  if (!result) return result.error();
  fill_params(params->map);
  const std::vector<std::byte> program = build_program(params->va, result->va);
  auto cmd = s.create_bo(program.size(), DRM_NPU_BO_DEVICE_READ_ONLY);
  if (!cmd) return cmd.error();
  std::memcpy(cmd->map, program.data(), program.size());

  drm_npu_ctx_create ctx{};
  ctx.priority = DRM_NPU_PRIORITY_NORMAL;
  NPU_TRY(s.ioctl(DRM_IOCTL_NPU_CTX_CREATE, ctx, "CTX_CREATE"));
  drm_npu_bo_ref refs[] = {{cmd->handle, DRM_NPU_ACCESS_READ},
                           {params->handle, DRM_NPU_ACCESS_READ},
                           {result->handle, DRM_NPU_ACCESS_WRITE}};
  drm_npu_submit sub{};
  sub.ctx_id = ctx.ctx_id;
  sub.cmd_handle = cmd->handle;
  sub.bo_count = 3;
  sub.cmd_size = program.size();
  sub.bos = reinterpret_cast<uint64_t>(refs);
  NPU_TRY(s.ioctl(DRM_IOCTL_NPU_SUBMIT, sub, "SUBMIT"));
  drm_npu_wait w{};
  w.ctx_id = ctx.ctx_id;
  w.seqno = sub.seqno;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  w.timeout_ns = now.tv_sec * 1000000000ll + now.tv_nsec + 10 * 1000000000ll;
  NPU_TRY(s.ioctl(DRM_IOCTL_NPU_WAIT, w, "WAIT"));
  if (w.status != DRM_NPU_JOB_OK) {
    out << "FAIL job status " << w.status << " fault kind " << w.fault.kind << " engine "
        << w.fault.engine << " command " << w.fault.cmd_index << "\n";
    return false;
  }

  // The same program on the reference interpreter.
  auto validated = isa::validate(program, cfg);
  if (!validated) return make_error(EINVAL, "validate: " + validated.error().message);
  std::vector<std::byte> ref_params(params->map, params->map + params->size);
  std::vector<std::byte> ref_out(result->size), ref_sram(cfg.sram_size);
  ref::FlatDram dram;
  if (!dram.map(params->va, ref_params) || !dram.map(result->va, ref_out))
    return make_error(EINVAL, "reference dram map failed");
  if (auto r = ref::run_program(*validated, ref_sram, dram); !r)
    return make_error(EINVAL, "reference: " + r.error().message);

  const bool pool_exact = std::memcmp(result->map + O_POOL, ref_out.data() + O_POOL, FEATURES) == 0;
  float dev_p[CLASSES], ref_p[CLASSES];
  std::memcpy(dev_p, result->map + O_PROB, sizeof dev_p);
  std::memcpy(ref_p, ref_out.data() + O_PROB, sizeof ref_p);
  float max_diff = 0, sum = 0;
  uint32_t best = 0;
  for (uint32_t i = 0; i < CLASSES; ++i) {
    max_diff = std::max(max_diff, std::fabs(dev_p[i] - ref_p[i]));
    sum += dev_p[i];
    if (dev_p[i] > dev_p[best]) best = i;
  }
  const bool probs_ok = max_diff <= 1e-5f && std::fabs(sum - 1.0f) < 1e-4f;

  out << "\njob      int8 conv3x3(16x16x16 -> 32) + relu -> maxpool 2x2 -> dequantize -> "
         "fc(2048 -> 10, fp32) -> softmax\n";
  out << "result   class " << best << " p=" << std::fixed << std::setprecision(4) << dev_p[best]
      << "  probabilities:";
  for (float v : dev_p) out << " " << std::setprecision(4) << v;
  out << "\ncheck    int8 feature map vs reference: " << (pool_exact ? "bit-exact" : "MISMATCH")
      << "; probabilities max |diff| " << std::scientific << std::setprecision(2) << max_diff
      << (probs_ok ? " (ok)" : " (FAIL)") << std::defaultfloat << "\n";

  auto prof_bytes = s.query<drm_npu_job_profile>(DRM_NPU_QUERY_JOB_PROFILE, ctx.ctx_id, sub.seqno);
  if (!prof_bytes) return prof_bytes.error();
  drm_npu_job_profile prof;
  std::memcpy(&prof, prof_bytes->data(), sizeof prof);
  const double us = static_cast<double>(prof.cycles) * 1e6 / static_cast<double>(cfg.clock_hz);
  out << "\ncycles   " << prof.cycles << " (" << std::fixed << std::setprecision(2) << us
      << " us at " << cfg.clock_hz / 1000000 << " MHz), host wall " << std::setprecision(1)
      << static_cast<double>(w.end_ns - w.start_ns) / 1000.0 << " us\n";
  out << "engines  ";
  for (uint32_t e = 0; e < NPU_NUM_ENGINES; ++e)
    out << isa::engine_name(static_cast<uint8_t>(e)) << " " << std::setprecision(1)
        << 100.0 * static_cast<double>(prof.busy_cycles[e]) / static_cast<double>(prof.cycles)
        << "%  ";
  out << "\nwork     " << prof.macs << " MACs, " << prof.dma_bytes_in << " B in, "
      << prof.dma_bytes_out << " B out, " << prof.vector_elements << " vector elements, "
      << prof.semaphore_stall_cycles << " stall cycles\n";
  out << "\ntimeline (cycles)\n";
  const auto* entries =
      reinterpret_cast<const drm_npu_cmd_profile*>(prof_bytes->data() + sizeof prof);
  for (uint32_t i = 0; i < prof.num_cmds; ++i) {
    drm_npu_cmd_profile e;
    std::memcpy(&e, entries + i, sizeof e);
    out << "  #" << std::setw(2) << e.cmd_index << " " << std::left << std::setw(8)
        << isa::engine_name(static_cast<uint8_t>(e.engine)) << std::setw(11)
        << isa::opcode_name(static_cast<uint8_t>(e.opcode)) << std::right << std::setw(8)
        << e.start_cycle << " .. " << std::setw(8) << e.end_cycle << "\n";
  }

  auto counter_bytes = s.query<drm_npu_counters>(DRM_NPU_QUERY_COUNTERS);
  if (!counter_bytes) return counter_bytes.error();
  drm_npu_counters ctr;
  std::memcpy(&ctr, counter_bytes->data(), sizeof ctr);
  out << "\ncounters jobs " << ctr.jobs_completed << ", faulted " << ctr.jobs_faulted << ", resets "
      << ctr.device_resets << ", total cycles " << ctr.total_cycles << ", MACs " << ctr.macs
      << "\n";

  const bool pass = pool_exact && probs_ok;
  out << "\n" << (pass ? "PASS" : "FAIL") << "\n";
  return pass;
}

}  // namespace

int run(const isa::DeviceConfig& cfg, std::ostream& out) {
  auto passed = run_checked(cfg, out);
  if (!passed) {
    out.flush();
    std::fprintf(stderr, "npu-selftest: %s\n", passed.error().message.c_str());
    return 1;
  }
  return *passed ? 0 : 1;
}

}  // namespace npu::selftest
