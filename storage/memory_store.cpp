#include "storage/memory_store.hpp"

#include <vector>

namespace crucible::storage {

status memory_store::write(const write_batch& batch, durability) {
  std::lock_guard lock(mu_);
  if (fail_next_ > 0) {
    --fail_next_;
    ++failed_;
    return make_error(errc::io, "memory store: injected write failure");
  }
  for (const auto& op : batch.ops()) {
    auto& m = data_[static_cast<std::size_t>(op.cf)];
    if (op.value) {
      m.insert_or_assign(op.key, *op.value);
    } else {
      m.erase(op.key);
    }
  }
  ++applied_;
  return status::success();
}

result<std::optional<std::string>> memory_store::get(family cf, std::string_view key) {
  std::lock_guard lock(mu_);
  const auto& m = data_[static_cast<std::size_t>(cf)];
  auto it = m.find(key);
  if (it == m.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

status memory_store::scan(family cf, std::string_view prefix, const visitor& visit) {
  // Copy the range under the lock so that visit may call back into the store.
  std::vector<std::pair<std::string, std::string>> rows;
  {
    std::lock_guard lock(mu_);
    const auto& m = data_[static_cast<std::size_t>(cf)];
    for (auto it = m.lower_bound(prefix); it != m.end(); ++it) {
      if (std::string_view(it->first).substr(0, prefix.size()) != prefix) break;
      rows.emplace_back(it->first, it->second);
    }
  }
  for (const auto& [k, v] : rows) {
    if (!visit(k, v)) break;
  }
  return status::success();
}

void memory_store::fail_next_writes(int n) {
  std::lock_guard lock(mu_);
  fail_next_ = n;
}

int memory_store::failed_writes() const {
  std::lock_guard lock(mu_);
  return failed_;
}

int memory_store::applied_writes() const {
  std::lock_guard lock(mu_);
  return applied_;
}

}  // namespace crucible::storage
