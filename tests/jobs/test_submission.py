"""Every bad submission is refused with a clear message and the right status, and leaves no record and no
folder: 400 for a malformed request, 404 for what does not exist, 403 outside the root, 409 for what the
notebook or the backend cannot take, 413 beyond the size limits."""

from __future__ import annotations

import nbformat
import pytest
from pydantic import ValidationError

from jupyter_gpu_env.errors import Conflict, Forbidden, InvalidRequest, NotFound, TooLarge
from jupyter_gpu_env.models.jobs import JobRequest


def _setup(batch):
    batch.notebook(
        "nb.ipynb", ["print(alpha)"], parameters="alpha = 1\nrate = 0.5\nname = 'adam'\nflag = True"
    )
    batch.notebook("plain.ipynb", ["print(1)"])
    batch.notebook("ghost.ipynb", ["print(1)"], kernel="no-such-kernel")
    odd = nbformat.v4.new_notebook()
    odd.metadata["kernelspec"] = ["python3"]
    nbformat.write(odd, batch.root / "odd.ipynb")
    odd.metadata["kernelspec"] = {"name": 3, "display_name": "x"}
    nbformat.write(odd, batch.root / "odd2.ipynb")
    (batch.root / "data.txt").write_text("not a notebook")
    (batch.root / "broken.ipynb").write_text("{ this is not json")
    outside = batch.root.parent / "outside.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), outside)
    (batch.root / "link.ipynb").symlink_to(outside)
    return outside


NB = {"notebook_path": "nb.ipynb"}
BAD = [
    ({"notebook_path": "missing.ipynb"}, NotFound, "no notebook at"),
    ({"notebook_path": "data.txt"}, InvalidRequest, "it must be a notebook"),
    ({"notebook_path": "broken.ipynb"}, Conflict, "not a readable notebook"),
    ({"notebook_path": "odd.ipynb"}, Conflict, "metadata.kernelspec is not an object"),
    ({"notebook_path": "odd2.ipynb"}, Conflict, "with something other than text"),
    ({"notebook_path": "x" * 300 + ".ipynb"}, NotFound, "a file or folder name may have at most 255"),
    ({"notebook_path": "a\x00b.ipynb"}, InvalidRequest, "NUL"),
    ({"notebook_path": "../outside.ipynb"}, Forbidden, "outside the server's root"),
    ({"notebook_path": "link.ipynb"}, Forbidden, "outside the server's root"),
    ({**NB, "backend": "slurm"}, NotFound, "Unknown backend 'slurm'"),
    ({**NB, "kernel": "nope"}, NotFound, "Kernel 'nope' is not installed"),
    ({"notebook_path": "ghost.ipynb"}, NotFound, "notebook's kernel 'no-such-kernel'"),
    ({**NB, "environment": "nope"}, NotFound, "Unknown environment 'nope'"),
    ({**NB, "image": "nope"}, NotFound, "Unknown image 'nope'"),
    ({**NB, "parameters": {"beta": 2}}, Conflict, "declares alpha, rate, name, flag"),
    (
        {"notebook_path": "plain.ipynb", "parameters": {"alpha": 2}},
        Conflict,
        "no cell is tagged `parameters`",
    ),
    ({**NB, "parameters": {"alpha": "abc"}}, Conflict, "'alpha' must be a whole number like its default 1"),
    ({**NB, "parameters": {"alpha": 1.5}}, Conflict, "'alpha' must be a whole number"),
    ({**NB, "parameters": {"alpha": True}}, Conflict, "'alpha' must be a whole number"),
    ({**NB, "parameters": {"rate": "fast"}}, Conflict, "'rate' must be a number"),
    ({**NB, "parameters": {"name": 3}}, Conflict, "'name' must be text"),
    ({**NB, "parameters": {"flag": "yes"}}, Conflict, "'flag' must be true or false"),
    ({**NB, "parameters": {"alpha": "\ud800"}}, InvalidRequest, "lone surrogate"),
    ({**NB, "parameters": {"blob": "x" * (70 << 10)}}, TooLarge, "at most 65536 are accepted"),
    ({**NB, "kernel": "python3", "environment": "x"}, InvalidRequest, "at most one of kernel"),
    ({**NB, "resources": {"cpus": -1}}, InvalidRequest, "CPUs must be a whole number from 1"),
    ({**NB, "resources": {"cpus": 5000}}, InvalidRequest, "CPUs must be a whole number from 1 to 1024"),
    ({**NB, "resources": {"cpus": "4"}}, InvalidRequest, "CPUs must be a whole number"),
    ({**NB, "resources": {"cpus": 1000}}, Conflict, "offers at most"),
    ({**NB, "resources": {"gpus": -1}}, InvalidRequest, "GPUs must be a whole number from 0 to 64"),
    ({**NB, "resources": {"gpus": 65}}, InvalidRequest, "GPUs must be a whole number from 0 to 64"),
    ({**NB, "resources": {"memory": "100000T"}}, Conflict, "offers at most"),
    ({**NB, "resources": {"memory": "9" * 400 + "G"}}, InvalidRequest, "memory is longer than 40"),
    ({**NB, "resources": {"memory": 0}}, InvalidRequest, "memory in bytes must be a whole number from 1"),
    ({**NB, "resources": {"memory": "0G"}}, InvalidRequest, "memory '0G' is not valid"),
    ({**NB, "resources": {"memory": "lots"}}, InvalidRequest, "write it like '512M'"),
    ({**NB, "resources": {"time_limit": "1:60:00"}}, InvalidRequest, "time limit '1:60:00' is not valid"),
    ({**NB, "resources": {"time_limit": -1}}, InvalidRequest, "time limit in minutes must be"),
    ({**NB, "resources": {"time_limit": "0:00"}}, InvalidRequest, "time limit '0:00' is not valid"),
    ({**NB, "resources": {"gpus": 1, "mig_profile": "1g.10gb"}}, InvalidRequest, "not both"),
    ({**NB, "resources": {"mig_profile": "huge"}}, InvalidRequest, "MIG profile 'huge' is not valid"),
    ({**NB, "resources": {"mig_profile": "1g.10gb\n"}}, InvalidRequest, "MIG profile"),
    ({**NB, "resources": {"mig_profile": "1g.10gb"}}, Conflict, "not offered"),
    ({**NB, "queue": "gpu"}, NotFound, "Queue 'gpu' is not offered"),
    ({**NB, "queue": "gpu\n#SBATCH --x"}, InvalidRequest, "queue"),
    ({**NB, "colour": "red"}, InvalidRequest, "colour"),
]


@pytest.mark.parametrize(("body", "error", "message"), BAD, ids=[m for _, _, m in BAD])
async def test_bad_submission_is_refused_and_leaves_nothing(batch, job_service, body, error, message):
    outside = _setup(batch)
    svc = job_service()
    with pytest.raises(error) as err:
        await svc.submit(body)
    assert type(err.value) is error
    assert message in err.value.message, err.value.message
    assert await svc.store.count() == 0
    assert batch.job_folders() == []
    assert outside.exists()


async def test_values_of_the_right_kind_are_accepted(batch, job_service):
    _setup(batch)
    svc = job_service()
    job = await svc.submit({**NB, "parameters": {"alpha": 2, "rate": 1, "name": "sgd", "flag": False}})
    assert job.parameters == {"alpha": 2, "rate": 1, "name": "sgd", "flag": False}
    await batch.wait_for(svc, job.id, batch.ended)


async def test_an_absolute_path_outside_the_root_is_refused(batch, job_service):
    outside = _setup(batch)
    svc = job_service()
    with pytest.raises(Forbidden, match="outside the server's root"):
        await svc.submit({"notebook_path": str(outside)})
    # Inside the root, an absolute path is fine (it is the same file).
    ok = await svc.submit({"notebook_path": str(batch.root / "plain.ipynb")})
    assert ok.notebook_path == "plain.ipynb"
    await batch.wait_for(svc, ok.id, batch.ended)


async def test_images_are_refused_honestly(batch):
    _setup(batch)
    images = {"torch": "/images/torch.sqfs"}.get
    for runtime, text in (
        (lambda: None, "neither is installed"),
        (lambda: "squashfuse", "cannot run packed images"),
    ):
        svc = batch.service(images=images, image_runtime=runtime)
        try:
            with pytest.raises(Conflict) as err:
                await svc.submit({"notebook_path": "nb.ipynb", "image": "torch"})
            assert text in err.value.message
            assert await svc.store.count() == 0 and batch.job_folders() == []
        finally:
            await svc.stop()


def test_the_request_model_itself_refuses_bad_resources():
    """The handler parses bodies with the model: the same checks give a 400 there."""
    with pytest.raises(ValidationError, match="not both"):
        JobRequest(notebook_path="a.ipynb", resources={"gpus": 0, "mig_profile": "1g.10gb"})
    with pytest.raises(
        ValidationError, match="memory in bytes must be a whole number from 1 to 9007199254740991"
    ):
        JobRequest.model_validate({"notebook_path": "a.ipynb", "resources": {"memory": 1 << 60}})
