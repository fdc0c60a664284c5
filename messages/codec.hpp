// Encoding and verified decoding of envelopes (messages/envelope.fbs).
// Every buffer that arrives from outside the process goes through open()
// before any field is read; callers own the bytes and keep them alive while
// they use the returned view. Thread-safe: no shared state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "messages/envelope_generated.h"
#include "runtime/base/result.hpp"

namespace crucible::messages {

namespace msg = crucible::msg;
using bytes = std::vector<std::uint8_t>;

// Largest envelope any endpoint accepts by default (policy chunks included).
inline constexpr std::size_t default_max_message_bytes = 64u << 20;

// Verifies bytes as an Envelope (identifier, bounds, nesting, union) and
// returns a view into them. Errors: errc::corrupt naming what failed.
result<const msg::Envelope*> open(std::span<const std::uint8_t> bytes,
                                  std::size_t max_bytes = default_max_message_bytes);

// The payload's kind name, as used for event topics ("Settlement").
std::string_view kind_name(msg::Payload kind);

// Nanoseconds since the Unix epoch, for Envelope.sent_ns.
std::int64_t now_ns();

// Builds one envelope. Usage:
//   envelope_writer w;
//   auto p = msg::CreateHeartbeat(w.fbb(), 7);
//   bytes b = w.finish(p, "worker-1", "7");
class envelope_writer {
 public:
  explicit envelope_writer(std::size_t initial = 256) : fbb_(initial) {}

  flatbuffers::FlatBufferBuilder& fbb() { return fbb_; }

  template <class T>
  bytes finish(flatbuffers::Offset<T> payload, std::string_view sender, std::string_view id = {}) {
    return finish_raw(msg::PayloadTraits<T>::enum_value, payload.Union(), sender, id);
  }

  bytes finish_raw(msg::Payload kind, flatbuffers::Offset<void> payload, std::string_view sender,
                   std::string_view id);

 private:
  flatbuffers::FlatBufferBuilder fbb_;
};

// Helpers for reading optional strings and vectors without null checks.
inline std::string_view str(const flatbuffers::String* s) {
  return s ? std::string_view(s->data(), s->size()) : std::string_view();
}
inline std::span<const std::uint8_t> span_of(const flatbuffers::Vector<std::uint8_t>* v) {
  return v ? std::span<const std::uint8_t>(v->data(), v->size()) : std::span<const std::uint8_t>();
}

// The elements of a verified vector of scalars (empty when absent), for
// every reader of a vector of 8-byte values ([double], [uint64]). The
// FlatBuffers 2.0.8 verifier checks the alignment of a vector's length only,
// so a hostile buffer passes it with such a vector 4 bytes off its boundary,
// where reading an element is undefined behaviour (fuzz/regressions).
// Errors: errc::corrupt naming `what` for a misaligned vector.
template <class T>
result<std::vector<T>> scalars_of(const flatbuffers::Vector<T>* v, std::string_view what) {
  static_assert(std::is_arithmetic_v<T>);
  if (!v) return std::vector<T>();
  if (reinterpret_cast<std::uintptr_t>(v->data()) % alignof(T) != 0)
    return make_error(errc::corrupt, std::string(what) + ": a vector of " + std::to_string(sizeof(T)) +
                                         "-byte values off its " + std::to_string(alignof(T)) + "-byte boundary");
  return std::vector<T>(v->begin(), v->end());
}

}  // namespace crucible::messages

namespace crucible::messages {
// A one-line text form of an envelope for logs and errors:
// "JobResult id=j-17 from worker-2 (status=Ok, 12 bytes)".
std::string describe(const msg::Envelope& env);
}  // namespace crucible::messages
