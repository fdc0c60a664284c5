#include "runtime/base/result.hpp"

namespace crucible {

const char* to_string(errc code) {
  switch (code) {
    case errc::invalid_argument: return "invalid argument";
    case errc::not_found: return "not found";
    case errc::io: return "i/o error";
    case errc::corrupt: return "corrupt";
    case errc::unavailable: return "unavailable";
    case errc::timeout: return "timeout";
    case errc::internal: return "internal error";
  }
  return "unknown error";
}

void check_failed(const char* expr, const char* file, int line, const char* what) {
  std::fprintf(stderr, "crucible: invariant broken at %s:%d: %s (%s)\n", file, line, what, expr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace crucible
