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
