// Off-policy admission: which rollout groups the learner takes, and when a
// rollout may start a new one. Groups made by a policy more than
// max_staleness versions older than the learner's are not admitted; instead of
// having such work dropped, rollouts ask before starting a group and wait
// while the answer is no (AReaL's rule: a rollout at version v may start the
// n-th group only while n < (v + max_staleness + 1) * groups_per_batch, so
// every group is trained at most max_staleness versions after its version).
// Owned by the learner (trainer and role); not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/learner/rollout_batch.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

class staleness_gate {
 public:
  staleness_gate(std::uint64_t max_staleness, std::uint64_t groups_per_batch);

  // May a rollout holding weights of `rollout_version` start a group now?
  // true counts the group as started; false means wait for newer weights
  // (or for the learner to consume more groups) and ask again.
  bool try_start(std::uint64_t rollout_version);
  // A started group will not arrive (its rollout gave up); frees its place.
  void cancel_start();

  // Whether `group` may be trained on at learner version `version`. unavailable
  // naming the group, its oldest version and the limit when it is too old
  // (the rollout should wait for newer weights and resample that prompt).
  status admit(const rollout_group& group, std::uint64_t version) const;

  // `groups` started groups were trained on (the learner calls this after
  // each step, before its checkpoint).
  void trained(std::uint64_t groups) { trained_ += groups; }
  // The same, naming the groups and the version they went into. Checkpoints
  // keep these ids, so that a group the hub delivers again after a restart
  // (the learner was killed after the checkpoint holding it and before its
  // answer reached the hub) is answered with that version instead of being
  // trained twice. Only the groups of the last remembered_versions versions
  // are kept (about 40 bytes each in state.json): the hub delivers a group
  // again right after the restart, from the versions of the last
  // checkpoint, not a thousand versions later, and a week-long run would
  // otherwise carry every group it ever trained.
  static constexpr std::uint64_t remembered_versions = 1024;
  void trained(const std::vector<std::string>& group_ids, std::uint64_t version);
  // The version a group went into, if it was trained.
  std::optional<std::uint64_t> trained_in(const std::string& group_id) const;
  const std::map<std::string, std::uint64_t>& trained_groups() const { return trained_groups_; }

  std::uint64_t started() const { return started_; }
  std::uint64_t trained() const { return trained_; }
  std::uint64_t max_staleness() const { return max_staleness_; }
  // Checkpoints save the count of groups trained, and a restart counts only
  // those as started: a group started before a crash and not trained comes
  // again (its rollout re-sends or re-starts it), and counting it twice
  // would close the gate for good (a resumed quick-start waited forever).
  // Counting too few only lets rollouts start a little early; admit() still
  // refuses any group that is too stale when it arrives.
  void restore(std::uint64_t trained, std::map<std::string, std::uint64_t> groups = {}) {
    started_ = trained_ = trained;
    trained_groups_ = std::move(groups);
  }

 private:
  std::uint64_t max_staleness_;
  std::uint64_t groups_per_batch_;
  std::uint64_t started_ = 0;
  std::uint64_t trained_ = 0;
  std::map<std::string, std::uint64_t> trained_groups_;  // group id -> version it went into
};

}  // namespace crucible::learner
