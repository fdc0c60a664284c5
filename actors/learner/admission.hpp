// Off-policy admission: which rollout groups the learner takes, and when a
// rollout may start a new one. Groups made by a policy more than
// max_staleness versions older than the learner's are not admitted; instead of
// having such work dropped, rollouts ask before starting a group and wait
// while the answer is no (AReaL's rule: a rollout at version v may start the
// n-th group only while n < (v + max_staleness + 1) * groups_per_batch, so
// every group is trained at most max_staleness versions after its version;
// here n is the groups held, try_start below).
// Owned by the learner (trainer and role); not thread-safe.
#pragma once

#include <chrono>
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
  using clock = std::chrono::steady_clock;
  // place_lease: how long a rollout's place outlives its last ask (below).
  staleness_gate(std::uint64_t max_staleness, std::uint64_t groups_per_batch,
                 clock::duration place_lease = std::chrono::hours(1));

  // May `rollout`, holding weights of `rollout_version`, start its group
  // `number` now? The groups held are those trained, those arrived and
  // waiting for a batch, and one place per rollout for the group it
  // generates; true holds that place (false: wait for newer weights, or for
  // the learner to train more groups, and ask again).
  //   A rollout generates one group at a time, so its asking again means
  // that its last place is done with: the group arrived, or was given up
  // (no settled sample, a failed generation), or its process died and a
  // restarted one asks. Its new place replaces the old one, and asking for
  // the same number again (a restart, a lost answer) is the same place.
  // The places are keyed by rollout, not counted: a count leaked one place
  // for each rollout killed between its start and its group's arrival,
  // until every rollout waited forever (the chaos test, seed 76884248).
  // What this allows: a rollout's group sent and not yet arrived is not
  // held once the rollout asks for its next, so the rollouts may run ahead
  // of the rule by the groups in flight to the learner; admit() still
  // refuses any group that is too stale when it arrives. A rollout that
  // never asks again (its node is gone for good, or it was renamed) would
  // hold its place for ever: a place not renewed for place_lease (an hour
  // by default: two of a rollout's settle deadlines) is dropped.
  bool try_start(const std::string& rollout, std::uint64_t number, std::uint64_t rollout_version,
                 clock::time_point now = clock::now());
  // `rollout`'s group `number` was admitted: it waits for a batch, and its
  // place is released (the learner calls this for each group it admits).
  void arrived(const std::string& rollout, std::uint64_t number);

  // Whether `group` may be trained on at learner version `version`. unavailable
  // naming the group, its oldest version and the limit when it is too old
  // (the rollout should wait for newer weights and resample that prompt).
  status admit(const rollout_group& group, std::uint64_t version) const;

  // `groups` arrived groups were trained on (the learner calls this after
  // each step, before its checkpoint).
  void trained(std::uint64_t groups);
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

  // The groups the rule counts: trained, arrived, and the rollouts' places.
  std::uint64_t held() const { return trained_ + waiting_ + places_.size(); }
  std::uint64_t trained() const { return trained_; }
  std::uint64_t max_staleness() const { return max_staleness_; }
  // Checkpoints save the count of groups trained; a restart holds only
  // those: the groups that had arrived and the rollouts' places were lost
  // with the process, and come again (the hub re-delivers a group, a
  // rollout re-asks). Holding them too would close the gate for good (a
  // resumed quick-start waited forever).
  void restore(std::uint64_t trained, std::map<std::string, std::uint64_t> groups = {}) {
    trained_ = trained;
    waiting_ = 0;
    places_.clear();
    trained_groups_ = std::move(groups);
  }

 private:
  std::uint64_t max_staleness_;
  std::uint64_t groups_per_batch_;
  std::uint64_t trained_ = 0;
  std::uint64_t waiting_ = 0;  // arrived, not yet trained
  struct place {
    std::uint64_t number;  // the group the rollout may generate
    clock::time_point asked;
  };
  clock::duration place_lease_;
  std::map<std::string, place> places_;  // by rollout
  std::map<std::string, std::uint64_t> trained_groups_;  // group id -> version it went into
};

}  // namespace crucible::learner
