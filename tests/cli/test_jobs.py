"""`jupyter gpu-env job run|list|show|logs|cancel|rerun` (and their older spellings) on the real local
backend (runner, papermill, python3 kernel).

The root is the batch fixture's root (the current directory of each test); the job store, the job
folders and the Jupyter folders all live under tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import printed, run_cli, wait_until_sync, write_notebook

from jupyter_gpu_env.cli import main
from jupyter_gpu_env.cli.common import parse_value


@pytest.fixture
def cli(batch_terminal):
    return batch_terminal(LocalBackend={"kill_grace": 3.0})


def listed(capsys, *argv: str) -> list[dict]:
    code, out, err = run_cli(capsys, "job", "list", "--json", *argv)
    assert code == 0, err
    return json.loads(out)["items"]


def test_parse_value_follows_papermill():
    assert parse_value("5") == 5 and parse_value("0.5") == 0.5
    assert parse_value("true") is True and parse_value("False") is False and parse_value("None") is None
    assert parse_value("[1, 2]") == [1, 2] and parse_value('{"a": 1}') == {"a": 1}
    assert parse_value("hello") == "hello" and parse_value('"5"') == "5" and parse_value("NaN") == "NaN"


def test_submit_wait_jobs_and_logs(cli, capsys):
    cli.notebook(
        "work/params.ipynb", ["print('alpha is', alpha, type(alpha).__name__)"], parameters="alpha = 1"
    )
    code, out, err = run_cli(
        capsys, "submit", "work/params.ipynb", "-p", "alpha", "5", "--name", "train", "--cpus", "1", "--wait"
    )
    assert code == 0, err
    job_id = out.strip()
    assert len(job_id) == 12 and f"Job {job_id} succeeded" in err
    # `submit` is the older spelling of `job run`: it still runs, and says so where scripts do not read
    assert "note: `jupyter gpu-env submit` is now `jupyter gpu-env job run`" in err

    [job] = listed(capsys)
    assert (job["id"], job["state"], job["parameters"]) == (job_id, "succeeded", {"alpha": 5})
    assert job["resources"]["cpus"] == 1
    assert "alpha is 5 int" in printed(cli.root / job["output_path"])

    code, out, _ = run_cli(capsys, "job", "list")
    header, row = out.splitlines()
    assert header.split() == ["ID", "NAME", "STATE", "BACKEND", "PROGRESS", "ELAPSED", "GPU", "ENERGY"]
    assert row.split()[:5] == [job_id, "train", "succeeded", "local", "3/3"]

    assert run_cli(capsys, "jobs")[1] == out  # the older spelling lists the same

    code, out, _ = run_cli(capsys, "job", "logs", job_id)
    assert code == 0 and "alpha is 5 int" in out and "job succeeded" in out
    assert out == (cli.root / job["log_path"]).read_text()

    code, out, err = run_cli(capsys, "job", "show", job_id)
    assert code == 0, err
    shown = dict(line.split(":", 1) for line in out.splitlines())
    assert shown["job"].split() == [job_id, "(train)"]
    assert shown["state"].strip() == "succeeded: All cells ran."
    assert shown["parameters"].strip() == "alpha=5" and shown["output"].strip() == job["output_path"]
    code, out, _ = run_cli(capsys, "job", "show", job_id, "--json")
    assert json.loads(out)["id"] == job_id


def test_failed_job_follow_and_wait_exit_status(cli, capsys):
    cli.notebook("fails.ipynb", ["x = 1", "1 / 0"])
    code, out, _ = run_cli(capsys, "job", "run", "fails.ipynb")
    assert code == 0
    job_id = out.strip()
    code, out, _ = run_cli(capsys, "job", "logs", job_id, "--follow")  # returns once the job has ended
    assert code == 0 and "ZeroDivisionError" in out and "job failed" in out
    assert [j["id"] for j in listed(capsys, "--state", "failed")] == [job_id]

    code, _, err = run_cli(capsys, "job", "run", "fails.ipynb", "--wait")
    assert code == 1 and "failed: " in err and "ZeroDivisionError" in err


def test_bad_submissions_exit_1_and_record_nothing(cli, capsys, tmp_path):
    cli.notebook("nb.ipynb", ["print(1)"], parameters="alpha = 1")
    outside = tmp_path / "outside.ipynb"
    outside.write_text((cli.root / "nb.ipynb").read_text())
    for argv, expected in [
        (["nb.ipynb", "-p", "beta", "1"], "beta"),
        (["nb.ipynb", "--memory", "lots"], "memory"),
        (["nb.ipynb", "--backend", "slurm"], "Unknown backend 'slurm'"),
        (["nb.ipynb", "--kernel", "no-such-kernel"], "no-such-kernel"),
        (["missing.ipynb"], "missing.ipynb"),
        ([str(outside)], "outside the root directory"),
    ]:
        code, out, err = run_cli(capsys, "job", "run", *argv)
        assert (code, out) == (1, ""), argv
        assert err.startswith("error: ") and expected in err, err
    assert main(["job", "run", "nb.ipynb", "--kernel", "python3", "--env", "x"]) == 2
    assert listed(capsys) == []


def test_cancel_a_running_job_from_another_process(cli, capsys):
    """Submitted by `jupyter gpu-env` in a process that exits at once; the job runs on, then is cancelled."""
    cli.notebook("sleep.ipynb", ["print('started', flush=True)", "import time; time.sleep(60)"])
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "gpu-env", "submit", "sleep.ipynb"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    log = cli.root / listed(capsys)[0]["log_path"]
    wait_until_sync(lambda: log.exists() and "started" in log.read_text(), within=30, what="the job starting")
    [job] = listed(capsys)
    assert job["state"] == "running"

    code, out, _ = run_cli(capsys, "job", "cancel", job_id)
    assert code == 0 and f"Cancelled job {job_id}" in out
    assert listed(capsys)[0]["state"] == "cancelled"
    code, _, err = run_cli(capsys, "job", "cancel", job_id)
    assert code == 1 and "has already cancelled" in err
    code, _, err = run_cli(capsys, "job", "logs", "nope")
    assert code == 1 and err.startswith("error: ")


def test_the_cli_refuses_a_value_of_the_wrong_kind_as_the_api_does(cli, capsys):
    cli.notebook("typed.ipynb", ["print(alpha)"], parameters="alpha = 1  # an int")
    code, out, err = run_cli(capsys, "job", "run", "typed.ipynb", "-p", "alpha", "abc")
    assert (code, out) == (1, "")
    assert "'alpha' must be a whole number like its default 1, not \"abc\"" in err
    assert listed(capsys) == []


def test_a_listing_cut_off_by_head_ends_quietly(cli, capsys):
    from jupyter_gpu_env.jobs.store import JobStore
    from jupyter_gpu_env.models.jobs import Job

    def job(i: int) -> Job:
        return Job(
            id=f"{i:012x}", name=f"job {i}", backend="local", state="succeeded", notebook_path="a.ipynb",
            job_dir=f"jobs/{i}", input_path="i", output_path="o", log_path="l", created_at=1e9 + i,
        )  # fmt: skip

    store = JobStore(Path(os.environ["JUPYTER_DATA_DIR"]) / "gpu-env" / "jobs.sqlite")
    import asyncio

    asyncio.run(store.insert_many(job(i) for i in range(400)))
    store.close()
    lister = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "gpu-env", "job", "list", "--json", "--limit", "400"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    head = subprocess.Popen(["head", "-c", "100"], stdin=lister.stdout, stdout=subprocess.PIPE)
    lister.stdout.close()  # only head reads it now: when head exits, the listing's writes fail
    assert len(head.communicate(timeout=60)[0]) == 100
    _, err = lister.communicate(timeout=60)
    assert lister.returncode == 0 and err == b"", err.decode()


def test_a_sweep_from_the_command_line_its_results_and_a_rerun(cli, capsys):
    write_notebook(
        cli.root, "sweep.ipynb", [], parameters="alpha = 1\nsteps = 1", results="{'product': alpha * steps}"
    )
    code, out, err = run_cli(capsys, "job", "run", "sweep.ipynb", "-p", "alpha", "1,2", "-p", "steps", "10:20:10",
                         "--max-concurrent", "2", "--wait")  # fmt: skip
    assert code == 0, err
    group = out.strip()
    assert "Submitted a sweep of 4 runs of 'sweep' to local, 2 at a time" in err
    assert f"Sweep {group} succeeded: 4 succeeded" in err
    code, out, _ = run_cli(capsys, "sweep", "results", group, "--csv")
    rows = [line.split(",") for line in out.strip().splitlines()]
    assert rows[0][:4] == ["run", "alpha", "steps", "product"]
    assert [r[1:4] for r in rows[1:]] == [
        ["1", "10", "10"],
        ["1", "20", "20"],
        ["2", "10", "20"],
        ["2", "20", "40"],
    ]
    code, out, _ = run_cli(capsys, "sweep", "results", group)
    assert code == 0 and out.splitlines()[0].split() == [
        "RUN",
        "alpha",
        "steps",
        "product",
        "STATE",
        "SECONDS",
        "GPU",
        "ENERGY",
    ]
    # `jobs` lists the sweep as one row with its id (what `results` and `cancel` take), not 4 run rows
    code, out, _ = run_cli(capsys, "job", "list")
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert code == 0 and [r[0] for r in rows] == [group]
    assert "sweep of 4" in out and "succeeded" in rows[0] and "4/4 runs" in out
    runs = [j["id"] for j in listed(capsys)]
    assert len(runs) == 4 and not any(r in out for r in runs)
    code, out, _ = run_cli(capsys, "job", "list", "--runs")
    assert sorted(line.split()[0] for line in out.strip().splitlines()[1:]) == sorted(runs)
    code, out, _ = run_cli(capsys, "job", "list", "--state", "failed")
    assert group not in out
    # the sweep as a noun of its own: listed, shown, and refused in words where there is nothing to do
    code, out, err = run_cli(capsys, "sweep", "list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == [group], err
    code, out, _ = run_cli(capsys, "sweep", "show", group)
    assert "state:      succeeded" in out and "varies:     alpha, steps" in out and "4 succeeded" in out
    code, out, err = run_cli(capsys, "sweep", "rerun", group)
    assert code == 1 and "No run of sweep" in err
    code, out, err = run_cli(capsys, "sweep", "cancel", group)
    assert code == 1 and err.startswith("error: "), err
    job = listed(capsys, "--limit", "1")[0]["id"]  # the newest: one of the sweep's runs
    code, out, err = run_cli(capsys, "job", "rerun", job, "-p", "alpha", "7")
    assert code == 0, err
    assert "Sent 'sweep [" in err and out.strip() != job
    code, out, err = run_cli(capsys, "job", "rerun", job, "-p", "alpha", "8", "--name", "sweep alpha=8 again")
    assert code == 0 and "Sent 'sweep alpha=8 again' again" in err, err
    code, _, err = run_cli(capsys, "job", "run", "sweep.ipynb", "--max-concurrent", "2")
    assert code == 2 and "--max-concurrent applies to a sweep" in err


def test_from_a_subfolder_jobs_land_where_the_running_server_looks(cli, capsys, tmp_path, monkeypatch):
    """Run from a subfolder of what a running Jupyter server serves, with no root given or configured, the
    command takes that server's root (from its runtime file): the jobs it submits are the server's too.
    A runtime file left by a server that died is not followed."""
    cli.notebook("work/sq.ipynb", ["print(alpha ** 2)"], parameters="alpha = 1")
    monkeypatch.chdir(cli.root / "work")
    runtime = tmp_path / "runtime"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    (runtime / "jpserver-1.json").write_text(
        json.dumps({"pid": int(dead.stdout), "root_dir": str(cli.root / "work")})
    )

    code, out, err = run_cli(capsys, "job", "run", "sq.ipynb", "-p", "alpha", "3", "--wait")
    assert code == 0, err
    [job] = listed(capsys)
    assert job["notebook_path"] == "sq.ipynb"  # no live server: the current folder is the root

    (runtime / "jpserver-2.json").write_text(json.dumps({"pid": os.getpid(), "root_dir": str(cli.root)}))
    code, out, err = run_cli(capsys, "job", "run", "sq.ipynb", "-p", "alpha", "4", "--wait")
    assert code == 0, err
    job = next(j for j in listed(capsys) if j["id"] == out.strip())
    assert job["notebook_path"] == "work/sq.ipynb" and not job["job_dir"].startswith("/")
    # The server's service, rooted where the server is, finds the job's folder and its output.
    assert printed(cli.root / job["output_path"]).strip().endswith("16")


def test_advice_and_an_opportunistic_job_where_no_backend_offers_it(cli, capsys):
    nb = write_notebook(cli.root, "fit.ipynb", ["print('fits')"])
    code, out, err = run_cli(capsys, "advice", nb)
    assert code == 0, err
    assert out.startswith("No run of this notebook has measured its GPU use yet")
    code, out, _ = run_cli(capsys, "advice", nb, "--json")
    assert json.loads(out)["based_on"] == "nothing"

    # this machine hands out no GPU, so the local backend offers no opportunistic jobs
    code, out, err = run_cli(capsys, "job", "run", nb, "--priority", "opportunistic")
    assert code == 1 and "Priority 'opportunistic' is not offered by the 'local' backend" in err
    assert listed(capsys) == []


def test_energy_carbon_and_cost_in_show_list_usage_and_results(batch_terminal, capsys):
    """What the server answers, the terminal shows: a job's kWh with its CO2e and cost at the site's
    numbers, the week's usage, a sweep's runs; and why a job has no energy."""
    import asyncio
    import time

    from helpers import job_record

    from jupyter_gpu_env.jobs.store import JobStore
    from jupyter_gpu_env.models.jobs import JobGpuUsage
    from jupyter_gpu_env.models.sweeps import JobGroup

    site = {
        "job_dir": "jobs",
        "carbon_intensity": 400.0,
        "pue": 1.25,
        "gpu_hour_price": 2.5,
        "currency": "EUR",
    }
    batch_terminal(GpuEnvApp=site)
    now = time.time()
    kwh = 3.6e6

    def run(job_id: str, joules: float | None, **fields) -> object:
        gpu = JobGpuUsage(
            available=True,
            gpu_hours_allocated=1.0,
            energy_joules=joules,
            energy_source="counter",
            energy_note=None if joules else "GPU energy is not measured: no counter, no power.",
        )
        return job_record(job_id, state="succeeded", created_at=now - 7200, started_at=now - 7200,
                          finished_at=now - 3600, resources={"gpus": 1}, gpu=gpu, **fields)  # fmt: skip

    group = JobGroup(
        id="0000000000aa", name="scan", backend="local", notebook_path="nb.ipynb", size=2, max_concurrent=2,
        varied=["alpha"], counts={"succeeded": 2}, state="succeeded", created_at=now - 7200,
    )  # fmt: skip
    store = JobStore(Path(os.environ["JUPYTER_DATA_DIR"]) / "gpu-env" / "jobs.sqlite")
    try:
        asyncio.run(store.insert_many([run("00000000e001", 0.5 * kwh), run("00000000e002", None)]))
        runs = [run(f"00000000e1{i:02d}", (i + 1) * kwh, group_id=group.id, group_index=i,
                    parameters={"alpha": a}) for i, a in enumerate((0.1, 0.2))]  # fmt: skip
        asyncio.run(store.sweeps.insert(group, runs))
    finally:
        store.close()

    code, out, err = run_cli(capsys, "job", "show", "00000000e001")
    assert code == 0, err
    shown = dict(line.split(":", 1) for line in out.splitlines())
    # 0.5 kWh x 1.25 x 400 g; 1 GPU-hour at 2.5 EUR (no energy price: no energy part)
    assert shown["GPU energy"].strip() == "0.50 kWh (counter), 250 g CO2e, 2.50 EUR"
    code, out, _ = run_cli(capsys, "job", "show", "00000000e002")
    shown = dict(line.split(":", 1) for line in out.splitlines())
    assert shown["GPU energy"].strip() == "not measured: GPU energy is not measured: no counter, no power."

    code, out, _ = run_cli(capsys, "job", "list", "--runs")
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert rows["00000000e001"].endswith("0.50 kWh") and rows["00000000e002"].rstrip().endswith("-")

    code, out, err = run_cli(capsys, "job", "usage", "--weeks", "2")
    assert code == 0, err
    header, *weeks = out.splitlines()
    assert header.split() == ["WEEK", "BACKEND", "GPU-H", "USED", "GPU", "ENERGY", "CO2E", "COST"]
    # 4 GPU-hours, 3.5 kWh measured on three of them: 1,750 g; 4 x 2.5 EUR
    assert sum(float(w.split()[2]) for w in weeks) == pytest.approx(4.0)
    assert any(w.split()[4:] == ["3.50", "kWh", "1.8", "kg", "CO2e", "10.00", "EUR"] for w in weeks), weeks

    code, out, _ = run_cli(capsys, "sweep", "results", group.id)
    header, *table = out.splitlines()
    assert header.split()[-5:] == ["SECONDS", "GPU", "ENERGY", "CO2E", "COST"]
    assert [line.split()[-7:] for line in table] == [
        ["1.00", "kWh", "500", "g", "CO2e", "2.50", "EUR"],
        ["2.00", "kWh", "1.0", "kg", "CO2e", "2.50", "EUR"],
    ]
