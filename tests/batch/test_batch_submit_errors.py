"""Every bad submission is refused with a clear message, and leaves no record and no folder."""

from __future__ import annotations

import nbformat
import pytest
from pydantic import ValidationError

from jupyter_gpu_env.errors import Conflict, InvalidRequest
from jupyter_gpu_env.models.jobs import JobRequest


def _setup(batch):
    batch.notebook("nb.ipynb", ["print(alpha)"], parameters="alpha = 1")
    batch.notebook("plain.ipynb", ["print(1)"])
    batch.notebook("ghost.ipynb", ["print(1)"], kernel="no-such-kernel")
    (batch.root / "data.txt").write_text("not a notebook")
    (batch.root / "broken.ipynb").write_text("{ this is not json")
    outside = batch.root.parent / "outside.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), outside)
    (batch.root / "link.ipynb").symlink_to(outside)
    return outside


BAD = [
    ({"notebook_path": "missing.ipynb"}, "no notebook at"),
    ({"notebook_path": "data.txt"}, "not a notebook"),
    ({"notebook_path": "broken.ipynb"}, "not a readable notebook"),
    ({"notebook_path": "../outside.ipynb"}, "outside the server's root"),
    ({"notebook_path": "link.ipynb"}, "outside the server's root"),
    ({"notebook_path": "nb.ipynb", "backend": "slurm"}, "Unknown backend 'slurm'"),
    ({"notebook_path": "nb.ipynb", "kernel": "nope"}, "Kernel 'nope' is not installed"),
    ({"notebook_path": "ghost.ipynb"}, "notebook's kernel 'no-such-kernel'"),
    ({"notebook_path": "nb.ipynb", "environment": "nope"}, "Unknown environment 'nope'"),
    ({"notebook_path": "nb.ipynb", "image": "nope"}, "Unknown image 'nope'"),
    ({"notebook_path": "nb.ipynb", "parameters": {"beta": 2}}, "declares alpha"),
    ({"notebook_path": "plain.ipynb", "parameters": {"alpha": 2}}, "no cell is tagged `parameters`"),
    ({"notebook_path": "nb.ipynb", "kernel": "python3", "environment": "x"}, "at most one of kernel"),
    ({"notebook_path": "nb.ipynb", "resources": {"cpus": -1}}, "cpus must be a whole number from 1"),
    ({"notebook_path": "nb.ipynb", "resources": {"cpus": 5000}}, "cpus must be a whole number from 1"),
    ({"notebook_path": "nb.ipynb", "resources": {"cpus": 1000}}, "offers at most"),
    ({"notebook_path": "nb.ipynb", "resources": {"gpus": -1}}, "gpus must be a whole number from 0"),
    ({"notebook_path": "nb.ipynb", "resources": {"gpus": 65}}, "gpus must be a whole number from 0"),
    ({"notebook_path": "nb.ipynb", "resources": {"memory": "100T"}}, "at most 16T"),
    ({"notebook_path": "nb.ipynb", "resources": {"memory": -5}}, "at least 1M"),
    ({"notebook_path": "nb.ipynb", "resources": {"memory": "lots"}}, "not understood"),
    ({"notebook_path": "nb.ipynb", "resources": {"time_limit": "31-00:00:00"}}, "at most 30 days"),
    ({"notebook_path": "nb.ipynb", "resources": {"time_limit": -1}}, "must be positive"),
    ({"notebook_path": "nb.ipynb", "resources": {"gpus": 1, "mig_profile": "1g.10gb"}}, "not both"),
    ({"notebook_path": "nb.ipynb", "resources": {"mig_profile": "huge"}}, "not a MIG profile"),
    ({"notebook_path": "nb.ipynb", "resources": {"mig_profile": "1g.10gb"}}, "not offered"),
    ({"notebook_path": "nb.ipynb", "queue": "gpu"}, "Queue 'gpu' is not offered"),
    ({"notebook_path": "nb.ipynb", "colour": "red"}, "colour"),
]


@pytest.mark.parametrize(("body", "message"), BAD, ids=[m for _, m in BAD])
async def test_bad_submission_is_refused_and_leaves_nothing(batch, body, message):
    outside = _setup(batch)
    svc = batch.service()
    try:
        with pytest.raises(InvalidRequest) as err:
            await svc.submit(body)
        assert message in err.value.message, err.value.message
        assert await svc.store.count() == 0
        assert batch.job_folders() == []
        assert outside.exists()
    finally:
        await svc.stop()


async def test_an_absolute_path_outside_the_root_is_refused(batch):
    outside = _setup(batch)
    svc = batch.service()
    try:
        with pytest.raises(InvalidRequest, match="outside the server's root"):
            await svc.submit({"notebook_path": str(outside)})
        # Inside the root, an absolute path is fine (it is the same file).
        ok = await svc.submit({"notebook_path": str(batch.root / "plain.ipynb")})
        assert ok.notebook_path == "plain.ipynb"
        await batch.wait_for(svc, ok.id, batch.ended)
    finally:
        await svc.stop()


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
    with pytest.raises(ValidationError, match="at most 16T"):
        JobRequest.model_validate({"notebook_path": "a.ipynb", "resources": {"memory": 17 << 40}})
