// Numbered append-only files ("segments") for a log of one's own, such as
// the hub's job log (runtime/hub/job_ledger.hpp). Implementations:
// file_segments (one directory, real files) and memory_segments (a test seam
// with fault injection).
//
// Who calls it: one owner on one thread (the hub actor); not thread-safe.
// Errors come back as values (errc::io, errc::not_found).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::storage {

class segment_store {
 public:
  virtual ~segment_store() = default;

  // The segments that exist, in ascending order.
  virtual result<std::vector<std::uint64_t>> list() = 0;
  // A whole segment, or size bytes of it from offset.
  virtual result<std::string> read(std::uint64_t segment) = 0;
  virtual result<std::string> read(std::uint64_t segment, std::uint64_t offset, std::uint64_t size) = 0;
  // Appends bytes to the segment, creating it when missing. When it returns
  // ok the bytes are in the kernel (they survive a kill -9 of the process).
  // On errc::io (a full disk: the message names the file and says "No space
  // left on device") the segment holds what it held before, and appending
  // to it again is fine. On errc::corrupt part of the bytes stayed in it (a
  // torn record that could not be cut off): never append to it again.
  virtual status append(std::uint64_t segment, std::string_view bytes) = 0;
  // Makes every append to the segment (and its creation) survive a power loss.
  virtual status sync(std::uint64_t segment) = 0;
  virtual status remove(std::uint64_t segment) = 0;
  // "segments:/path" or "memory segments", for logs.
  virtual std::string describe() const = 0;
};

// Segments as files DIR/NNNNNNNNNNNNNNNNNNNN.log (the number in 20 digits).
// Creates dir when missing. Errors: errc::io naming the path.
result<std::unique_ptr<segment_store>> open_file_segments(const std::string& dir);

// Segments in memory: nothing survives the object, which is what a test of
// a restart wants (keep the object, drop its user).
class memory_segments final : public segment_store {
 public:
  result<std::vector<std::uint64_t>> list() override;
  result<std::string> read(std::uint64_t segment) override;
  result<std::string> read(std::uint64_t segment, std::uint64_t offset, std::uint64_t size) override;
  status append(std::uint64_t segment, std::string_view bytes) override;
  status sync(std::uint64_t) override { return {}; }
  status remove(std::uint64_t segment) override;
  std::string describe() const override { return "memory segments"; }

  // Fault injection: the next n appends fail with errc::corrupt after
  // writing half their bytes (a torn record that could not be cut off).
  void fail_next_appends(int n) { fail_next_ = n; }
  // Total bytes held, and bytes ever appended, for tests of space reclamation.
  std::size_t bytes() const;
  std::size_t appended() const { return appended_; }

 private:
  std::map<std::uint64_t, std::string> segments_;
  int fail_next_ = 0;
  std::size_t appended_ = 0;
};

}  // namespace crucible::storage
