"""The runner's entry point in a Kubernetes pod, a shell script free of the Kubernetes client: the
backend's Job objects run it, and so does a CronJob's pod once it has made its run's folder
(:mod:`.schedules.tick`), where only the runner's own dependencies may be installed."""

from __future__ import annotations

# The pod's entry point. $1 is the job folder, $2 the Python on the image. POSIX sh (dash, busybox):
# the runner is a child so its output can go to both log.txt and the pod log through tee, and the
# shell, PID 1, passes SIGTERM on (PID 1 ignores signals it does not handle). Without a fifo (no writable
# TMPDIR) the log goes to log.txt alone. Once the runner has ended, the pod of a pipeline's node (its
# job.json has a "pipeline" entry) carries the pipeline on: it creates the children that may start now
# (batch/kubernetes/pipelines/carry.py), saying what it did on stderr; its failure changes no exit code.
ENTRYPOINT = r"""set -u
folder="$1"; python="$2"; log="$folder/log.txt"
if [ ! -d "$folder" ]; then
  echo "jupyter-gpu-env: the job folder $folder is not mounted in this pod; give the Kubernetes backend the volumes and volume_mounts that share it (c.KubernetesBackend.volumes)" >&2
  exit 2
fi
fifo="${TMPDIR:-/tmp}/gpu-env-log.$$"
tee_pid=""
if mkfifo "$fifo" 2>/dev/null; then
  tee -a "$log" <"$fifo" &
  tee_pid=$!
  out="$fifo"
else
  echo "jupyter-gpu-env: no fifo in ${TMPDIR:-/tmp}; the log goes to $log only" >&2
  out="$log"
fi
"$python" -m jupyter_gpu_env.runner "$folder" >>"$out" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
while :; do
  wait "$pid"; code=$?
  kill -0 "$pid" 2>/dev/null || break
done
if [ -n "$tee_pid" ]; then
  (sleep 10; kill "$tee_pid" 2>/dev/null) </dev/null >/dev/null 2>&1 &
  timer=$!
  wait "$tee_pid" 2>/dev/null
  kill "$timer" 2>/dev/null
  rm -f "$fifo"
fi
if grep -q '"pipeline"' "$folder/job.json" 2>/dev/null; then
  "$python" -m jupyter_gpu_env.backends.kubernetes.pipelines.carry "$folder" </dev/null 1>&2 || :
fi
exit "$code"
"""
