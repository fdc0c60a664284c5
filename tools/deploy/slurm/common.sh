# Sourced by crucible.sbatch and add_evaluators.sbatch (README.md here): the
# settings both read from the environment and the srun steps both start.
# Functions and variables only; the caller sets `set -euo pipefail`.
# shellcheck shell=bash

# The built repository, on a path every node sees: the binary finds the
# evaluator's sandbox worker under the source path it was built from.
CRUCIBLE_HOME=${CRUCIBLE_HOME:-${SLURM_SUBMIT_DIR:-$PWD}}
CRUCIBLE=${CRUCIBLE:-$CRUCIBLE_HOME/build/bin/crucible}
# Evaluator flags: task root (the same as [rollout] tasks_dir), protocol,
# and any further existing flags, e.g. EVALUATOR_ARGS="--strict --prefetch 1".
TASKS_DIR=${TASKS_DIR:-$CRUCIBLE_HOME/configs/tasks}
PROTOCOL=${PROTOCOL:-default}
read -ra EVALUATOR_EXTRA <<<"${EVALUATOR_ARGS:-}"
# Cores and memory of each step (srun --cpus-per-task, --mem).
EVALUATOR_CPUS=${EVALUATOR_CPUS:-4}
EVALUATOR_MEM=${EVALUATOR_MEM:-32G}
# Where the evaluators' compile cache goes (XDG_CACHE_HOME/crucible/kernels);
# unset: the evaluator's default, $HOME/.cache/crucible/kernels.
KERNEL_CACHE=${KERNEL_CACHE:-}
# CURVE (README.md, "Authentication"): the scripts give each step its own key
# folder with --keys, or none. A CRUCIBLE_KEYS from the submit shell would
# otherwise reach every step, the hub's too, as the one folder of them all.
unset CRUCIBLE_KEYS

die() {
  echo "crucible slurm: $*" >&2
  exit 2
}

# read_paths CONFIG RUN_DIR: sets CONFIG and RUN_DIR to absolute paths (every
# step runs in RUN_DIR), ADDRESS_FILE, and LOGS (this job's step logs).
read_paths() {
  [[ -f $1 ]] || die "config '$1' is not a file"
  [[ -n $2 ]] || die "no run folder given"
  [[ -x $CRUCIBLE ]] || die "no crucible binary at $CRUCIBLE (set CRUCIBLE_HOME or CRUCIBLE)"
  [[ -d $TASKS_DIR ]] || die "TASKS_DIR '$TASKS_DIR' is not a folder"
  CONFIG=$(realpath "$1")
  RUN_DIR=$(realpath -m "$2")
  TASKS_DIR=$(realpath "$TASKS_DIR")
  # shellcheck disable=SC2034  # read by the scripts that source this file
  ADDRESS_FILE=$RUN_DIR/hub.address
  # shellcheck disable=SC2034
  HUB_KEY_FILE=$RUN_DIR/hub.key
  KEYS_DIR=$RUN_DIR/keys
  HUB_KEYS=$KEYS_DIR/hub
  LOGS=$RUN_DIR/logs/$SLURM_JOB_ID
  mkdir -p "$LOGS"
}

# gpu_slots: sets SLOTS to one entry per GPU of the allocation, the node's
# name, node by node. GPUS_PER_NODE defaults to what Slurm gave this node.
gpu_slots() {
  local per=${GPUS_PER_NODE:-${SLURM_GPUS_ON_NODE:-}} node g
  [[ $per =~ ^[0-9]+$ ]] || die "set GPUS_PER_NODE (Slurm did not say how many GPUs each node has)"
  SLOTS=()
  for node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
    for ((g = 0; g < per; g++)); do SLOTS+=("$node"); done
  done
}

# The job's GPU requests would otherwise be inherited by every step (srun
# reads them from the environment); each step below asks for its own.
unset SLURM_GPUS SLURM_GPUS_PER_NODE SLURM_GPUS_PER_TASK SLURM_GPUS_PER_SOCKET SLURM_CPUS_PER_GPU \
  SLURM_MEM_PER_GPU SLURM_MEM_PER_CPU SLURM_NTASKS_PER_GPU SLURM_TRES_PER_TASK

# step NAME NODE CPUS MEM GRES COMMAND...: one task on NODE in the
# background, in RUN_DIR, its output in LOGS/NAME.log; GRES "gpu:1" or "none"
# (a step without --gres would get every GPU the job has on that node).
step() {
  local name=$1 node=$2 cpus=$3 mem=$4 gres=$5
  shift 5
  srun --job-name="$name" --nodes=1 --ntasks=1 --nodelist="$node" --exact --cpus-per-task="$cpus" \
    --mem="$mem" --gres="$gres" --chdir="$RUN_DIR" --output="$LOGS/$name.log" "$@" &
}

# start_evaluator NAME NODE ADDRESS: `crucible evaluator` on one GPU of NODE.
# The evaluator pins itself to --device cuda:N: it gives its sandbox workers
# CUDA_VISIBLE_DEVICES=N and checks `nvidia-smi -i N`, so N is the index that
# Slurm put in the step's CUDA_VISIBLE_DEVICES. With CURVE it joins with
# --keys KEYS_DIR/NAME (peer_keys NAME first).
start_evaluator() {
  local name=$1 node=$2 address=$3
  keys_of "$name"
  # shellcheck disable=SC2016  # expanded by the step's shell, where Slurm has set CUDA_VISIBLE_DEVICES
  step "$name" "$node" "$EVALUATOR_CPUS" "$EVALUATOR_MEM" gpu:1 \
    env ${KERNEL_CACHE:+"XDG_CACHE_HOME=$KERNEL_CACHE"} bash -c '
      case ${CUDA_VISIBLE_DEVICES:-} in
        "" | *[!0-9]*) echo "$1: CUDA_VISIBLE_DEVICES=\"${CUDA_VISIBLE_DEVICES:-}\" is not one GPU index" >&2; exit 2 ;;
      esac
      exec "$0" evaluator --device "cuda:$CUDA_VISIBLE_DEVICES" --name "$@"' \
    "$CRUCIBLE" "$name" --config "$CONFIG" --connect "$address" "${KEYS[@]}" --tasks "$TASKS_DIR" \
    --protocol "$PROTOCOL" "${EVALUATOR_EXTRA[@]}"
}

# keys_of NAME: sets KEYS to the step's `--keys KEYS_DIR/NAME`, or to nothing
# when the bus is plain (CURVE=0).
keys_of() {
  KEYS=()
  if ((CURVE)); then KEYS=(--keys "$KEYS_DIR/$1"); fi
}

# with_keys_lock COMMAND...: COMMAND holding KEYS_DIR/.lock (flock), so that
# jobs on other nodes do not append to the hub's authorized_keys at the same
# time (O_APPEND is not atomic between NFS clients). A filesystem without
# flock gets a warning and no lock.
with_keys_lock() {
  mkdir -m 700 "$KEYS_DIR" 2>/dev/null || [[ -d $KEYS_DIR ]] || die "cannot create $KEYS_DIR"
  {
    flock -w 120 9 || echo "crucible slurm: no lock on $KEYS_DIR/.lock (flock); making keys without it" >&2
    "$@"
  } 9>>"$KEYS_DIR/.lock"
}

# make_hub_keys: the hub's key folder HUB_KEYS, its pair made on first use
# and kept for a resubmitted job, and an authorized_keys (the hub does not
# start without one). Lines these scripts wrote for a peer folder since
# removed (a finished job's evaluators) are dropped: the hub reads the list
# when it starts, so only then can a key leave it. Lines added by hand stay.
make_hub_keys() {
  if [[ ! -f $HUB_KEYS/secret.key ]]; then
    "$CRUCIBLE" keys generate "$HUB_KEYS" >>"$LOGS/keys.log" || die "crucible keys generate $HUB_KEYS failed"
  fi
  local list=$HUB_KEYS/authorized_keys line key note
  [[ -f $list ]] || : >"$list"
  while IFS= read -r line || [[ -n $line ]]; do
    key=${line%%[[:space:]]*}
    note=${line#"$key"}
    note=${note#"${note%%[![:space:]]*}"}
    if [[ $note == "$KEYS_DIR"/* && ! (-f $note/public.key && $(<"$note/public.key") == "$key") ]]; then continue; fi
    printf '%s\n' "$line"
  done <"$list" >"$list.tmp"
  mv -f "$list.tmp" "$list"
}

# peer_keys NAME...: a key folder KEYS_DIR/NAME for each, listed on the hub
# (`crucible keys generate DIR --hub HUB_KEYS`: its public key appended to
# HUB_KEYS/authorized_keys, the hub's written to DIR/hub.key). A folder kept
# from an earlier job is listed again only if its key is not.
peer_keys() {
  local name dir
  for name; do
    dir=$KEYS_DIR/$name
    if [[ ! -f $dir/secret.key ]]; then
      "$CRUCIBLE" keys generate "$dir" --hub "$HUB_KEYS" >>"$LOGS/keys.log" ||
        die "crucible keys generate $dir --hub $HUB_KEYS failed"
    elif [[ ! -s $dir/public.key ]]; then
      die "$dir holds secret.key but no public.key: remove the folder"
    elif ! grep -qF -- "$(<"$dir/public.key")" "$HUB_KEYS/authorized_keys" || ! cmp -s "$dir/hub.key" "$HUB_KEYS/public.key"; then
      "$CRUCIBLE" keys allow "$HUB_KEYS" "$dir" >>"$LOGS/keys.log" || die "crucible keys allow $HUB_KEYS $dir failed"
    fi
  done
}

# remove_job_keys: this job's evaluator key folders, once its evaluators have
# stopped; the next hub start drops their lines from authorized_keys.
remove_job_keys() {
  ((CURVE)) || return 0
  local dir
  for dir in "$KEYS_DIR/evaluator-$SLURM_JOB_ID-"*; do
    if [[ -d $dir ]]; then rm -rf -- "$dir"; fi
  done
}

# hub_listens tcp://HOST:PORT: whether something accepts TCP connections
# there (bash's /dev/tcp; the hub's ROUTER socket ignores a bare connection).
hub_listens() {
  local hostport=${1#tcp://}
  (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null
}

alive() { kill -0 "$1" 2>/dev/null; }

any_alive() {
  local p
  for p; do alive "$p" && return 0; done
  return 1
}

# stop_steps PID...: SIGTERM to these srun processes (srun passes it on to
# the role, which shuts down), then wait for them.
stop_steps() {
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  wait "$@" 2>/dev/null || true
}
