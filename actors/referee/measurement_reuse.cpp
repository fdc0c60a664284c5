#include "actors/referee/measurement_reuse.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace crucible::referee {

bool reusable(msg::EvalStatus status) {
  switch (status) {
    case msg::EvalStatus::Ok:
    case msg::EvalStatus::Incorrect:
    case msg::EvalStatus::CompileError:
    case msg::EvalStatus::Hack: return true;
    default: return false;
  }
}

std::string code_key(std::string_view task_id, std::string_view code) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : code) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("m/{}/{:016x}", task_id, h);
}

}  // namespace crucible::referee
