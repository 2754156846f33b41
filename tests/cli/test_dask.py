"""`jupyter gpu-env dask start|list|scale|stop` on the real local backend: real schedulers and workers."""

from __future__ import annotations

import json

import pytest
from helpers import run_cli


@pytest.fixture
def cli(batch_terminal):
    return batch_terminal(DaskClusters={"idle_timeout": 600})


def test_a_cluster_is_started_listed_scaled_and_stopped_from_a_terminal(cli, capsys):
    code, out, err = run_cli(
        capsys, "dask", "start", "--kernel", "python3", "-n", "1", "--name", "t", "--wait"
    )
    assert code == 0, err
    cluster_id = out.splitlines()[0]
    assert "running: 1/1 workers" in err
    assert "scheduler  tls://127.0.0.1:" in out and f"/gpu-env/dask/{cluster_id}/status" in out
    # the client code it prints runs as printed, in this Python (which has this package)
    code_lines = out.split("  client\n", 1)[1].split("  dashboard", 1)[0]
    client_code = "\n".join(line.removeprefix("    ") for line in code_lines.splitlines())
    assert f"client = connect('{cluster_id}')" in client_code
    scope: dict[str, object] = {}
    exec(client_code, scope)  # the code the command printed is what is tested
    client = scope["client"]
    try:
        assert client.submit(sum, range(10)).result(timeout=30) == 45  # type: ignore[attr-defined]
    finally:
        client.close()  # type: ignore[attr-defined]

    code, out, _ = run_cli(capsys, "dask", "list")
    assert code == 0 and cluster_id in out and "running" in out and "1/1" in out

    code, out, err = run_cli(capsys, "dask", "scale", cluster_id, "2", "--json")
    assert code == 0, err
    assert json.loads(out)["workers"]["requested"] in (1, 2)  # the keeper reads scale.json within seconds

    code, out, err = run_cli(capsys, "dask", "scale", cluster_id)
    assert code == 2 and "--adapt MIN:MAX" in err

    code, out, err = run_cli(capsys, "dask", "cancel", cluster_id)
    assert code == 0, err
    assert f"{cluster_id}  t on local: stopped (Shut down.)" in out


def test_start_says_what_is_missing(cli, capsys):
    code, _, err = run_cli(capsys, "dask", "start", "-n", "1")
    assert code == 2 and "--env E, --kernel K or --image I" in err
    code, _, err = run_cli(capsys, "dask", "start", "--kernel", "python3", "-n", "1", "--adapt", "0:2")
    assert code == 2 and "not both" in err
    code, _, err = run_cli(capsys, "dask", "start", "--env", "nowhere")
    assert code == 1 and "Unknown environment 'nowhere'" in err
