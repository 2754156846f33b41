"""Claims: one operation at a time per environment, on the environment as it is once claimed."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.errors import NotFound


async def test_a_claim_is_on_the_environment_as_it_is_once_claimed(service):
    """A request reads where the environment is, then claims it: if another operation deleted it
    meanwhile, the claim says so (404) instead of handing a vanished environment to the operation (whose
    delete then failed with a 500, whose undo or change failed later as a task)."""
    await service.clone("demo", "fleeting")
    read_before = await service.resolve("fleeting")
    await service.delete("fleeting")
    for claim in (service.changing(read_before, "deleted"), service.changing(read_before)):
        with pytest.raises(NotFound, match="'fleeting'") as e:
            await claim
        assert e.value.reason == "env_not_found"
    assert not service.busy("fleeting")
