// CRC32C (Castagnoli), the checksum of the hub's job log records. Uses the
// SSE4.2 crc32 instruction when the CPU has it (checked once at run time;
// about 8 bytes per cycle chain) and a table-driven portable version
// otherwise; both give the same values.
//
// Who calls it: any thread; pure functions, no state but a table built once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace crucible::storage {

// Extends crc (the value of a previous call, or 0 to start) over data.
std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t size);
inline std::uint32_t crc32c(std::string_view data) { return crc32c(0, data.data(), data.size()); }

// The portable version alone (tests compare both paths).
std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t size);

// Whether crc32c() uses the hardware instruction on this machine.
bool crc32c_hardware();

}  // namespace crucible::storage
