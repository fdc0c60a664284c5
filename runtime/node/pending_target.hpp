// A mailbox address that is filled in later: messages sent before the
// target actor exists are kept and delivered, in order, once it is set.
// For a hub client's callbacks (which run on the client's thread) that feed
// an actor spawned after the client, as the rollout does. Thread-safe.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include <caf/all.hpp>

namespace crucible::node {

class pending_target {
 public:
  void send(caf::message m) {
    std::lock_guard lock(mu_);
    if (to_) caf::anon_send(to_, std::move(m));
    else early_.push_back(std::move(m));
  }
  // Sets the target and delivers what waited for it.
  void set(caf::actor to) {
    std::lock_guard lock(mu_);
    to_ = std::move(to);
    for (auto& m : early_) caf::anon_send(to_, std::move(m));
    early_.clear();
  }

 private:
  std::mutex mu_;
  caf::actor to_;                     // GUARDED_BY(mu_)
  std::vector<caf::message> early_;   // GUARDED_BY(mu_)
};

}  // namespace crucible::node
