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
#pragma once

#include <cstdint>
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

using exemplar_actor = caf::typed_actor<
    caf::replies_to<sample_atom, exemplar_query>::with<exemplar_answer>,
    caf::replies_to<settle_atom, settlement>::with<settle_reply>,
    caf::replies_to<stats_atom, std::string>::with<std::vector<bucket_summary>>,
    caf::reacts_to<retry_atom>>;

// Spawns the actor (detached: it blocks on storage) on store, which others
// may share. options supplies the defaults for queries and the generator seed.
exemplar_actor spawn_exemplar_actor(caf::actor_system& system, std::shared_ptr<exemplar_store> store,
                                    exemplar_options options);

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
