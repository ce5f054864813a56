// The .npz reader and writer: a ZIP central-directory walk (PKWARE APPNOTE 4.3: end of central
// directory, its ZIP64 locator and record, central headers with the ZIP64 extra field, local
// headers), inflate of deflated members with zlib, and a plain stored/deflated writer.
#include "npu/format/npz.h"

#include <zlib.h>

#include <cstring>
#include <limits>
#include <optional>

#include "npu/format/crc32.h"
#include "npu/format/file.h"

namespace npu::format {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalSize = 30, kCentralSize = 46, kEndSize = 22, kLocatorSize = 20;
constexpr size_t kZip64EndSize = 56;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kStored = 0, kDeflated = 8;
constexpr uint32_t k32 = 0xffffffffu;
constexpr uint64_t kMaxMember = uint64_t{1} << 40;  // larger than any array we can hold

/// Little-endian fields at an offset of the archive, bounds-checked.
class Bytes {
 public:
  explicit Bytes(std::span<const std::byte> b) : b_(b) {}
  size_t size() const { return b_.size(); }
  bool has(uint64_t at, uint64_t n) const { return at <= b_.size() && n <= b_.size() - at; }
  uint64_t le(uint64_t at, int n) const {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<uint8_t>(b_[at + i]);
    return v;
  }
  uint16_t u16(uint64_t at) const { return static_cast<uint16_t>(le(at, 2)); }
  uint32_t u32(uint64_t at) const { return static_cast<uint32_t>(le(at, 4)); }
  uint64_t u64(uint64_t at) const { return le(at, 8); }
  std::span<const std::byte> span(uint64_t at, uint64_t n) const { return b_.subspan(at, n); }

 private:
  std::span<const std::byte> b_;
};

/// Where the central directory is and how many entries it has.
struct Directory {
  uint64_t offset = 0, size = 0, entries = 0;
};

/// One member as its central header describes it.
struct Member {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, size = 0, local_offset = 0;
};

class NpzReader {
 public:
  NpzReader(std::span<const std::byte> bytes, std::string_view name) : b_(bytes), name_(name) {}

  Expected<std::map<std::string, NpyArray>> read() {
    auto dir = directory();
    if (!dir) return dir.error();
    std::map<std::string, NpyArray> arrays;
    uint64_t at = dir->offset;
    for (uint64_t i = 0; i < dir->entries; ++i) {
      auto m = central(at);
      if (!m) return m.error();
      auto data = member_bytes(*m);
      if (!data) return data.error();
      const std::string where = std::string(name_) + ": member '" + m->name + "'";
      constexpr std::string_view kExt = ".npy";
      if (m->name.size() <= kExt.size() ||
          m->name.compare(m->name.size() - kExt.size(), kExt.size(), kExt) != 0) {
        return make_error(EINVAL, where + ": not a .npy member (an .npz holds NAME.npy files)");
      }
      auto a = parse_npy(*data, where);
      if (!a) return a.error();
      const std::string key = m->name.substr(0, m->name.size() - kExt.size());
      if (!arrays.emplace(key, std::move(*a)).second) {
        return make_error(EINVAL, where + ": key '" + key + "' appears twice");
      }
    }
    return arrays;
  }

 private:
  Error fail(const std::string& what) const {
    return make_error(EINVAL, std::string(name_) + ": " + what);
  }

  Expected<Directory> directory() const {
    if (b_.size() < kEndSize) return fail("not an .npz file (too short for a ZIP archive)");
    // The end record is the last thing in the file but for a comment of up to 64 KiB.
    std::optional<uint64_t> end;
    const uint64_t lowest = b_.size() > kEndSize + 0xffff ? b_.size() - kEndSize - 0xffff : 0;
    for (uint64_t at = b_.size() - kEndSize + 1; at-- > lowest;) {
      if (b_.u32(at) == kEndSig && at + kEndSize + b_.u16(at + 20) == b_.size()) {
        end = at;
        break;
      }
    }
    if (!end) return fail("not an .npz file (no ZIP end of central directory record)");
    Directory d;
    const uint16_t disk = b_.u16(*end + 4), cd_disk = b_.u16(*end + 6);
    d.entries = b_.u16(*end + 10);
    d.size = b_.u32(*end + 12);
    d.offset = b_.u32(*end + 16);
    if (*end >= kLocatorSize && b_.u32(*end - kLocatorSize) == kZip64LocatorSig) {
      const uint64_t at = b_.u64(*end - kLocatorSize + 8);
      if (!b_.has(at, kZip64EndSize) || b_.u32(at) != kZip64EndSig) {
        return fail("ZIP64 end of central directory record is missing or truncated");
      }
      if (b_.u32(at + 16) != 0 || b_.u32(at + 20) != 0)
        return fail("multi-disk archives are not supported");
      d.entries = b_.u64(at + 32);
      d.size = b_.u64(at + 40);
      d.offset = b_.u64(at + 48);
    } else if (disk != 0 || cd_disk != 0 || b_.u16(*end + 8) != d.entries) {
      return fail("multi-disk archives are not supported");
    }
    if (!b_.has(d.offset, d.size)) return fail("central directory lies outside the file");
    if (d.entries > d.size / kCentralSize) return fail("central directory is truncated");
    return d;
  }

  // The central header at `at` (advanced past it) with its ZIP64 extra applied.
  Expected<Member> central(uint64_t& at) const {
    if (!b_.has(at, kCentralSize) || b_.u32(at) != kCentralSig) {
      return fail("central directory entry at offset " + std::to_string(at) + " is damaged");
    }
    Member m;
    m.flags = b_.u16(at + 8);
    m.method = b_.u16(at + 10);
    m.crc = b_.u32(at + 16);
    m.compressed = b_.u32(at + 20);
    m.size = b_.u32(at + 24);
    const uint16_t name_len = b_.u16(at + 28), extra_len = b_.u16(at + 30);
    const uint16_t comment_len = b_.u16(at + 32), disk = b_.u16(at + 34);
    m.local_offset = b_.u32(at + 42);
    if (!b_.has(at + kCentralSize, uint64_t{name_len} + extra_len + comment_len)) {
      return fail("central directory entry at offset " + std::to_string(at) + " is truncated");
    }
    const auto* name = reinterpret_cast<const char*>(b_.span(at + kCentralSize, name_len).data());
    m.name.assign(name, name_len);
    for (char& c : m.name) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // one-line messages
    }
    NPU_TRY(apply_zip64(m, at + kCentralSize + name_len, extra_len, disk));
    at += kCentralSize + name_len + extra_len + comment_len;
    return m;
  }

  // ZIP64 extra field: the 64-bit values of the fields that hold 0xffffffff, in this order.
  Expected<void> apply_zip64(Member& m, uint64_t at, uint16_t len, uint16_t disk) const {
    const uint64_t end = at + len;
    bool need_disk = disk == 0xffff;
    while (at + 4 <= end) {
      const uint16_t id = b_.u16(at), size = b_.u16(at + 2);
      if (at + 4 + size > end) return fail("member '" + m.name + "': extra field is truncated");
      if (id == kZip64ExtraId) {
        uint64_t p = at + 4;
        const uint64_t stop = p + size;
        for (uint64_t* field : {&m.size, &m.compressed, &m.local_offset}) {
          if (*field != k32) continue;
          if (p + 8 > stop) return fail("member '" + m.name + "': ZIP64 extra is truncated");
          *field = b_.u64(p);
          p += 8;
        }
        if (need_disk) {
          if (p + 4 > stop) return fail("member '" + m.name + "': ZIP64 extra is truncated");
          need_disk = b_.u32(p) != 0;
        }
      }
      at += 4 + size;
    }
    if (disk != 0 && (disk != 0xffff || need_disk)) {
      return fail("member '" + m.name + "': multi-disk archives are not supported");
    }
    return ok();
  }

  // The uncompressed, CRC-checked bytes of a member.
  Expected<std::vector<std::byte>> member_bytes(const Member& m) const {
    const std::string where = "member '" + m.name + "'";
    if (m.flags & 0x1) return fail(where + ": encrypted members are not supported");
    if (m.method != kStored && m.method != kDeflated) {
      return fail(where + ": compression method " + std::to_string(m.method) +
                  " is not supported (np.savez stores, np.savez_compressed deflates)");
    }
    if (m.size > kMaxMember || m.compressed > kMaxMember) return fail(where + ": too large");
    const uint64_t at = m.local_offset;
    if (!b_.has(at, kLocalSize) || b_.u32(at) != kLocalSig) {
      return fail(where + ": local header is missing or damaged");
    }
    const uint64_t data = at + kLocalSize + b_.u16(at + 26) + b_.u16(at + 28);
    if (!b_.has(data, m.compressed)) return fail(where + ": data is truncated");
    const auto packed = b_.span(data, m.compressed);
    std::vector<std::byte> out;
    if (m.method == kStored) {
      if (m.compressed != m.size) return fail(where + ": stored member sizes differ");
      out.assign(packed.begin(), packed.end());
    } else {
      auto r = inflate_raw(packed, m.size, where);
      if (!r) return r.error();
      out = std::move(*r);
    }
    if (crc32(out) != m.crc) return fail(where + ": CRC-32 mismatch (the archive is corrupt)");
    return out;
  }

  Expected<std::vector<std::byte>> inflate_raw(std::span<const std::byte> in, uint64_t size,
                                               const std::string& where) const {
    std::vector<std::byte> out(static_cast<size_t>(size));
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return fail(where + ": zlib initialization failed");
    size_t in_pos = 0, out_pos = 0;
    int rc = Z_OK;
    // zlib counts in uInt: feed and drain in chunks so members past 4 GiB work too.
    constexpr size_t kChunk = std::numeric_limits<uInt>::max();
    while (rc == Z_OK) {
      z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + in_pos));
      z.avail_in = static_cast<uInt>(std::min(kChunk, in.size() - in_pos));
      z.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
      z.avail_out = static_cast<uInt>(std::min(kChunk, out.size() - out_pos));
      const uInt had_in = z.avail_in, had_out = z.avail_out;
      rc = inflate(&z, Z_NO_FLUSH);
      in_pos += had_in - z.avail_in;
      out_pos += had_out - z.avail_out;
      if (rc == Z_OK && had_in == z.avail_in && had_out == z.avail_out) rc = Z_BUF_ERROR;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || out_pos != out.size()) {
      return fail(where + ": deflate data is corrupt or does not match the recorded size");
    }
    return out;
  }

  Bytes b_;
  std::string_view name_;
};

void put(std::vector<std::byte>& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

Expected<std::vector<std::byte>> deflate_raw(std::span<const std::byte> in,
                                             const std::string& key) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return make_error(ENOMEM, "npz: '" + key + "': zlib initialization failed");
  }
  if (in.size() > std::numeric_limits<uInt>::max()) {
    deflateEnd(&z);
    return make_error(EFBIG, "npz: '" + key + "': too large to compress");
  }
  std::vector<std::byte> out(deflateBound(&z, static_cast<uLong>(in.size())));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return make_error(EIO, "npz: '" + key + "': deflate failed");
  return out;
}

}  // namespace

Expected<std::map<std::string, NpyArray>> parse_npz(std::span<const std::byte> bytes,
                                                    std::string_view name) {
  return NpzReader(bytes, name).read();
}

Expected<std::map<std::string, NpyArray>> read_npz(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.error();
  return parse_npz(*bytes, path);
}

Expected<std::vector<std::byte>> serialize_npz(const std::map<std::string, NpyArray>& arrays,
                                               bool compress) {
  std::vector<std::byte> out, dir;
  for (const auto& [key, a] : arrays) {
    NPU_TRY(check_npy(a, "npz: '" + key + "'"));
    const std::string name = key + ".npy";
    const std::vector<std::byte> raw = serialize_npy(a);
    std::vector<std::byte> packed;
    if (compress) {
      auto d = deflate_raw(raw, key);
      if (!d) return d.error();
      packed = std::move(*d);
    }
    const std::span<const std::byte> data = compress ? packed : std::span<const std::byte>(raw);
    const uint64_t offset = out.size();
    if (name.size() > 0xffff || raw.size() >= k32 || offset + data.size() + name.size() >= k32) {
      return make_error(EFBIG, "npz: '" + key + "': the archive would exceed 4 GiB");
    }
    const uint32_t crc = crc32(raw);
    const uint16_t method = compress ? kDeflated : kStored;
    auto header = [&](std::vector<std::byte>& h, bool central) {
      put(h, central ? kCentralSig : kLocalSig, 4);
      if (central) put(h, 20, 2);  // version made by
      put(h, 20, 2);               // version needed: 2.0
      put(h, 0, 2);                // flags
      put(h, method, 2);
      put(h, 0, 2);             // time
      put(h, (1 << 5) | 1, 2);  // date: 1980-01-01
      put(h, crc, 4);
      put(h, data.size(), 4);
      put(h, raw.size(), 4);
      put(h, name.size(), 2);
      put(h, 0, 2);  // extra length
      if (central) {
        put(h, 0, 2);  // comment length
        put(h, 0, 2);  // disk
        put(h, 0, 2);  // internal attributes
        put(h, 0, 4);  // external attributes
        put(h, offset, 4);
      }
      for (char c : name) h.push_back(static_cast<std::byte>(c));
    };
    header(out, false);
    out.insert(out.end(), data.begin(), data.end());
    header(dir, true);
  }
  if (arrays.size() > 0xffff || out.size() + dir.size() >= k32) {
    return make_error(EFBIG, "npz: the archive would exceed 4 GiB or 65535 members");
  }
  const uint64_t dir_offset = out.size();
  out.insert(out.end(), dir.begin(), dir.end());
  put(out, kEndSig, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, arrays.size(), 2);
  put(out, arrays.size(), 2);
  put(out, dir.size(), 4);
  put(out, dir_offset, 4);
  put(out, 0, 2);
  return out;
}

Expected<void> write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays,
                         bool compress) {
  auto bytes = serialize_npz(arrays, compress);
  if (!bytes) return make_error(bytes.error().code, path + ": " + bytes.error().message);
  return write_file(path, *bytes);
}

}  // namespace npu::format
