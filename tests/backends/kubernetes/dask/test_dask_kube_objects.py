"""The Dask cluster's Kubernetes objects, built alone (either shape: the scheduler's Job and the workers',
or one Indexed Job as one Kueue workload): core objects strictly schema-valid (kubernetes-validate), the operator's custom resources checked against the dask-kubernetes CRD's
fields, written down below from its published schema."""

from __future__ import annotations

import pytest
from dask_kube_helpers import CLUSTER_ID, NS, make_spec, placement, settings

from jupyter_gpu_env.backends.kubernetes import checks
from jupyter_gpu_env.backends.kubernetes import objects as k8s
from jupyter_gpu_env.backends.kubernetes.dask import objects, workload

kubernetes_validate = pytest.importorskip("kubernetes_validate")

K8S_VERSIONS = ("1.29.0", "1.37.0")

# dask-kubernetes' CRDs (dask_kubernetes/operator/customresources/templates.yaml, daskcluster.yaml, as
# published in 2025.7): DaskCluster.spec has these fields, scheduler {metadata, spec: PodSpec, service:
# ServiceSpec} with spec and service required, worker {replicas, metadata, spec: PodSpec} with spec
# required; metadata is {labels, annotations} (SimpleObjectMeta).
DASKCLUSTER_SPEC = {"idleTimeout": int, "scheduler": dict, "worker": dict}
SCHEDULER_FIELDS, SCHEDULER_REQUIRED = {"metadata", "spec", "service"}, {"spec", "service"}
WORKER_FIELDS, WORKER_REQUIRED = {"replicas", "metadata", "spec"}, {"spec"}
SIMPLE_META = {"labels", "annotations"}


def validate(body: dict) -> None:
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(body, version, strict=True)


def as_core(kind: str, api_version: str, spec: dict, template: bool) -> dict:
    """A Pod or Service around a PodSpec or ServiceSpec of a custom resource, for strict validation."""
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec}


MATRIX = [
    placement(),
    placement(cpus=None, memory_bytes=None),
    placement(gpus=2, cpus=8, memory_bytes=64 << 30),
    placement(mig_profile="1g.10gb"),
    placement(mig_profile="1g.10gb+me", queue="team-a"),
]


@pytest.mark.parametrize("where", MATRIX)
def test_without_the_operator_every_object_is_valid_and_labelled(tmp_path, where):
    spec = make_spec(tmp_path)
    s = settings(
        tmp_path, local_queue="default-q", gpu_tolerations=({"key": "nvidia.com/gpu", "operator": "Exists"},)
    )
    job = k8s.as_dict(objects.scheduler_job(spec, where, s, account="dask-keeper", walltime_seconds=86400))
    worker = k8s.as_dict(objects.worker_job(spec, where, s))
    service = k8s.as_dict(objects.scheduler_service(spec, s, owner={"metadata": {"uid": "u-1"}}))
    for body in (job, worker, service):
        validate(body)
        labels = body["metadata"]["labels"]
        assert labels[objects.CLUSTER_LABEL] == CLUSTER_ID and labels[k8s.USER_LABEL] == "alice"
        assert len(body["metadata"]["name"]) <= 63 and body["metadata"]["namespace"] == NS
    for body in (job, worker):
        assert checks.problems(body) == []
        assert body["metadata"]["labels"][k8s.QUEUE_LABEL] == (where.queue or "default-q")
        pod = body["spec"]["template"]["spec"]
        assert pod["restartPolicy"] == "Never" and body["spec"]["backoffLimit"] == 0
        assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "claim-alice"
    scheduler_pod = job["spec"]["template"]["spec"]
    argv = scheduler_pod["containers"][0]["command"]
    assert argv[:3] == [spec.python, "-m", "gpuenv_dask.scheduler"]  # TLS on both ports, the keeper in it
    assert argv[argv.index("--port") + 1] == "8786" and argv[argv.index("--dashboard-address") + 1] == ":8787"
    assert argv[argv.index("--scheduler-file") + 1] == f"{spec.folder}/scheduler.json"
    env = {e["name"]: e["value"] for e in scheduler_pod["containers"][0]["env"]}
    assert env["PYTHONPATH"] == spec.folder and env["GPU_ENV_DASK_FOLDER"] == spec.folder
    assert env["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] == "True"  # for the workers it starts too
    assert env["NVIDIA_VISIBLE_DEVICES"] == "void"  # the scheduler holds no GPU
    assert (
        scheduler_pod["serviceAccountName"] == "dask-keeper" and scheduler_pod["automountServiceAccountToken"]
    )
    assert job["spec"]["activeDeadlineSeconds"] == 86400
    worker_pod = worker["spec"]["template"]["spec"]
    assert worker_pod["containers"][0]["command"] == [spec.python, *spec.worker_args]
    assert worker_pod["automountServiceAccountToken"] is False and "serviceAccountName" not in worker_pod
    assert worker["spec"]["activeDeadlineSeconds"] == spec.walltime_seconds  # the lifetime retires it before
    limits = worker_pod["containers"][0]["resources"]["limits"]
    if where.mig_profile:
        assert limits[k8s.mig_resource(where.mig_profile)] == "1" and "nvidia.com/gpu" not in limits
        assert worker_pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    elif where.gpus:
        assert limits["nvidia.com/gpu"] == str(where.gpus)
    else:
        assert "NVIDIA_VISIBLE_DEVICES" in {e["name"] for e in worker_pod["containers"][0]["env"]}
        assert "tolerations" not in worker_pod
    assert service["spec"]["selector"] == {
        objects.CLUSTER_LABEL: CLUSTER_ID,
        k8s.COMPONENT_KEY: objects.SCHEDULER,
    }
    assert (
        job["spec"]["template"]["metadata"]["labels"][k8s.COMPONENT_KEY] == objects.SCHEDULER
    )  # what it selects
    assert {p["port"] for p in service["spec"]["ports"]} == {8786, 8787}
    assert service["metadata"]["ownerReferences"][0]["uid"] == "u-1"


@pytest.mark.parametrize("where", MATRIX)
def test_with_the_operator_the_daskcluster_fits_its_crd(tmp_path, where):
    spec = make_spec(tmp_path)
    body = objects.dask_cluster(spec, where, settings(tmp_path), account="dask-keeper")
    assert body["apiVersion"] == "kubernetes.dask.org/v1" and body["kind"] == "DaskCluster"
    assert set(body["spec"]) <= set(DASKCLUSTER_SPEC)
    for key, kind in DASKCLUSTER_SPEC.items():
        assert isinstance(body["spec"][key], kind)
    scheduler, worker = body["spec"]["scheduler"], body["spec"]["worker"]
    assert SCHEDULER_REQUIRED <= set(scheduler) <= SCHEDULER_FIELDS
    assert WORKER_REQUIRED <= set(worker) <= WORKER_FIELDS
    assert set(scheduler["metadata"]) <= SIMPLE_META and set(worker["metadata"]) <= SIMPLE_META
    # the PodSpecs and the ServiceSpec, strictly, as a Pod and a Service
    validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "s"}, "spec": scheduler["spec"]})
    validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": worker["spec"]})
    validate({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": scheduler["service"]})
    validate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": body["metadata"]})  # its ObjectMeta
    # Deployments restart their pods: no restartPolicy Never
    assert "restartPolicy" not in scheduler["spec"] and "restartPolicy" not in worker["spec"]
    assert worker["replicas"] == 0  # the keeper asks for its workers
    args = worker["spec"]["containers"][0]["command"]
    assert args[-2:] == ["--name", "$(DASK_WORKER_NAME)"]
    assert scheduler["service"]["selector"] == {
        "dask.org/cluster-name": body["metadata"]["name"],
        "dask.org/component": "scheduler",
    }
    argv = scheduler["spec"]["containers"][0]["command"]
    # the operator deletes an idle cluster; the scheduler's own timeout is later (its Deployment would restart it)
    assert body["spec"]["idleTimeout"] == 1800
    assert argv[argv.index("--idle-timeout") + 1] == f"{1800 + objects.IDLE_MARGIN}s"
    assert scheduler["metadata"]["labels"][objects.CLUSTER_LABEL] == CLUSTER_ID
    assert worker["metadata"]["labels"][k8s.COMPONENT_KEY] == objects.WORKER
    name = body["metadata"]["name"]
    assert len(f"{objects.worker_group_name(name)}-worker-0123456789") <= 63  # the operator's Deployments


def test_names_are_short_valid_and_unique_by_id(tmp_path):
    for name in ("My analysis", "x" * 200, "ÆØÅ — 💥", "-", "Dask.Cluster_v2"):
        spec = make_spec(tmp_path, name=name)
        base = objects.cluster_name(spec)
        assert len(base) <= objects.MAX_NAME and base.endswith(CLUSTER_ID) and base.startswith("dask-")
        assert k8s.DNS1123_LABEL_RE.fullmatch(base)
        assert k8s.DNS1123_LABEL_RE.fullmatch(objects.worker_job_name(base, 99999))
    assert objects.cluster_name(make_spec(tmp_path, name="My analysis")) == "dask-my-analysis-0123456789ab"


def test_selectors_find_one_cluster_or_all_and_bad_inputs_are_refused(tmp_path):
    s = settings(tmp_path)
    assert objects.selector(s, CLUSTER_ID, objects.WORKER) == (
        "app.kubernetes.io/managed-by=jupyter-gpu-env,jupyter-gpu-env/user=alice,"
        f"jupyter-gpu-env/dask-cluster={CLUSTER_ID},app.kubernetes.io/component=dask-worker"
    )
    assert objects.selector(s).endswith(",jupyter-gpu-env/dask-cluster")
    with pytest.raises(ValueError, match="LocalQueue"):
        objects.worker_job(make_spec(tmp_path), placement(queue="Not_A_Queue"), s)
    with pytest.raises(ValueError, match="packed image"):
        objects.worker_job(make_spec(tmp_path, python=None), placement(), s)


def test_one_workload_is_an_indexed_job_whose_pod_zero_is_the_scheduler(tmp_path):
    spec = make_spec(tmp_path, together=2)
    s = settings(tmp_path, local_queue="default-q")
    job = k8s.as_dict(workload.allocation_job(spec, placement(), s, account="dask-keeper"))
    service = k8s.as_dict(workload.allocation_service(spec, s, owner={"metadata": {"uid": "u-1"}}))
    for body in (job, service):
        validate(body)  # backoffLimitPerIndex and the Indexed mode as Kubernetes 1.29 and later know them
    assert checks.problems(job) == []
    name = "dask-my-analysis-0123456789ab"  # the scheduler Job's name in the other shape
    assert job["metadata"]["name"] == name and job["metadata"]["labels"][k8s.QUEUE_LABEL] == "default-q"
    # one Kueue workload of three pods, admitted together, ended together at the cluster's walltime
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 3
    assert job["spec"]["backoffLimitPerIndex"] == 0 and "backoffLimit" not in job["spec"]
    assert job["spec"]["activeDeadlineSeconds"] == spec.walltime_seconds
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and pod["serviceAccountName"] == "dask-keeper"
    container = pod["containers"][0]
    assert {p["name"] for p in container["ports"]} == {"tcp-comm", "http-dashboard"}
    assert container["resources"]["requests"] == {"cpu": "2", "memory": "4Gi"}  # a worker's, each pod
    sh, flag, script = container["command"]
    assert (sh, flag) == ("/bin/sh", "-c")
    first, second = script.splitlines()
    assert (
        first.startswith('if [ "$JOB_COMPLETION_INDEX" = 0 ]; then exec ')
        and "gpuenv_dask.scheduler" in first
    )
    assert "--port 8786" in first and first.endswith("; fi")
    assert second.startswith(f"exec {spec.python} -m distributed.cli.dask_worker")
    assert "--no-nanny" in second and "--lifetime" not in second and "--tls-key" in second
    assert second.endswith(f'--name "{name}-$JOB_COMPLETION_INDEX"')
    # the Service reaches pod 0 alone
    assert service["spec"]["selector"] == {
        objects.CLUSTER_LABEL: CLUSTER_ID,
        k8s.COMPONENT_KEY: objects.SCHEDULER,
        workload.INDEX_LABEL: "0",
    }
    with pytest.raises(ValueError, match="GPU"):
        workload.allocation_job(spec, placement(gpus=1), s, account="dask-keeper")
    with pytest.raises(ValueError):
        workload.allocation_job(make_spec(tmp_path), placement(), s, account="dask-keeper")
