#!/usr/bin/env bash
# A real single-node SLURM (Debian 12's slurm-wlm 22.05 + munge) for tests and benchmarks, without systemd.
#
#   scripts/slurm-local.sh start    # prints the slurm.conf path on stdout: export SLURM_CONF=$(... start)
#   scripts/slurm-local.sh status   # exit 0 when the controller answers and the node is usable, 3 otherwise
#   scripts/slurm-local.sh stop     # cancels its jobs, stops the daemons it started
#
# Run as root (apt-get, munged, slurmd). Idempotent: `start` on a running cluster prints the path and
# returns. Everything lives under $SLURM_LOCAL_DIR (default /tmp/jupyter-gpu-env-slurm); messages go to
# stderr, so stdout is only the path.
#
# Environment: SLURM_LOCAL_DIR, SLURM_LOCAL_GPUS (fake GPUs through gres, default 2; 0 = none),
# SLURM_LOCAL_CTLD_PORT / SLURM_LOCAL_SLURMD_PORT (default 6817 / 6818), SLURM_LOCAL_CPUS (CPUs the node
# declares, default 8 or this machine's count if higher: a Dask cluster's scheduler and its workers are one-CPU
# jobs each, and a 2-core CI machine must still run them side by side; slurmd is told to believe the config).
#
# The cluster: node `localhost` with at least SLURM_LOCAL_CPUS CPUs and 95% of its memory, partitions `debug`
# (default, no time limit) and `short` (at most 10 minutes), and under them `scavenger`, a preemptible
# partition on the same node: a job there that holds what a debug or short job needs is requeued at once
# (PreemptType=preempt/partition_prio, PreemptMode=REQUEUE): its batch script gets SIGTERM, KillWait (30 s)
# to save, and it may start again 6 s later (cred_expire=5). Fake GPUs are character devices made with
# mknod (gres/gpu drops a GPU that has no File=), so jobs that ask for them get CUDA_VISIBLE_DEVICES.
set -euo pipefail

BASE=${SLURM_LOCAL_DIR:-/tmp/jupyter-gpu-env-slurm}
CONF=$BASE/etc/slurm.conf
GPUS=${SLURM_LOCAL_GPUS:-2}
CPUS=${SLURM_LOCAL_CPUS:-8}
CTLD_PORT=${SLURM_LOCAL_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_LOCAL_SLURMD_PORT:-6818}
# GraceTime of the preemptible partition: 0 requeues a preempted job at once (its batch script gets SIGTERM,
# then SIGKILL KillWait = 30 s later); with more, the job runs on until slurmctld's next timeout check past it
# (it runs every 30 s), since SLURM signals only a job's steps, not its batch script, when grace starts.
GRACE=0
CRED_EXPIRE=5 # seconds before a requeued job may run again (SLURM's least)
export SLURM_CONF=$CONF

say() { echo "slurm-local: $*" >&2; }

alive() { # $1 = pid file, $2 = process name: is that process running?
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

stop_daemon() { # $1 = pid file, $2 = process name
  local pid i
  if alive "$1" "$2"; then
    pid=$(cat "$1")
    kill -TERM "$pid"
    for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then say "$2 ($pid) ignored SIGTERM; SIGKILL"; kill -KILL "$pid"; fi
  fi
  rm -f "$1"
}

ensure_packages() {
  local tool missing=0
  for tool in slurmctld slurmd sbatch munged; do command -v "$tool" >/dev/null || missing=1; done
  [ "$missing" = 0 ] && return 0
  [ "$(id -u)" = 0 ] || { say "slurm-wlm and munge are not installed and this is not root"; exit 1; }
  say "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; }
}

munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 0700 /etc/munge
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  if munge_works; then
    return 0 # someone's munged answers already; use it, and leave it alone at stop
  fi
  runuser -u munge -- /usr/sbin/munged # forks once the socket is ready
  cp /run/munge/munged.pid "$BASE/run/munged.pid"
  local i
  for i in $(seq 50); do munge_works && return 0; sleep 0.1; done
  say "munged did not start"; exit 1
}

fake_gpus() { # writes gres.conf; prints the node's Gres= clause (empty without GPUs)
  local i files=""
  rm -f "$BASE/etc/gres.conf" "$BASE"/dev/gpu*
  [ "$GPUS" -gt 0 ] || return 0
  mkdir -p "$BASE/dev"
  for i in $(seq 0 $((GPUS - 1))); do
    mknod -m 0666 "$BASE/dev/gpu$i" c 1 3 # a clone of /dev/null: harmless, and a real device file
    files+="${files:+,}$BASE/dev/gpu$i"
  done
  echo "NodeName=localhost Name=gpu File=$files" >"$BASE/etc/gres.conf"
  echo " Gres=gpu:$GPUS"
}

write_conf() {
  local hw cpus sockets cores threads mem gres overrides
  hw=$(slurmd -C | head -1) # NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ... RealMemory=24105
  field() { sed -n "s/.*[ ^]$1=\([0-9]*\).*/\1/p" <<<" $hw"; }
  cpus=$(field CPUs); sockets=$(field SocketsPerBoard); cores=$(field CoresPerSocket)
  threads=$(field ThreadsPerCore); mem=$(field RealMemory)
  overrides=""
  if [ "$CPUS" -gt "$cpus" ]; then # more than the machine has: one socket of single-thread cores
    cpus=$CPUS; sockets=1; cores=$CPUS; threads=1; overrides="SlurmdParameters=config_overrides"
  fi
  gres=$(fake_gpus)
  cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh: a single-node test cluster. Not for production.
ClusterName=gpuenvtest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$BASE/state/ctld
SlurmdSpoolDir=$BASE/state/d
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups here: track processes by parentage, no task affinity.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without a default, every job would claim the node's whole memory.
DefMemPerCPU=512
# Refuse impossible requests at submission instead of leaving them pending forever.
EnforcePartLimits=ALL
SchedulerType=sched/backfill
# Schedule a batch job at once (the default waits about 3 s), and look at jobs waiting for their begin
# time every 2 s rather than at the next backfill pass (30 s): a schedule's run starts on its minute.
SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$BASE/log/jobcomp.txt
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# Preemption by partition tier: a higher PriorityTier's job requeues the jobs of a tier with PreemptMode=REQUEUE
# that hold what it needs, after their partition's GraceTime.
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
# A requeued job may start again once its old credential has expired: cred_expire seconds (120 by default).
AuthInfo=cred_expire=${CRED_EXPIRE}
${overrides}
${gres:+GresTypes=gpu}
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$((mem * 95 / 100))$gres State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
PartitionName=short Nodes=localhost MaxTime=10 State=UP PriorityTier=10 PreemptMode=OFF
PartitionName=scavenger Nodes=localhost MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE GraceTime=$GRACE
EOF
}

node_ready() { # the node registered after time $1 (seconds) and takes jobs
  local info state since
  info=$(scontrol -o show node localhost 2>/dev/null) || return 1
  state=$(grep -o ' State=[^ ]*' <<<"$info" | cut -d= -f2)
  since=$(grep -o 'SlurmdStartTime=[^ ]*' <<<"$info" | cut -d= -f2)
  [[ "$state" =~ ^(IDLE|MIXED|ALLOCATED)(\+COMPLETING)?$ ]] || return 1
  [ "$since" != None ] && [ "$(date -d "$since" +%s)" -ge "$1" ]
}

is_up() {
  alive "$BASE/run/slurmctld.pid" slurmctld && alive "$BASE/run/slurmd.pid" slurmd \
    && scontrol ping >/dev/null 2>&1 && scontrol -o show node localhost 2>/dev/null \
    | grep -Eq ' State=(IDLE|MIXED|ALLOCATED)'
}

start() {
  if [ -s "$CONF" ] && is_up; then
    say "already running"
    echo "$CONF"
    return 0
  fi
  [ "$(id -u)" = 0 ] || { say "must run as root"; exit 1; }
  ensure_packages
  local t0 since i
  t0=$(date +%s%N)
  stop_daemon "$BASE/run/slurmd.pid" slurmd # a half-started cluster from before
  stop_daemon "$BASE/run/slurmctld.pid" slurmctld
  rm -rf "$BASE/state" "$BASE/log"
  mkdir -p "$BASE"/{etc,state/ctld,state/d,log,run}
  write_conf
  start_munge
  since=$(date +%s)
  slurmctld -f "$CONF" # daemonizes and writes its pid file
  slurmd -f "$CONF" -N localhost
  for i in $(seq 150); do node_ready "$since" && break; sleep 0.2; done
  if ! node_ready "$since"; then
    say "SLURM did not come up; the last lines of its logs:"
    tail -n 20 "$BASE/log/slurmctld.log" "$BASE/log/slurmd.log" >&2 || true
    exit 1
  fi
  say "up in $((($(date +%s%N) - t0) / 1000000)) ms ($GPUS fake GPUs)"
  echo "$CONF"
}

stop() {
  local i
  if [ -s "$BASE/run/slurmctld.pid" ] && scontrol ping >/dev/null 2>&1; then
    # Cancel this cluster's jobs first, so that no job process outlives its slurmstepd.
    scancel --partition=debug 2>/dev/null || true
    scancel --partition=short 2>/dev/null || true
    scancel --partition=scavenger 2>/dev/null || true
    for i in $(seq 100); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  stop_daemon "$BASE/run/slurmd.pid" slurmd
  stop_daemon "$BASE/run/slurmctld.pid" slurmctld
  stop_daemon "$BASE/run/munged.pid" munged # only when this script started it
  say "stopped"
}

status() {
  if [ -s "$CONF" ] && is_up; then
    echo "up: SLURM_CONF=$CONF"
    sinfo -N -o '%N %P %T %C %m %G'
  else
    echo "down"
    return 3
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
