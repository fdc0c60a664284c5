#include "actors/policy/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "runtime/base/write_file.hpp"

namespace crucible::policy {
namespace {

using json = nlohmann::json;

struct dtype_name {
  dtype type;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<dtype_name, 10> kDtypes{{
    {dtype::f64, "F64", 8},
    {dtype::f32, "F32", 4},
    {dtype::f16, "F16", 2},
    {dtype::bf16, "BF16", 2},
    {dtype::i64, "I64", 8},
    {dtype::i32, "I32", 4},
    {dtype::i16, "I16", 2},
    {dtype::i8, "I8", 1},
    {dtype::u8, "U8", 1},
    {dtype::boolean, "BOOL", 1},
}};

// Same cap as the Rust safetensors library.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

error corrupt(const std::filesystem::path& path, const std::string& what) {
  return make_error(errc::corrupt, path.string() + ": " + what);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// numel * element size, or nullopt on overflow: of the bytes, or of the
// element count, which tensor_view::numel() (and LibTorch) hold in an int64
// (a shape like [2^62, 2, 0] spans 0 bytes but overflowed numel()).
std::optional<std::uint64_t> byte_count(const std::vector<std::int64_t>& shape, dtype type) {
  constexpr auto max_elements = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t elements = 1;
  for (std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && elements > max_elements / static_cast<std::uint64_t>(d)) return std::nullopt;
    elements *= static_cast<std::uint64_t>(d);
  }
  const std::uint64_t size = dtype_size(type);
  if (elements > std::numeric_limits<std::uint64_t>::max() / size) return std::nullopt;
  return elements * size;
}

}  // namespace

std::string_view to_string(dtype type) {
  for (const auto& d : kDtypes)
    if (d.type == type) return d.name;
  return "?";
}

std::size_t dtype_size(dtype type) {
  for (const auto& d : kDtypes)
    if (d.type == type) return d.size;
  return 0;
}

result<dtype> parse_dtype(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return d.type;
  return make_error(errc::invalid_argument, "unknown dtype \"" + std::string(name) + "\"");
}

std::int64_t tensor_view::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string tensor_view::text() const {
  return name + " " + std::string(to_string(type)) + " " + shape_text(shape);
}

struct safetensors_file::mapping {
  const std::byte* data = nullptr;
  std::size_t size = 0;
  ~mapping() {
    if (data) ::munmap(const_cast<std::byte*>(data), size);
  }
};

result<safetensors_file> safetensors_file::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(errno == ENOENT ? errc::not_found : errc::io,
                      path.string() + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(errc::io, path.string() + ": cannot stat: " + std::strerror(e));
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    return corrupt(path, "truncated file: " + std::to_string(file_size) +
                             " bytes, too short for the 8-byte header length");
  }
  void* addr = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  int map_errno = errno;
  ::close(fd);
  if (addr == MAP_FAILED) return make_error(errc::io, path.string() + ": mmap failed: " + std::strerror(map_errno));
  auto map = std::make_shared<mapping>();
  map->data = static_cast<const std::byte*>(addr);
  map->size = file_size;

  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<std::uint8_t>(map->data[i]);
  if (header_len > kMaxHeaderBytes) {
    return corrupt(path, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                             std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_len > file_size - 8) {
    return corrupt(path, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                             std::to_string(file_size) + " bytes): truncated file?");
  }
  const char* header_begin = reinterpret_cast<const char*>(map->data + 8);
  json header = json::parse(header_begin, header_begin + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return corrupt(path, "header is not valid JSON");
  if (!header.is_object()) return corrupt(path, "header is not a JSON object");

  safetensors_file file;
  file.path_ = path;
  const std::uint64_t data_size = file_size - 8 - header_len;
  const std::byte* data = map->data + 8 + header_len;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;

  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return corrupt(path, "field __metadata__ is not an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) return corrupt(path, "field __metadata__." + k + " is not a string");
        file.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + name + "\"";
    if (!entry.is_object()) return corrupt(path, where + " is not an object");
    auto dt = entry.find("dtype");
    if (dt == entry.end() || !dt->is_string()) return corrupt(path, "field " + name + ".dtype is missing or not a string");
    auto type = parse_dtype(dt->get<std::string>());
    if (!type) return corrupt(path, "field " + name + ".dtype: " + type.error().message);
    auto sh = entry.find("shape");
    if (sh == entry.end() || !sh->is_array()) return corrupt(path, "field " + name + ".shape is missing or not a list");
    tensor_view view;
    view.name = name;
    view.type = *type;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) return corrupt(path, "field " + name + ".shape holds a value that is not a non-negative integer");
      view.shape.push_back(d.get<std::int64_t>());
    }
    auto off = entry.find("data_offsets");
    if (off == entry.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned()) {
      return corrupt(path, "field " + name + ".data_offsets is missing or not two non-negative integers");
    }
    const auto begin = (*off)[0].get<std::uint64_t>();
    const auto end = (*off)[1].get<std::uint64_t>();
    if (begin > end) {
      return corrupt(path, "field " + name + ".data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                               "] ends before it begins");
    }
    if (end > data_size) {
      return corrupt(path, "field " + name + ".data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                               "] out of range: the data section holds " + std::to_string(data_size) + " bytes");
    }
    auto expected = byte_count(view.shape, view.type);
    if (!expected || *expected != end - begin) {
      return corrupt(path, "field " + name + ": shape " + shape_text(view.shape) + " of " +
                               std::string(to_string(view.type)) + " needs " +
                               (expected ? std::to_string(*expected) : std::string("too many")) +
                               " bytes but data_offsets span " + std::to_string(end - begin));
    }
    view.bytes = std::span<const std::byte>(data + begin, end - begin);
    file.tensors_.push_back(std::move(view));
    ranges.emplace_back(begin, end);
  }

  // Like the Rust library: the tensors must tile the data section exactly.
  std::vector<std::size_t> order(file.tensors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranges[a] < ranges[b]; });
  std::uint64_t expected_begin = 0;
  const tensor_view* previous = nullptr;
  for (std::size_t i : order) {
    const auto [begin, end] = ranges[i];
    if (begin < expected_begin) {
      return corrupt(path, "field " + file.tensors_[i].name + ".data_offsets overlap those of " + previous->name);
    }
    if (begin > expected_begin) {
      return corrupt(path, "field " + file.tensors_[i].name + ".data_offsets leave a gap of " +
                               std::to_string(begin - expected_begin) + " bytes before them");
    }
    expected_begin = end;
    previous = &file.tensors_[i];
  }
  if (expected_begin != data_size) {
    return corrupt(path, "the data section holds " + std::to_string(data_size) + " bytes but the tensors cover " +
                             std::to_string(expected_begin));
  }

  std::vector<tensor_view> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(file.tensors_[i]));
  file.tensors_ = std::move(sorted);
  for (std::size_t i = 0; i < file.tensors_.size(); ++i) file.index_.emplace(file.tensors_[i].name, i);
  file.map_ = std::move(map);
  return file;
}

const tensor_view* safetensors_file::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

result<safetensors_layout> plan_safetensors(std::span<const tensor_view> tensors,
                                            const std::map<std::string, std::string>& metadata, std::string_view what) {
  std::vector<std::size_t> order(tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const tensor_view& x = tensors[a];
    const tensor_view& y = tensors[b];
    if (dtype_size(x.type) != dtype_size(y.type)) return dtype_size(x.type) > dtype_size(y.type);
    return x.name < y.name;
  });

  safetensors_layout layout;
  layout.offsets.assign(tensors.size(), 0);
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (std::size_t i : order) {
    const tensor_view& t = tensors[i];
    if (t.name == "__metadata__" || header.contains(t.name)) {
      return make_error(errc::invalid_argument, std::string(what) + ": tensor name \"" + t.name + "\" is used twice or reserved");
    }
    auto bytes = byte_count(t.shape, t.type);
    if (!bytes) return make_error(errc::invalid_argument, std::string(what) + ": tensor " + t.text() + " is too large");
    header[t.name] = {{"dtype", std::string(to_string(t.type))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + *bytes}}};
    layout.offsets[i] = offset;
    offset += *bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  layout.header.resize(8);
  for (int i = 0; i < 8; ++i) layout.header[i] = static_cast<char>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);
  layout.header += text;
  for (auto& o : layout.offsets) o += layout.header.size();
  layout.total_bytes = layout.header.size() + offset;
  return layout;
}

status write_safetensors(const std::filesystem::path& path, std::span<const tensor_view> tensors,
                         const std::map<std::string, std::string>& metadata) {
  for (const auto& t : tensors) {
    auto expected = byte_count(t.shape, t.type);
    if (!expected || *expected != t.bytes.size()) {
      return make_error(errc::invalid_argument, path.string() + ": tensor " + t.text() + " needs " +
                                                    (expected ? std::to_string(*expected) : std::string("too many")) +
                                                    " bytes but was given " + std::to_string(t.bytes.size()));
    }
  }
  auto layout = plan_safetensors(tensors, metadata, path.string());
  if (!layout) return layout.error();
  std::vector<std::size_t> order(tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return layout->offsets[a] < layout->offsets[b]; });

  auto tmp = path;
  tmp += ".tmp";
  std::vector<std::string_view> parts{layout->header};
  for (std::size_t i : order)
    parts.emplace_back(reinterpret_cast<const char*>(tensors[i].bytes.data()), tensors[i].bytes.size());
  if (auto s = write_file(tmp, parts); !s) {
    std::remove(tmp.c_str());
    return s;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return make_error(errc::io, path.string() + ": cannot rename from " + tmp.string() + ": " + ec.message());
  return status::success();
}

}  // namespace crucible::policy
