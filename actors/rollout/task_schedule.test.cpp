#include "actors/rollout/task_schedule.hpp"

#include <doctest/doctest.h>

#include <map>

#include "actors/rollout/rollout_options.hpp"

using namespace crucible;
using namespace crucible::rollout;

namespace {
const std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks";
}

TEST_CASE("PREFIX/* finds every task folder in name order, and ids resolve to ROOT/ID/task.py or ROOT/ID.py") {
  auto all = load_tasks(tasks, {"cpu/*"});
  REQUIRE_MESSAGE(all.ok(), (all.ok() ? std::string() : all.error().text()));
  REQUIRE(all->size() >= 8);
  CHECK(all->front().id == "cpu/chain_matmul");
  CHECK(all->front().code.find("class Model(") != std::string::npos);
  auto flat = load_tasks(tasks, {"bad/task_without_model"});
  REQUIRE(flat.ok());
  CHECK(flat->front().file.filename() == "task_without_model.py");
}

TEST_CASE("bad task entries are refused naming the entry") {
  auto missing = load_tasks(tasks, {"cpu/no_such_task"});
  REQUIRE(!missing.ok());
  CHECK(missing.error().message.find("cpu/no_such_task") != std::string::npos);
  CHECK(!load_tasks(tasks, {"cpu/gelu_tanh=abc"}).ok());
  CHECK(!load_tasks(tasks, {"cpu/gelu_tanh=-1"}).ok());
  CHECK(!load_tasks(tasks, {"cpu/gelu_tanh", "cpu/gelu_tanh"}).ok());
  CHECK(!load_tasks(tasks, {"nothing/*"}).ok());
}

TEST_CASE("round robin cycles through the tasks, weighted draws by weight and repeats itself per group number") {
  auto two = load_tasks(tasks, {"cpu/gelu_tanh=3", "cpu/scale_relu=1"});
  REQUIRE(two.ok());
  CHECK((*two)[0].weight == 3.0);
  task_schedule rr(*two, schedule_kind::round_robin, 0);
  CHECK(rr.pick(0).id == "cpu/gelu_tanh");
  CHECK(rr.pick(1).id == "cpu/scale_relu");
  CHECK(rr.pick(2).id == "cpu/gelu_tanh");
  task_schedule w(*two, schedule_kind::weighted, 7);
  std::map<std::string, int> count;
  for (std::uint64_t g = 0; g < 4000; ++g) count[w.pick(g).id]++;
  // 3:1 by weight: 3000 expected; 6 standard deviations is about 165.
  CHECK(count["cpu/gelu_tanh"] > 2830);
  CHECK(count["cpu/gelu_tanh"] < 3170);
  for (std::uint64_t g = 0; g < 50; ++g) CHECK(w.pick(g).id == task_schedule(*two, schedule_kind::weighted, 7).pick(g).id);
}

TEST_CASE("[rollout] reads every key and refuses bad values") {
  auto f = config::file::load(std::string(CRUCIBLE_SOURCE_DIR) + "/actors/rollout/testdata/rollout.toml");
  REQUIRE_MESSAGE(f.ok(), (f.ok() ? std::string() : f.error().text()));
  rollout_options o;
  auto s = read(f->get("rollout"), o);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().text()));
  CHECK(o.group_size == 4);
  CHECK(o.schedule == "weighted");
  CHECK(o.tasks == std::vector<std::string>{"cpu/gelu_tanh=2", "cpu/scale_relu"});
  CHECK(o.settle_deadline.count() == 60000);
  rollout_options bad;
  auto e = read(f->get("bad"), bad);
  REQUIRE(!e.ok());
  CHECK(e.error().message.find("schedule") != std::string::npos);
}
