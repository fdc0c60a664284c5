// Feeds: what a rollout fetches from the learner when new weights are out
// (actors/learner/publication.hpp), as rollout_actor.cpp's on_latest and
// on_chunk take it: part 0 (fuzz_support.hpp, split_parts) a
// PolicyPublication envelope, read by publication_from into a
// weight_assembler, and the parts after it PolicyChunk envelopes added to it
// in that order, finish() once it says it is complete.
// Checks: no crash, out-of-memory or sanitizer report; what finish() hands
// over is the announced size. The assembler allocates the announced size
// once a chunk agrees with it (by design: weights are held whole, up to the
// machine's memory), so announcements of several chunks above 64 MiB are
// not fed: one 1-byte chunk of a 4 GiB announcement in 2^32 chunks is a
// consistent start that the memory limit would report.
#include <cstdlib>

#include "actors/learner/publication.hpp"
#include "fuzz/fuzz_support.hpp"

using namespace crucible;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = fuzz::split_parts({data, size});
  if (parts.empty()) return 0;
  auto env = messages::open(parts[0]);
  auto* wire = env ? (*env)->payload_as_PolicyPublication() : nullptr;
  if (!wire) return 0;
  auto p = learner::publication_from(*wire);
  (void)p.text();
  if (!p.path.empty()) return 0;  // a shared folder: nothing to assemble
  if (p.chunks > 1 && p.total_bytes > (64u << 20)) return 0;
  learner::weight_assembler incoming(p);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto cenv = messages::open(parts[i]);
    auto* c = cenv ? (*cenv)->payload_as_PolicyChunk() : nullptr;
    if (!c) return 0;
    if (!incoming.add(c->index(), messages::span_of(c->data())) || c->version() != p.version) return 0;
    if (!incoming.complete()) continue;
    auto weights = incoming.finish();
    if (weights && weights->size() != p.total_bytes) std::abort();
    return 0;
  }
  return 0;
}
