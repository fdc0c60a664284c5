// Several messages to one peer carried as one transport message. Under load
// the hub, a worker and a client each have many small messages for the same
// peer in one turn (a burst of submits, results and acknowledgements);
// sending them as one ZeroMQ message costs one wake-up and one socket
// operation on each side instead of one per message.
//
// Layout: an 8-byte header, a zero word then "CRBT", then per message a
// little-endian u32 length, the bytes, and padding to 8. A zero root offset
// is never a valid FlatBuffer, so a batch cannot be mistaken for an
// envelope. Used by zmq_transport (send_batch() joins, receive() splits);
// what the transport returns is always single messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/bus/transport.hpp"

namespace crucible::bus {

// Whether data starts with the batch header.
bool is_batch(std::span<const std::uint8_t> data);

// The batch frame holding messages, in order.
bytes join_batch(std::span<const std::span<const std::uint8_t>> messages);

// The messages in a batch, in order, or nothing if it is truncated or a
// length runs past its end (the caller hands the frame on whole, for the
// verifier to refuse and count).
std::vector<std::span<const std::uint8_t>> split_batch(std::span<const std::uint8_t> data);

// Limits of one batch: a group longer than this is sent as several. A
// message of batch_alone_bytes or more travels alone: copying it into a
// batch would cost more than the socket operation it saves.
inline constexpr std::size_t batch_max_messages = 256;
inline constexpr std::size_t batch_max_bytes = 1 << 20;
inline constexpr std::size_t batch_alone_bytes = 16 << 10;

}  // namespace crucible::bus
