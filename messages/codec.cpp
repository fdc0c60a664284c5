#include "messages/codec.hpp"

#include <chrono>
#include <string>

namespace crucible::messages {

result<const msg::Envelope*> open(std::span<const std::uint8_t> data, std::size_t max_bytes) {
  if (data.size() > max_bytes)
    return make_error(errc::corrupt, "message of " + std::to_string(data.size()) +
                                         " bytes exceeds the limit of " + std::to_string(max_bytes));
  if (data.size() < 8) return make_error(errc::corrupt, "message of " + std::to_string(data.size()) + " bytes is too short for an envelope");
  if (!msg::EnvelopeBufferHasIdentifier(data.data()))
    return make_error(errc::corrupt, "message does not carry the crucible identifier 'CRCB'");
  // Depth and table limits keep a hostile buffer from costing much.
  flatbuffers::Verifier verifier(data.data(), data.size(), /*max_depth=*/32, /*max_tables=*/1'000'000);
  if (!msg::VerifyEnvelopeBuffer(verifier))
    return make_error(errc::corrupt, "message of " + std::to_string(data.size()) + " bytes failed FlatBuffers verification");
  const msg::Envelope* env = msg::GetEnvelope(data.data());
  if (env->payload_type() == msg::Payload::NONE || env->payload() == nullptr)
    return make_error(errc::corrupt, "envelope carries no payload");
  return env;
}

std::string_view kind_name(msg::Payload kind) {
  const char* name = msg::EnumNamePayload(kind);
  return name && *name ? std::string_view(name) : std::string_view("Unknown");
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bytes envelope_writer::finish_raw(msg::Payload kind, flatbuffers::Offset<void> payload,
                                  std::string_view sender, std::string_view id) {
  auto id_off = id.empty() ? 0 : fbb_.CreateString(id.data(), id.size());
  auto sender_off = fbb_.CreateString(sender.data(), sender.size());
  msg::EnvelopeBuilder env(fbb_);
  env.add_payload_type(kind);
  env.add_payload(payload);
  if (!id.empty()) env.add_id(id_off);
  env.add_sender(sender_off);
  env.add_sent_ns(now_ns());
  auto root = env.Finish();
  msg::FinishEnvelopeBuffer(fbb_, root);
  bytes out(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
  fbb_.Clear();
  return out;
}

}  // namespace crucible::messages
