// The exemplar actor: answers sample requests for contrastive prompts and
// inserts settled clean successes. It speaks plain C++ messages that mirror
// messages/domain.fbs (ExemplarQuery, ExemplarAnswer, Settlement; see there
// for the fields' meaning); the bus bridge converts, the actor never sees
// transport. See exemplar_store.hpp for storage and crash safety.
//
// Who calls it: rollouts (sample), the settlement event stream (settle),
// dashboards and the CLI (stats). Every reply comes after the store has
// answered: a settle reply means the exemplar is in the write-ahead log.
// A settlement the store cannot write (errc::io: a full disk) is not
// answered `failed`: the actor holds it, and those after it, logs the error
// (with the store's path; again once a minute), tries again every
// options.storage_retry and answers each once it is written; samples and
// stats go on meanwhile. Only a settlement the store refuses for what it is
// (errc::invalid_argument) is answered `failed`.
//
// With a bucket listener, the actor also tells whoever shows the store (the
// dashboard, through the role's bus connection) each task's buckets as they
// are: a task an insert changed within options.bucket_publish_interval
// (the changes of an interval together), and every task again each
// options.bucket_refresh_interval.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/exemplar/exemplar_options.hpp"
#include "actors/exemplar/exemplar_store.hpp"

namespace crucible::exemplar {

using sample_atom = caf::atom_constant<caf::atom("exsample")>;
using settle_atom = caf::atom_constant<caf::atom("exsettle")>;
using stats_atom = caf::atom_constant<caf::atom("exstats")>;
using retry_atom = caf::atom_constant<caf::atom("exretry")>;  // its own timer: held inserts
using publish_atom = caf::atom_constant<caf::atom("expublish")>;  // its own timer: changed tasks' buckets
using refresh_atom = caf::atom_constant<caf::atom("exrefresh")>;  // its own timer: every task's buckets

// messages/domain.fbs ExemplarQuery. n = 0 and temperature <= 0 take the
// actor's defaults; seed = 0 uses the actor's own generator, any other seed
// makes the answer reproducible.
struct exemplar_query {
  std::string task_id;
  std::uint32_t n = 0;
  double temperature = 0;
  std::uint64_t seed = 0;
};

// messages/domain.fbs ExemplarAnswer: fewer exemplars than asked when the
// task has fewer buckets; error non-empty when the store failed.
struct exemplar_answer {
  std::string task_id;
  std::vector<exemplar> exemplars;
  std::string error;
};

// messages/domain.fbs SettlementStatus and the Settlement fields the store
// needs. Only status success is inserted (the referee settles success only
// for clean, verified candidates).
enum class settlement_status : std::uint8_t { success = 0, failure, void_, hack, no_code };
struct settlement {
  std::string candidate_id;
  std::string task_id;
  settlement_status status = settlement_status::failure;
  double reward = 0;
  std::string code;
};

enum class settle_outcome : std::uint8_t {
  inserted,   // a new exemplar
  duplicate,  // this candidate id was already stored: nothing changed
  ignored,    // not a success (or no code): not an exemplar
  failed,     // the store refused or failed; reason says why
};
struct settle_reply {
  settle_outcome outcome = settle_outcome::failed;
  std::string reason;
};
const char* to_string(settle_outcome o);

// messages/domain.fbs ExemplarBuckets: every non-empty bucket of a task as
// the store has them now, with the chance of each on a query's first draw
// (Equation 1 at the store's temperature; the bucket's share of exemplars
// for the uniform selector).
struct bucket_report {
  std::string task_id;
  std::vector<bucket_summary> buckets;  // by bucket number
  std::vector<double> probability;      // one per bucket
  selector_kind selector = selector_kind::bucket;
  double temperature = 0;
  bucket_scale scale = bucket_scale::linear;
  double bucket_width = 0;
};
// The chances of report.buckets' first draw under options.
std::vector<double> first_draw_chances(const std::vector<bucket_summary>& buckets, const exemplar_options& options);

// Called on the actor's thread with each report; must not block (hand it
// to a queue: the exemplar role hands it to its worker's event outbox).
using bucket_listener = std::function<void(bucket_report)>;

using exemplar_actor = caf::typed_actor<
    caf::replies_to<sample_atom, exemplar_query>::with<exemplar_answer>,
    caf::replies_to<settle_atom, settlement>::with<settle_reply>,
    caf::replies_to<stats_atom, std::string>::with<std::vector<bucket_summary>>,
    caf::reacts_to<retry_atom>, caf::reacts_to<publish_atom>, caf::reacts_to<refresh_atom>>;

// Spawns the actor (detached: it blocks on storage) on store, which others
// may share. options supplies the defaults for queries, the generator seed
// and how often buckets are published to on_buckets (null: never).
exemplar_actor spawn_exemplar_actor(caf::actor_system& system, std::shared_ptr<exemplar_store> store,
                                    exemplar_options options, bucket_listener on_buckets = {});

// CAF inspection: text forms for logs and serialization if ever needed.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exemplar_query& x) {
  return f(caf::meta::type_name("exemplar_query"), x.task_id, x.n, x.temperature, x.seed);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exemplar& x) {
  return f(caf::meta::type_name("exemplar"), x.task, x.id, x.score, x.bucket, x.bucket_mean, x.code);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exemplar_answer& x) {
  return f(caf::meta::type_name("exemplar_answer"), x.task_id, x.exemplars, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, settlement& x) {
  return f(caf::meta::type_name("settlement"), x.candidate_id, x.task_id, x.status, x.reward, x.code);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, settle_reply& x) {
  return f(caf::meta::type_name("settle_reply"), x.outcome, x.reason);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bucket_summary& x) {
  return f(caf::meta::type_name("bucket_summary"), x.bucket, x.range.low, x.range.high, x.count,
           x.score_sum_micros);
}

}  // namespace crucible::exemplar
