import json
from pathlib import Path

from openapi_spec_validator import validate

from jupyter_gpu_env.handlers import ROUTES
from jupyter_gpu_env.handlers.openapi import build_openapi, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_document_is_valid_openapi():
    validate(build_openapi())


def test_every_route_and_verb_is_documented():
    doc = build_openapi()
    for path, handler in ROUTES:
        assert f"/{path}" in doc["paths"], path
        for verb in ("get", "post", "put", "patch", "delete"):
            if verb in handler.__dict__:
                assert verb in doc["paths"][f"/{path}"], f"{verb} {path} has no @operation"


def test_committed_copy_is_current():
    assert DOC.read_text() == render(), (
        "docs/openapi.json is stale: run `jupyter gpu-env openapi > docs/openapi.json`"
    )


async def test_served_document_matches(api):
    served = json.loads((await api("openapi.json")).body)
    assert served == build_openapi()
    gpu = served["paths"]["/gpu"]["get"]
    assert gpu["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/GpuSnapshot")
    assert "HostResources" in served["components"]["schemas"]


def test_older_spellings_are_served_and_marked_deprecated_pointing_at_the_current_ones():
    """One grammar: a sweep is `sweeps`, cancelling is `POST .../cancel`. The older paths and verbs stay
    for a release; the document marks each deprecated and names the operation to call instead, and every
    current operation is not deprecated."""
    doc = build_openapi()
    deprecated = {
        (verb.upper(), path.lstrip("/")): op["description"]
        for path, ops in doc["paths"].items()
        for verb, op in ops.items()
        if op.get("deprecated")
    }
    assert deprecated.keys() == {
        ("GET", "jobs/groups"),
        ("GET", "jobs/groups/{sweep_id}"),
        ("POST", "jobs/groups/{sweep_id}/cancel"),
        ("POST", "jobs/groups/{sweep_id}/retry"),
        ("GET", "jobs/groups/{sweep_id}/results"),
        ("DELETE", "dask/clusters/{cluster_id}"),
    }
    for text in deprecated.values():
        verb, path = text.split("`")[1].split(" ")
        assert verb.lower() in doc["paths"][f"/{path}"] and not doc["paths"][f"/{path}"][verb.lower()].get(
            "deprecated"
        ), text
    assert "use `POST sweeps/{sweep_id}/rerun`" in deprecated[("POST", "jobs/groups/{sweep_id}/retry")]
    # every way to stop something that runs is a POST to its cancel
    for what in (
        "jobs/{job_id}",
        "sweeps/{sweep_id}",
        "pipelines/{pipeline_id}",
        "dask/clusters/{cluster_id}",
    ):
        assert "post" in doc["paths"][f"/{what}/cancel"], what


def test_what_the_conformance_run_leaves_unchecked_is_what_the_document_says_it_cannot_state():
    """A schema-valid request the server refuses is allowed only where the operation says why
    (`x-beyond-schema`); the conformance run excludes exactly those operations, by name."""
    import tomllib

    config = tomllib.loads((Path(__file__).with_name("schemathesis.toml")).read_text())
    excluded = {
        name
        for op in config["operations"]
        if op.get("checks", {}).get("positive_data_acceptance", {}).get("enabled") is False
        for name in op.get("include-name", [])
    }
    doc = build_openapi()
    said = {
        f"{verb.upper()} {path}"
        for path, ops in doc["paths"].items()
        for verb, op in ops.items()
        if op.get("x-beyond-schema")
    }
    assert excluded == said
    assert all(
        "Beyond what its schema says:"
        in doc["paths"][name.split(" ")[1]][name.split(" ")[0].lower()]["description"]
        for name in said
    )
