"""GPUs and MIG slices: what the backend reads of the node (through the guide's ClusterRole), and a GPU
job and a MIG job admitted by Kueue against the ClusterQueue's quota and scheduled by their extended
resources onto the node, which runs them."""

from __future__ import annotations

import asyncio

from helpers import ended, wait_for_job

from jupyter_gpu_env.backends.kubernetes import objects

from .cluster import NODE


async def test_the_backend_offers_what_the_node_has(real):
    backend = real.backend()
    await backend.refresh_cluster()
    info = backend.info()
    assert info.mig_profiles == ["1g.10gb"] and info.limits.max_gpus == 2 and info.supports_gpus
    assert [p.name for p in info.priorities] == ["normal", "opportunistic"]
    assert not [n for n in info.notes if "could not be read" in n], info.notes


async def test_a_gpu_job_and_a_mig_job_run_on_the_node_by_their_resources(real):
    code = [
        "import os",
        "print('job', os.environ['JUPYTER_GPU_ENV_JOB_ID'], os.environ.get('NVIDIA_VISIBLE_DEVICES'))",
    ]
    nb = real.notebook("gpu.ipynb", code)
    svc = real.service()
    gpu = await svc.submit({"notebook_path": nb, "backend": "kubernetes", "resources": {"gpus": 2}})
    mig = await svc.submit(
        {"notebook_path": nb, "backend": "kubernetes", "resources": {"mig_profile": "1g.10gb"}}
    )
    gpu, mig = await asyncio.gather(
        wait_for_job(svc, gpu.id, ended, within=240, every=1),
        wait_for_job(svc, mig.id, ended, within=240, every=1),
    )
    assert (gpu.state, mig.state) == ("succeeded", "succeeded"), (gpu.message, mig.message)
    wanted = {gpu.id: {"nvidia.com/gpu": "2"}, mig.id: {"nvidia.com/mig-1g.10gb": "1"}}
    for job in (gpu, mig):
        pod = real.pod_of(objects.job_name(job))
        assert pod["spec"]["nodeName"] == NODE and pod["status"]["phase"] == "Succeeded"
        resources = pod["spec"]["containers"][0]["resources"]
        for key, value in wanted[job.id].items():
            assert resources["limits"][key] == resources["requests"][key] == value
        assert not {"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"} - set(wanted[job.id]) & set(
            resources["limits"]
        )
        # Kueue's flavor put its node label on the pod: scheduled through the ResourceFlavor
        assert pod["spec"].get("nodeSelector", {}).get("gpu-env.test/node") == "real"
        (workload,) = [w for w in real.workloads()
                       if w["metadata"]["labels"].get("kueue.x-k8s.io/job-uid") == pod["metadata"]["labels"].get(
                           "batch.kubernetes.io/controller-uid")]  # fmt: skip
        admitted = workload["status"]["admission"]["podSetAssignments"][0]
        assert set(wanted[job.id]) <= set(admitted["flavors"]) and admitted["flavors"]["cpu"] == "h200"
