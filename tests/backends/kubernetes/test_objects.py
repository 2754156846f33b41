"""Every Job the backend can build: schema-valid (kubernetes-validate, strict, pinned versions) and
passing the project's own checks, over a matrix of requests and configurations."""

from __future__ import annotations

import itertools
import json
import time

import pytest
from helpers import job_record
from kubernetes.utils import parse_quantity

from jupyter_gpu_env.backends.kubernetes import checks, objects
from jupyter_gpu_env.models.jobs import Job
from jupyter_gpu_env.models.resources import Resources

kubernetes_validate = pytest.importorskip("kubernetes_validate")
pytestmark = pytest.mark.usefixtures("schemas_read_once")

# The oldest Kubernetes the backend claims (Kueue's floor; Job status.ready is GA) and the newest
# the pinned kubernetes-validate (1.37.0) ships schemas for.
K8S_VERSIONS = ("1.29.0", "1.37.0")

# Real profiles: A100-40GB, A100-80GB, H100-80GB and H200-141GB, with a media-extension one.
MIG_PROFILES = [
    "1g.5gb",
    "2g.10gb",
    "3g.20gb",
    "7g.40gb",
    "1g.10gb",
    "1g.20gb",
    "3g.40gb",
    "4g.40gb",
    "7g.80gb",
    "1g.10gb+me",
    "1g.18gb",
    "2g.35gb",
    "7g.141gb",
]

REQUESTS = [
    {},
    {"cpus": 2},
    {"cpus": 64, "memory": "512G"},
    {"memory": "1.5G"},
    {"memory": 3 * 1024 * 1024 + 1024},
    {"gpus": 0},
    {"gpus": 1, "cpus": 8, "memory": "64G"},
    {"gpus": 8},
    {"time_limit": 1},
    {"time_limit": "30-00:00:00", "gpus": 2},
    *({"mig_profile": p} for p in MIG_PROFILES),
    {"mig_profile": "3g.40gb", "cpus": 4, "memory": "32G", "time_limit": "2:00:00"},
]

CONFIGS = {
    "bare": {},
    "volumes": dict(
        volumes=(
            {"name": "home", "persistentVolumeClaim": {"claimName": "claim-alice"}},
            {"name": "shared", "nfs": {"server": "10.0.0.2", "path": "/export/jobs", "readOnly": False}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "10Gi"}},
            {"name": "envs", "hostPath": {"path": "/opt/conda/envs", "type": "Directory"}},
        ),
        volume_mounts=(
            {"name": "home", "mountPath": "/home/jovyan"},
            {"name": "shared", "mountPath": "/shared/jobs"},
            {"name": "scratch", "mountPath": "/scratch"},
            {"name": "envs", "mountPath": "/opt/conda/envs", "readOnly": True},
        ),
    ),
    "everything": dict(
        local_queue="team-default",
        node_selector={"nvidia.com/gpu.present": "true", "topology.kubernetes.io/zone": "eu-west-1a"},
        tolerations=({"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"},),
        gpu_tolerations=({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},),
        service_account="gpu-jobs",
        env={"HF_HOME": "/scratch/hf", "TZ": "UTC"},
        labels={"team": "vision", "example.com/cost-center": "1234"},
        annotations={"example.com/owner": "Alice <alice@example.com>"},
        pod_security_context={
            "runAsNonRoot": True,
            "fsGroup": 100,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        container_security_context={"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        run_as_user=1000,
        run_as_group=100,
        priority_class_name="batch-low",
        ttl_seconds_after_finished=600,
        cpu_limit=False,
        image_pull_policy="Always",
        python="/opt/conda/bin/python",
    ),
    "no-defaults": dict(default_cpus=None, default_memory_bytes=None, ttl_seconds_after_finished=None),
}

NAMES = ["analysis", "Ünïcödé notebook – final (v2).ipynb", "x" * 200, "---", "a.b_c d"]
USERS = ["alice", "Alice.Smith@example.com", "u" * 100, "_svc-"]


def make_job(
    resources: dict, *, name: str = "analysis", queue: str | None = None, job_id: str | None = None
) -> Job:
    return job_record(
        job_id or "3f2a9c0d1e4b", "jobs/analysis-3f2a9c0d1e4b", name=name, backend="kubernetes",
        notebook_path="work/analysis.ipynb", resources=Resources(**resources).normalized(), queue=queue,
        created_at=time.time(),
    )  # fmt: skip


def settings(config: str, user: str = "alice") -> objects.K8sSettings:
    return objects.K8sSettings(
        image="quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27",
        namespace="jhub",
        user=user,
        **CONFIGS[config],
    )


def container(d: dict) -> dict:
    return d["spec"]["template"]["spec"]["containers"][0]


def check_job(d: dict, job: Job, s: objects.K8sSettings) -> None:
    """Schema (strict, each pinned version), the project's checks, and what this request implies."""
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(d, version, strict=True)
    assert checks.problems(d) == []
    res = job.resources
    c = container(d)
    requests, limits = c["resources"].get("requests", {}), c["resources"].get("limits", {})
    gpu_keys = {k for k in {**requests, **limits} if k.startswith("nvidia.com/")}
    if res.mig_profile:
        assert gpu_keys == {objects.mig_resource(res.mig_profile)}
        assert (
            requests[objects.mig_resource(res.mig_profile)]
            == limits[objects.mig_resource(res.mig_profile)]
            == "1"
        )
        assert "+" not in objects.mig_resource(res.mig_profile)
    elif res.gpus:
        assert gpu_keys == {"nvidia.com/gpu"} and requests["nvidia.com/gpu"] == limits[
            "nvidia.com/gpu"
        ] == str(res.gpus)
    else:
        assert gpu_keys == set()
        assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"} in c["env"]
    if res.memory_bytes:
        assert parse_quantity(requests["memory"]) == parse_quantity(limits["memory"]) == res.memory_bytes
    if res.cpus:
        assert parse_quantity(requests["cpu"]) == res.cpus
        assert {"name": "OMP_NUM_THREADS", "value": str(res.cpus)} in c["env"]
    spec = d["spec"]
    assert spec["backoffLimit"] == 0 and d["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "suspend" not in spec
    if res.time_limit_seconds:
        assert spec["activeDeadlineSeconds"] == res.time_limit_seconds + s.time_limit_grace
    else:
        assert "activeDeadlineSeconds" not in spec
    queue = job.queue or s.local_queue
    labels = d["metadata"]["labels"]
    assert (objects.QUEUE_LABEL in labels) == bool(queue)
    if queue:
        assert labels[objects.QUEUE_LABEL] == queue
    assert objects.QUEUE_LABEL not in d["spec"]["template"]["metadata"]["labels"]
    for where in (labels, d["spec"]["template"]["metadata"]["labels"]):
        assert where[objects.JOB_ID_LABEL] == job.id and where[objects.MANAGED_BY_KEY] == objects.MANAGED_BY
        assert where[objects.USER_LABEL] == objects.label_value(s.user)
    assert d["metadata"]["annotations"][objects.USER_ANNOTATION] == s.user
    assert c["command"][:2] == ["/bin/sh", "-c"] and c["command"][-2:] == ["/home/jovyan/jobs/x", s.python]
    assert c["image"] == s.image


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_every_request_builds_a_valid_job(config):
    s = settings(config)
    for resources in REQUESTS:
        job = make_job(resources)
        check_job(objects.as_dict(objects.job_object(job, "/home/jovyan/jobs/x", s)), job, s)


def test_queues_names_and_users():
    """The job's queue overrides the default; odd names and users still give valid names and labels."""
    cases = itertools.product([None, "team-a"], ["", "default-queue"], NAMES, USERS)
    seen_names = set()
    for i, (queue, default, name, user) in enumerate(cases):
        s = objects.K8sSettings(image="img", namespace="jhub", user=user, local_queue=default)
        job = make_job({"mig_profile": "1g.10gb"}, name=name, queue=queue, job_id=f"{i:012x}")
        d = objects.as_dict(objects.job_object(job, "/home/jovyan/jobs/x", s))
        check_job(d, job, s)
        assert len(d["metadata"]["name"]) <= 56 and d["metadata"]["name"].endswith(job.id)
        seen_names.add(d["metadata"]["name"])
    assert len(seen_names) == i + 1  # unique by job id


def test_volumes_and_mounts_come_through_unchanged():
    s = settings("volumes")
    d = objects.as_dict(objects.job_object(make_job({}), "/home/jovyan/jobs/x", s))
    assert d["spec"]["template"]["spec"]["volumes"] == [dict(v) for v in CONFIGS["volumes"]["volumes"]]
    assert container(d)["volumeMounts"] == [dict(m) for m in CONFIGS["volumes"]["volume_mounts"]]


def test_gpu_tolerations_only_for_gpu_jobs_and_the_rest_of_the_configuration():
    s = settings("everything")
    cpu = objects.as_dict(objects.job_object(make_job({"cpus": 2}), "/home/jovyan/jobs/x", s))
    gpu = objects.as_dict(objects.job_object(make_job({"gpus": 1}), "/home/jovyan/jobs/x", s))
    assert [t["key"] for t in cpu["spec"]["template"]["spec"]["tolerations"]] == ["dedicated"]
    assert [t["key"] for t in gpu["spec"]["template"]["spec"]["tolerations"]] == [
        "dedicated",
        "nvidia.com/gpu",
    ]
    pod = gpu["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["nvidia.com/gpu.present"] == "true"
    assert pod["serviceAccountName"] == "gpu-jobs" and pod["automountServiceAccountToken"] is True
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "fsGroup": 100,
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsUser": 1000,
        "runAsGroup": 100,
    }
    assert pod["priorityClassName"] == "batch-low"
    c = container(gpu)
    assert "limits" in c["resources"] and "cpu" not in c["resources"]["limits"]  # cpu_limit=False
    assert {"name": "HF_HOME", "value": "/scratch/hf"} in c["env"]
    assert gpu["metadata"]["labels"]["team"] == "vision"
    assert gpu["spec"]["ttlSecondsAfterFinished"] == 600
    bare = objects.as_dict(objects.job_object(make_job({}), "/x", settings("bare")))["spec"]["template"][
        "spec"
    ]
    assert bare["automountServiceAccountToken"] is False and "serviceAccountName" not in bare


def test_quantities_are_exact_and_readable():
    assert objects.quantity(4 << 30) == "4Gi"
    assert objects.quantity(1536 << 20) == "1536Mi"
    assert objects.quantity(3 * 1024 * 1024 + 1024) == "3073Ki"
    assert objects.quantity(1000) == "1000"
    for n in (1, 1023, 1 << 20, 5 << 40, 123456789):
        assert parse_quantity(objects.quantity(n)) == n


def test_mig_resource_names_follow_the_device_plugin():
    assert objects.mig_resource("1g.10gb") == "nvidia.com/mig-1g.10gb"
    assert objects.mig_resource("1g.10gb+me") == "nvidia.com/mig-1g.10gb.me"
    assert objects.profile_of_resource("nvidia.com/mig-1g.10gb.me") == "1g.10gb+me"
    assert objects.profile_of_resource("nvidia.com/mig-3g.40gb") == "3g.40gb"
    assert objects.profile_of_resource("nvidia.com/gpu") is None
    for p in MIG_PROFILES:
        assert objects.profile_of_resource(objects.mig_resource(p)) == p


def test_the_checks_catch_what_the_schema_lets_through():
    """A schema-valid Job the project must still refuse: each mutation is caught by problems()."""
    s = settings("bare")
    good = objects.as_dict(objects.job_object(make_job({"mig_profile": "1g.10gb"}), "/x", s))

    def mutate(fn) -> list[str]:
        d = json.loads(json.dumps(good))
        fn(d)
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(d, version, strict=True)  # the schema is fine with it...
        return checks.problems(d)  # ...the project is not

    c = lambda d: container(d)  # noqa: E731
    assert "requests (1) must equal limits (2)" in " ".join(
        mutate(lambda d: c(d)["resources"]["limits"].update({"nvidia.com/mig-1g.10gb": "2"}))
    )
    assert "both nvidia.com/gpu" in " ".join(
        mutate(
            lambda d: [c(d)["resources"][k].update({"nvidia.com/gpu": "1"}) for k in ("requests", "limits")]
        )
    )
    assert "restartPolicy" in " ".join(
        mutate(lambda d: d["spec"]["template"]["spec"].update(restartPolicy="Always"))
    )
    assert "backoffLimit" in " ".join(mutate(lambda d: d["spec"].update(backoffLimit=6)))
    assert "suspend" in " ".join(mutate(lambda d: d["spec"].update(suspend=True)))
    assert "DNS-1123" in " ".join(mutate(lambda d: d["metadata"].update(name="Nb_Upper")))
    assert "invalid value" in " ".join(mutate(lambda d: d["metadata"]["labels"].update({"x": "a b"})))
    assert "not a quantity" in " ".join(mutate(lambda d: c(d)["resources"]["requests"].update(memory="4GB")))
    assert "whole numbers" in " ".join(
        mutate(
            lambda d: [
                c(d)["resources"][k].update({"nvidia.com/mig-1g.10gb": "500m"})
                for k in ("requests", "limits")
            ]
        )
    )
    assert "exceeds limit" in " ".join(mutate(lambda d: c(d)["resources"]["requests"].update(memory="8Gi")))
    assert "several MIG" in " ".join(
        mutate(
            lambda d: [
                c(d)["resources"][k].update({"nvidia.com/mig-2g.20gb": "1"}) for k in ("requests", "limits")
            ]
        )
    )


def test_strict_schema_validation_is_really_strict():
    d = objects.as_dict(objects.job_object(make_job({}), "/x", settings("bare")))
    container(d)["imagePullPolice"] = "Always"  # a typo the API server would drop (or refuse)
    with pytest.raises(kubernetes_validate.ValidationError, match="imagePullPolice"):
        kubernetes_validate.validate(d, K8S_VERSIONS[0], strict=True)


def test_bad_configuration_is_named():
    s = objects.K8sSettings(
        image="",
        namespace="Bad_NS",
        volumes=({"name": "home", "persistentvolumeclaim": {"claimName": "x"}}, {"emptyDir": {}}),
        volume_mounts=({"name": "nope", "mountPath": "/x"},),
        tolerations=({"key": "a", "operator": "Exists", "effects": "NoSchedule"},),
        labels={"bad key!": "v"},
        env={"1BAD": "x"},
        image_pull_policy="Sometimes",
        local_queue="Team A",
    )
    errors = " | ".join(checks.check_settings(s))
    for expected in (
        "volumes[0] has keys a Volume does not have: persistentvolumeclaim",
        "volumes[1] is not a valid Volume",
        "volume_mounts names volume 'nope'",
        "tolerations[0] has keys a Toleration does not have: effects",
        "no image",
        "namespace 'Bad_NS'",
        "'bad key!: v' is not a valid label",
        "'1BAD' is not a valid environment variable",
        "image_pull_policy",
        "local_queue 'Team A'",
    ):
        assert expected in errors, (expected, errors)
    assert (
        checks.check_settings(settings("everything")) == []
        and checks.check_settings(settings("volumes")) == []
    )
