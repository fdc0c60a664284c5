// The rollout actor (design section 2): for each group it picks a task
// (task_schedule.hpp), asks the exemplar store for N exemplars
// (exemplar.sample), builds the contrastive prompt (prompt.hpp), samples G
// completions with the policy, extracts their code (extract.hpp), submits
// each as a settle job to the referee, waits for the settlements (up to
// settle_deadline), and sends the group as a RolloutGroup job to the learner
// (kind learner_job_kind, job id "group/ROLLOUT/gN-vV").
//
// Ids are deterministic: candidate "ROLLOUT/gN-vV/i-H" (H: a hash of the
// completion's text) for group N sampled at
// policy version V, so a rollout restarted with its state_file resubmits
// the same ids and gets the referee's stored settlements. Results are
// acknowledged to the hub only once the learner has the group.
//
// Before each group it asks the learner (learner.latest, learner.chunk,
// learner.start jobs; README.md): newer weights are fetched and switched to
// between groups only, and a group starts only when the learner's admission
// says go and the rollout is at most max_staleness versions behind. Bounded
// everywhere: one group is sampled or settling at a time, at most 4 chunk
// requests and max_pending_groups groups at the learner are out.
//
// Mailbox: only its own messages and the hub client's callbacks; stats_atom
// -> std::string for logs. Spawned by `crucible rollout` and tests; it stops
// itself (exit reason normal) after `groups` groups when that is set.
#pragma once

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/policy/policy.hpp"
#include "actors/rollout/rollout_options.hpp"
#include "runtime/bus/peer_options.hpp"
#include "runtime/bus/transport.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::rollout {

// What the actor has done, for logs and tests (stats_atom).
struct rollout_counters {
  std::uint64_t groups_sent = 0, samples_sent = 0, no_code = 0, unsettled = 0, weight_switches = 0;
  std::uint64_t staleness_waits = 0;
  std::uint64_t resampled = 0;  // groups sampled again after the learner refused them as too stale
};

// Starts a rollout that joins the hub over `transport` as `peer.name`
// (role Rollout, a client). `policy` is the loaded model at
// options.policy_version. With `metrics`, it records its families there
// (rollout_metrics.hpp, labelled with peer.name). Errors: the task list or
// the prompt template cannot be loaded.
result<caf::actor> spawn_rollout(caf::actor_system& sys, const rollout_options& options, policy::policy policy,
                                 bus::peer_options peer, std::shared_ptr<bus::transport> transport,
                                 metrics::registry_ptr metrics = {});

}  // namespace crucible::rollout
