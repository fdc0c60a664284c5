#include "actors/evaluator/evaluator_actor.hpp"

#include <doctest/doctest.h>

using namespace crucible::evaluator;

namespace {
const std::filesystem::path tasks = std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "configs/tasks/cpu";
}

TEST_CASE("the evaluator actor answers an evaluate request with an evaluation, and a bad device with an error") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto ev = spawn_evaluator(sys, evaluator_options{});
  caf::scoped_actor self{sys};
  auto req = load_request(tasks / "chain_matmul/task.py", tasks / "chain_matmul/faster.py", "cpu", 3);
  REQUIRE(req.ok());
  const auto quick = protocol_by_name("quick").value();
  self->request(ev, caf::infinite, evaluate_atom::value, *req, quick)
      .receive([](const evaluation& e) {
        INFO(e.text());
        CHECK(e.status == eval_status::ok);
        CHECK(e.reward > 1.0);
      },
               [](const caf::error& err) { FAIL("unexpected error " << caf::to_string(err)); });
  req->device = "cuda:x";
  self->request(ev, caf::infinite, evaluate_atom::value, *req, quick)
      .receive([](const evaluation&) { FAIL("a bad device must not evaluate"); },
               [](const caf::error& err) { CHECK(err.code() == static_cast<std::uint8_t>(caf::sec::runtime_error)); });
  self->send_exit(ev, caf::exit_reason::user_shutdown);
}
