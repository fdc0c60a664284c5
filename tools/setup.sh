#!/usr/bin/env bash
# Installs crucible's build and test dependencies from Debian 12 packages when
# any is missing. Called by the README's commands and by .ci/run; safe to rerun.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libcaf-dev
  libzmq3-dev cppzmq-dev
  libflatbuffers-dev flatbuffers-compiler python3-flatbuffers python3-zmq
  librocksdb-dev
  doctest-dev
  libtorch-dev python3-torch python3-numpy python3-dev pybind11-dev
  # Debian's libtorch and numpy call libblas.so.3; without OpenBLAS that is the
  # netlib reference BLAS, single-threaded and about 9x slower on the learner's
  # matmuls (perf: 89% of an SFT step in its sgemm_).
  libopenblas0-pthread
  libgloo-dev  # the c10d Gloo headers the learner's data parallelism needs (libtorch links libgloo0)
  libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libcpp-httplib-dev libpcre2-dev libutf8proc-dev
  python3-pyflakes  # undefined names in the sandbox worker's Python (evaluator_worker_names test)
  python3-jinja2  # the reference renderer of the chat-template tests (actors/policy/chat_template.test.cpp)
  prometheus-cpp-dev  # every role's /metrics endpoint (runtime/metrics)
  libseccomp-dev  # the sandbox's syscall filter (actors/evaluator/containment.hpp)
  chromium  # renders the dashboard in its test (runtime/dashboard/dashboard.test.cpp)
  iproute2  # ip: the multi-node test's hosts, bridge and veth pairs (tests/support/multinode_hosts.hpp)
  # tools/fuzz.sh (the libFuzzer targets of fuzz/, ASan + UBSan): clang, its
  # fuzzer and sanitizer runtimes, and llvm-symbolizer for readable crash reports.
  clang-14 libclang-rt-14-dev llvm-14
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all dependencies present"
