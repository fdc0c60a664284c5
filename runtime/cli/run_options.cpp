#include "runtime/cli/run_options.hpp"

namespace crucible::cli {

status read(config::section s, run_options& o) {
  CRUCIBLE_TRY(s.read("job", o.job));
  CRUCIBLE_TRY(s.read("evaluators", o.evaluators));
  CRUCIBLE_TRY(s.read("warm_spares", o.warm_spares));
  CRUCIBLE_TRY(s.read("devices", o.devices));
  CRUCIBLE_TRY(s.read("protocol", o.protocol));
  CRUCIBLE_TRY(s.read("strict", o.strict));
  CRUCIBLE_TRY(s.read("tolerances", o.tolerances));
  CRUCIBLE_TRY(s.read("tasks_dir", o.tasks_dir));
  CRUCIBLE_TRY(s.read("exemplar_temperature", o.exemplar_temperature));
  CRUCIBLE_TRY(s.read("exemplar_seed", o.exemplar_seed));
  CRUCIBLE_TRY(s.read("exemplar_settled", o.exemplar_settled));
  CRUCIBLE_TRY(s.read("detectors", o.detectors));
  CRUCIBLE_TRY(s.read("tasks", o.tasks));
  CRUCIBLE_TRY(s.read("variants", o.variants));
  CRUCIBLE_TRY(s.read("exemplars", o.exemplars));
  CRUCIBLE_TRY(s.read("timeout_s", o.timeout_s));
  CRUCIBLE_TRY(s.read("policy", o.policy));
  CRUCIBLE_TRY(s.read("seed", o.seed));
  CRUCIBLE_TRY(s.read("sft_data", o.sft_data));
  CRUCIBLE_TRY(s.read("sft_epochs", o.sft_epochs));
  CRUCIBLE_TRY(s.read("rollouts", o.rollouts));
  CRUCIBLE_TRY(s.read("groups", o.groups));
  CRUCIBLE_TRY(s.read("time_limit_s", o.time_limit_s));
  CRUCIBLE_TRY(s.finish());
  const std::string where = s.name().empty() ? "[run]" : "[" + s.name() + "]";
  if (o.job != "loop" && o.job != "variants")
    return make_error(errc::invalid_argument, where + " job must be \"loop\" or \"variants\", not \"" + o.job + "\"");
  if (o.evaluators == 0) return make_error(errc::invalid_argument, where + " evaluators must be at least 1");
  if (o.job == "loop" && o.rollouts == 0) return make_error(errc::invalid_argument, where + " rollouts must be at least 1");
  if (o.job == "loop" && o.policy.empty())
    return make_error(errc::invalid_argument, where + " policy is required for job \"loop\" (a Hugging Face folder)");
  if (!o.exemplar_settled.empty() && o.exemplar_seed.empty())
    return make_error(errc::invalid_argument, where + " exemplar_settled gives rewards to exemplar_seed's CUDA-L1 rows: "
                                                      "name the files in exemplar_seed");
  for (const auto& d : o.detectors)
    if (d != "static")
      return make_error(errc::invalid_argument, where + " detectors: unknown kind \"" + d +
                                                    "\" (in-process detectors: static; others join with `crucible detector`)");
  return status::success();
}

}  // namespace crucible::cli
