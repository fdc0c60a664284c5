// Feeds: one frame as the sandbox worker writes it back on its pipe
// (messages/sandbox.fbs, SandboxMessage "CRSB"; the 4-byte length prefix is
// read by sandbox_process::receive), through evaluator::decode_reply, the
// verifier and copy that worker_session runs on every reply, answering
// request 1.
// Checks: no crash or sanitizer report; a reply is only accepted for its
// own request (seq 1) and decodes the same again.
#include <cstdlib>

#include "actors/evaluator/worker_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto reply = crucible::evaluator::decode_reply({data, size}, 1);
  if (!reply) return 0;
  if (crucible::evaluator::decode_reply({data, size}, 2)) std::abort();
  auto again = crucible::evaluator::decode_reply({data, size}, 1);
  if (!again || again->trials.size() != reply->trials.size() || again->error != reply->error) std::abort();
  return 0;
}
