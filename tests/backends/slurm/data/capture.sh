#!/usr/bin/env bash
# Re-capture the SLURM output the parser tests read, from the local cluster of scripts/slurm-local.sh:
#   export SLURM_CONF=$(scripts/slurm-local.sh start); bash tests/backends/slurm/data/capture.sh
# The formats are the backend's (jupyter_gpu_env/batch/slurm/parse.py); ended-job files (scontrol-timeout
# etc.) were captured the same way from jobs that timed out, failed with exit 7, or were cancelled.
set -euo pipefail
cd "$(dirname "$0")"
export SLURM_TIME_FORMAT=standard
SQ='%i|%T|%P|%S|%N|%r'
sinfo --version >version.txt
sinfo --noheader --format='%P|%a|%l|%c|%m|%G' >sinfo.txt
tmp=$(mktemp -d)
printf '#!/bin/bash\nsleep 120\n' >"$tmp/s.sh"
run=$(sbatch --parsable --gres=gpu:2 -o /dev/null "$tmp/s.sh")       # takes both fake GPUs
res=$(sbatch --parsable --gres=gpu:1 -o /dev/null "$tmp/s.sh")       # waits: Resources
pri=$(sbatch --parsable -o /dev/null "$tmp/s.sh")                    # waits behind it: Priority
held=$(sbatch --parsable --hold -o /dev/null "$tmp/s.sh")            # JobHeldUser
sleep 2
squeue --noheader --states=all --jobs="$run,$res,$pri,$held" --format="$SQ" >squeue-active.txt
scontrol -o show job "$run" >scontrol-running.txt
scontrol -o show job "$res" >scontrol-pending.txt
scontrol -o show job 999999 2>scontrol-unknown.stderr.txt || true
squeue --noheader --states=all --jobs=999999 --format="$SQ" 2>squeue-unknown.stderr.txt || true
sbatch --parsable --gres=gpu:64 "$tmp/s.sh" 2>sbatch-gpus64.stderr.txt || true
sbatch --parsable --mem=900G "$tmp/s.sh" 2>sbatch-mem.stderr.txt || true
sbatch --parsable --partition=short --time=20 "$tmp/s.sh" 2>sbatch-time.stderr.txt || true
sbatch --parsable --partition=nope "$tmp/s.sh" 2>sbatch-partition.stderr.txt || true
scancel "$run" "$res" "$pri" "$held"
rm -rf "$tmp"
# scontrol-nodes-gpu-used.txt: `scontrol -d -o show node` while a job holds one of the two GPUs.
# A pipeline's child of a failing parent: waiting on its dependency, then killed by --kill-on-invalid-dep.
tmp=$(mktemp -d)
printf '#!/bin/bash\nsleep 3\nexit 1\n' >"$tmp/fail.sh"
printf '#!/bin/bash\necho child\n' >"$tmp/child.sh"
parent=$(sbatch --parsable -o /dev/null "$tmp/fail.sh")
child=$(sbatch --parsable -o /dev/null --dependency="afterok:$parent" --kill-on-invalid-dep=yes "$tmp/child.sh")
sleep 1
squeue --noheader --states=all --array --jobs="$parent,$child" --format="$SQ" >squeue-dependency-pending.txt
sleep 6
squeue --noheader --states=all --array --jobs="$parent,$child" --format="$SQ" >squeue-dependency-never.txt
scontrol -o show job "$child" >scontrol-dependency-never.txt
rm -rf "$tmp"
