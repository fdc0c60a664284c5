#include "actors/learner/admission.hpp"

#include <algorithm>

namespace crucible::learner {

std::uint64_t rollout_group::oldest_version() const {
  std::uint64_t oldest = policy_version;
  for (const auto& s : samples)
    for (auto v : s.token_versions) oldest = std::min(oldest, v);
  return oldest;
}

staleness_gate::staleness_gate(std::uint64_t max_staleness, std::uint64_t groups_per_batch,
                               clock::duration place_lease)
    : max_staleness_(max_staleness),
      groups_per_batch_(std::max<std::uint64_t>(groups_per_batch, 1)),
      place_lease_(place_lease) {}

bool staleness_gate::try_start(const std::string& rollout, std::uint64_t number, std::uint64_t rollout_version,
                               clock::time_point now) {
  std::erase_if(places_, [&](const auto& p) { return now - p.second.asked > place_lease_; });
  if (auto it = places_.find(rollout); it != places_.end()) {
    if (it->second.number == number) {  // the same start, asked again
      it->second.asked = now;
      return true;
    }
    places_.erase(it);  // its last group is done with, whatever the answer now
  }
  if (held() >= (rollout_version + max_staleness_ + 1) * groups_per_batch_) return false;
  places_[rollout] = {number, now};
  return true;
}

void staleness_gate::arrived(const std::string& rollout, std::uint64_t number) {
  ++waiting_;
  auto place = places_.find(rollout);
  if (place != places_.end() && place->second.number == number) places_.erase(place);
}

void staleness_gate::trained(std::uint64_t groups) {
  trained_ += groups;
  waiting_ -= std::min(waiting_, groups);
}

void staleness_gate::trained(const std::vector<std::string>& group_ids, std::uint64_t version) {
  trained(group_ids.size());
  for (const auto& id : group_ids) trained_groups_[id] = version;
  std::erase_if(trained_groups_, [&](const auto& g) { return g.second + remembered_versions < version; });
}

std::optional<std::uint64_t> staleness_gate::trained_in(const std::string& group_id) const {
  auto it = trained_groups_.find(group_id);
  if (it == trained_groups_.end()) return std::nullopt;
  return it->second;
}

status staleness_gate::admit(const rollout_group& group, std::uint64_t version) const {
  const std::uint64_t oldest = group.oldest_version();
  if (oldest > version) {
    return make_error(errc::invalid_argument, "group " + group.group_id + " claims policy version " +
                                                  std::to_string(oldest) + ", newer than the learner's " +
                                                  std::to_string(version));
  }
  if (version - oldest > max_staleness_) {
    return make_error(errc::unavailable, "group " + group.group_id + " has tokens of version " +
                                             std::to_string(oldest) + ", " + std::to_string(version - oldest) +
                                             " versions behind the learner's " + std::to_string(version) +
                                             " (max_staleness " + std::to_string(max_staleness_) +
                                             "): wait for newer weights and resample it");
  }
  return status::success();
}

}  // namespace crucible::learner
