// Request decoding, the core DRM ioctls (VERSION, GET_CAP), GET_PARAM and QUERY.
#include <string>

#include "abi.h"

namespace npu::abi {
namespace {

TEST(AbiDecode, MalformedRequestsAreRefused) {
  File f;
  drm_npu_get_param g{};
  g.param = DRM_NPU_PARAM_API_VERSION;
  // A size other than the struct's, a direction other than read|write.
  EXPECT_EQ(f.io(_IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NPU_GET_PARAM,
                      sizeof(g) - 8),
                 &g),
            EINVAL);
  EXPECT_EQ(
      f.io(_IOC(_IOC_READ, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NPU_GET_PARAM, sizeof(g)), &g),
      EINVAL);
  // A driver number past the last ioctl.
  EXPECT_EQ(f.io(DRM_IOWR(DRM_COMMAND_BASE + 0x5f, drm_npu_get_param), &g), EINVAL);
}

TEST(AbiDecode, BadArgumentPointersAreEfault) {
  File f;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_GET_PARAM, nullptr), EFAULT);
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_GET_PARAM, reinterpret_cast<void*>(uintptr_t{0x10})), EFAULT);
  // A page the kernel may read but not write back to.
  void* ro = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_GET_PARAM, ro), EFAULT);
  ::munmap(ro, 4096);
}

TEST(AbiCore, VersionNamesTheDriver) {
  File f;
  drm_version v{};
  ASSERT_EQ(f.io(DRM_IOCTL_VERSION, &v), 0);
  EXPECT_EQ(v.version_major, DRM_NPU_API_VERSION_MAJOR);
  std::string name(v.name_len, '\0'), date(v.date_len, '\0'), desc(v.desc_len, '\0');
  v.name = name.data();
  v.date = date.data();
  v.desc = desc.data();
  ASSERT_EQ(f.io(DRM_IOCTL_VERSION, &v), 0);
  EXPECT_EQ(name, DRM_NPU_DRIVER_NAME);
  EXPECT_EQ(uint32_t(v.version_major << 16 | v.version_minor), api_version())
      << "VERSION and GET_PARAM API_VERSION disagree";
  // Wild string pointers are EFAULT.
  drm_version w{};
  w.name_len = 4;
  w.name = reinterpret_cast<char*>(uintptr_t{0x10});
  EXPECT_EQ(f.io(DRM_IOCTL_VERSION, &w), EFAULT);
}

TEST(AbiCore, GetCapAndOtherCoreIoctls) {
  File f;
  drm_get_cap cap{};
  cap.capability = DRM_CAP_TIMESTAMP_MONOTONIC;
  ASSERT_EQ(f.io(DRM_IOCTL_GET_CAP, &cap), 0);
  EXPECT_EQ(cap.value, 1u);
  drm_unique u{};
  EXPECT_EQ(f.io(DRM_IOCTL_GET_UNIQUE, &u), EINVAL);
  drm_gem_close g{};
  EXPECT_EQ(f.io(DRM_IOCTL_GEM_CLOSE, &g), EINVAL);
}

TEST(AbiGetParam, EveryParameterAnswers) {
  File f;
  for (uint32_t p = 0; p < DRM_NPU_PARAM_COUNT; ++p) {
    drm_npu_get_param g{};
    g.param = p;
    EXPECT_EQ(f.io(DRM_IOCTL_NPU_GET_PARAM, &g), 0) << "param " << p;
  }
  EXPECT_EQ(f.param(DRM_NPU_PARAM_API_VERSION) >> 16, uint64_t{DRM_NPU_API_VERSION_MAJOR});
  EXPECT_GT(f.param(DRM_NPU_PARAM_SRAM_SIZE), 0u);
  EXPECT_NE(f.param(DRM_NPU_PARAM_ENGINE_MASK) & (1u << NPU_ENGINE_CP), 0u);
  const uint64_t start = f.param(DRM_NPU_PARAM_VA_START);
  const uint64_t end = f.param(DRM_NPU_PARAM_VA_END);
  const uint64_t align = f.param(DRM_NPU_PARAM_VA_ALIGN);
  EXPECT_NE(start, 0u) << "address 0 must stay unmapped";
  EXPECT_LT(start, end);
  EXPECT_TRUE(align != 0 && (align & (align - 1)) == 0) << align;
  EXPECT_EQ(start % align, 0u);
}

TEST(AbiGetParam, UnknownParameterAndIndexAreEinval) {
  File f;
  drm_npu_get_param g{};
  g.param = DRM_NPU_PARAM_COUNT + 100;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_GET_PARAM, &g), EINVAL);
  g.param = DRM_NPU_PARAM_SRAM_SIZE;
  g.index = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_GET_PARAM, &g), EINVAL);
}

TEST(AbiQuery, SizeIsNegotiated) {
  File f;
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  ASSERT_GE(q.size, offsetof(drm_npu_device_info, name));
  std::vector<std::byte> full(q.size);
  q.data = reinterpret_cast<uintptr_t>(full.data());
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  drm_npu_device_info info{};
  std::memcpy(&info, full.data(), std::min(sizeof(info), full.size()));
  EXPECT_EQ(info.api_version, api_version());
  EXPECT_EQ(info.capabilities, capabilities());
  // A short buffer gets the prefix; nothing is written past it; the full size is reported.
  std::vector<std::byte> part(8 + 4, std::byte{0xee});
  drm_npu_query s{};
  s.type = DRM_NPU_QUERY_DEVICE_INFO;
  s.size = 8;
  s.data = reinterpret_cast<uintptr_t>(part.data());
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &s), 0);
  EXPECT_EQ(s.size, full.size());
  EXPECT_EQ(std::memcmp(part.data(), full.data(), 8), 0);
  EXPECT_EQ(part[8], std::byte{0xee});
}

TEST(AbiQuery, BadQueriesAreRefused) {
  File f;
  drm_npu_device_info info{};
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.size = sizeof(info);
  q.data = reinterpret_cast<uintptr_t>(&info);
  q.flags = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
  q.flags = 0;
  q.pad = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
  q.pad = 0;
  q.type = 0x7777;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.data = 0;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), EFAULT);
  q.data = 0x10;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), EFAULT);
  drm_npu_context_state st{};
  q.type = DRM_NPU_QUERY_CONTEXT_STATE;
  q.size = sizeof(st);
  q.data = reinterpret_cast<uintptr_t>(&st);
  q.arg0 = 999;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &q), ENOENT);
}

}  // namespace
}  // namespace npu::abi
