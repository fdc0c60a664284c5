// error_text: a result's or status's error text, or "" on success, for
// messages built whether or not the call failed: a test's REQUIRE_MESSAGE,
// whose message doctest also renders on success under -s, where error()
// itself (only for a failure) would throw.
#pragma once

#include <string>

namespace crucible {

template <class R>
std::string error_text(const R& r) {
  return r.ok() ? std::string() : r.error().text();
}

}  // namespace crucible
