#include "actors/evaluator/evaluator_actor.hpp"

#include <doctest/doctest.h>

#include "actors/evaluator/scratch.hpp"

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

TEST_CASE("a job still compiling ahead waits while a ready job behind it is measured, then runs") {
  // A fresh compile cache: the inline kernel's build (g++ on the CPU pool,
  // tens of seconds) is certain to be running when both jobs arrive.
  auto cache_dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-eval-test", "cache");
  REQUIRE(cache_dir.ok());
  evaluator_options opt;
  opt.compile.root = cache_dir->path();
  auto cache = std::make_shared<compile_cache>(opt.compile);
  auto cpu = std::make_shared<cpu_stage>(cache, opt.worker, opt.limits, opt.scratch_root);
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto ev = spawn_evaluator(sys, opt, cache, cpu);
  caf::scoped_actor self{sys};
  auto compiling = load_request(tasks / "scale_relu/task.py", tasks / "scale_relu/inline_kernel.py", "cpu", 5);
  auto ready = load_request(tasks / "diag_matmul/task.py", tasks / "diag_matmul/not_compiling.py", "cpu", 5);
  REQUIRE((compiling.ok() && ready.ok()));
  cpu->ahead(compiling->candidate_source, compiling->task_source);
  CHECK_FALSE(cpu->ready(compiling->candidate_source, compiling->task_source));
  CHECK(cpu->ready(ready->candidate_source, ready->task_source));  // never asked ahead: runs in line
  const auto quick = protocol_by_name("quick").value();
  // Replies come back in the order the actor finished the jobs.
  self->send(ev, evaluate_atom::value, *compiling, quick);
  self->send(ev, evaluate_atom::value, *ready, quick);
  std::vector<evaluation> done;
  for (int i = 0; i < 2; ++i)
    self->receive([&](const evaluation& e) { done.push_back(e); },
                  [](const caf::error& err) { FAIL("unexpected error " << caf::to_string(err)); });
  REQUIRE(done.size() == 2);
  INFO(done[0].text() << "\n" << done[1].text());
  CHECK(done[0].status == eval_status::compile_error);  // the ready job (it does not parse), first
  CHECK(done[1].status == eval_status::ok);             // the compiled kernel, after its build
  CHECK(done[1].compiled);
  CHECK(done[1].extensions_imported == 1);
  self->send_exit(ev, caf::exit_reason::user_shutdown);
}
