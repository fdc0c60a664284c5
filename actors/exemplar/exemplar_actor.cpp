#include "actors/exemplar/exemplar_actor.hpp"

#include <fmt/format.h>

namespace crucible::exemplar {

const char* to_string(settle_outcome o) {
  switch (o) {
    case settle_outcome::inserted: return "inserted";
    case settle_outcome::duplicate: return "duplicate";
    case settle_outcome::ignored: return "ignored";
    case settle_outcome::failed: return "failed";
  }
  return "unknown";
}

namespace {

struct exemplar_state {
  std::shared_ptr<exemplar_store> store;
  exemplar_options options;
  rng gen;
  static inline const char* name = "exemplar";
};

exemplar_answer answer(exemplar_state& st, const exemplar_query& q) {
  exemplar_answer a{q.task_id, {}, {}};
  const std::size_t n = q.n ? q.n : st.options.n;
  const double tau = q.temperature > 0 ? q.temperature : st.options.temperature;
  rng seeded(q.seed);
  auto r = st.store->sample(q.task_id, n, tau, q.seed ? seeded : st.gen);
  if (r.ok()) {
    a.exemplars = std::move(r).value();
  } else {
    a.error = r.error().text();
  }
  return a;
}

settle_reply settle(exemplar_state& st, const settlement& s) {
  if (s.status != settlement_status::success) return {settle_outcome::ignored, "not a success"};
  if (s.code.empty()) return {settle_outcome::ignored, "success without code"};
  auto r = st.store->insert({s.task_id, s.candidate_id, s.code, s.reward});
  if (!r.ok()) return {settle_outcome::failed, r.error().text()};
  return {*r == insert_outcome::inserted ? settle_outcome::inserted : settle_outcome::duplicate, {}};
}

exemplar_actor::behavior_type exemplar_behavior(exemplar_actor::stateful_pointer<exemplar_state> self,
                                                std::shared_ptr<exemplar_store> store, exemplar_options options) {
  self->state.store = std::move(store);
  self->state.options = options;
  self->state.gen.seed(options.seed);
  return {
      [=](sample_atom, const exemplar_query& q) { return answer(self->state, q); },
      [=](settle_atom, const settlement& s) { return settle(self->state, s); },
      [=](stats_atom, const std::string& task) -> caf::result<std::vector<bucket_summary>> {
        auto r = self->state.store->stats(task);
        if (!r.ok()) return caf::make_error(caf::sec::runtime_error, r.error().text());
        return std::move(r).value();
      },
  };
}

}  // namespace

exemplar_actor spawn_exemplar_actor(caf::actor_system& system, std::shared_ptr<exemplar_store> store,
                                    exemplar_options options) {
  // Detached: RocksDB reads and (synced) writes block, so the actor gets a
  // thread of its own instead of holding a scheduler worker.
  return system.spawn<caf::detached>(exemplar_behavior, std::move(store), options);
}

}  // namespace crucible::exemplar
