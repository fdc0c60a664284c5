#include "storage/kv_store.hpp"

namespace crucible::storage {

const char* family_name(family f) {
  switch (f) {
    case family::meta: return "meta";
    case family::jobs: return "jobs";
    case family::candidates: return "candidates";
    case family::exemplars: return "exemplars";
    case family::buckets: return "buckets";
    case family::hacks: return "hacks";
  }
  return "unknown";
}

}  // namespace crucible::storage
