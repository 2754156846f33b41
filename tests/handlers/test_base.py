"""The one error mapping: service errors, validation and bad JSON become JSON 4xx, never 500."""

import json

import pytest
from pydantic import Field
from tornado.httpclient import HTTPClientError

from jupyter_gpu_env.errors import Conflict, Forbidden, NotFound
from jupyter_gpu_env.handlers.base import GpuEnvHandler, operation
from jupyter_gpu_env.models import ApiModel


class Echo(ApiModel):
    name: str = Field(min_length=1, max_length=10)
    count: int = Field(ge=0, le=5)
    loud: bool = False


class ProbeHandler(GpuEnvHandler):
    @operation("echo", response=Echo, request=Echo, status=201)
    async def post(self, body: Echo) -> Echo:
        if body.name == "taken":
            raise Conflict("An environment named 'taken' exists already.", reason="exists")
        if body.name == "managed":
            raise Forbidden("Managed environments are read-only.")
        if body.name == "ghost":
            raise NotFound("No environment named 'ghost'.")
        if body.name == "bug":
            raise RuntimeError("a real bug")
        return body


@pytest.fixture
def probe(jp_serverapp, jp_fetch, jp_base_url):
    jp_serverapp.web_app.add_handlers(
        ".*$", [(jp_base_url + "gpu-env-test/probe", ProbeHandler, {"name": "jupyter_gpu_env"})]
    )

    async def call(body: bytes):
        return await jp_fetch("gpu-env-test", "probe", method="POST", body=body)

    return call


async def test_valid_body_round_trips(probe):
    resp = await probe(json.dumps({"name": "ok", "count": 2}).encode())
    assert resp.code == 201
    assert json.loads(resp.body) == {"name": "ok", "count": 2, "loud": False}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "", "count": 1}, "name"),
        ({"name": "x", "count": 99}, "count"),
        ({"name": "x"}, "count"),
        ({"name": "x", "count": 1, "extra": True}, "extra"),
        ({"name": ["x"], "count": 1}, "name"),
        # JSON's own types, as the schema states them: lax parsing would take 0 for false, "2" for 2.
        ({"name": "x", "count": 1, "loud": 0}, "loud"),
        ({"name": "x", "count": 1, "loud": "true"}, "loud"),
        ({"name": "x", "count": "2"}, "count"),
        ({"name": "x", "count": 1.5}, "count"),
        ({"name": 7, "count": 1}, "name"),
    ],
)
async def test_invalid_body_is_400_naming_the_field(probe, body, field):
    with pytest.raises(HTTPClientError) as e:
        await probe(json.dumps(body).encode())
    assert e.value.code == 400
    err = json.loads(e.value.response.body)
    assert err["reason"] == "invalid_request"
    assert field in err["message"]
    assert any(field in d["loc"] for d in err["details"])


async def test_malformed_json_is_400(probe):
    with pytest.raises(HTTPClientError) as e:
        await probe(b"{not json")
    assert e.value.code == 400
    assert json.loads(e.value.response.body)["reason"] == "invalid_json"


@pytest.mark.parametrize(
    ("name", "code", "reason"),
    [("taken", 409, "exists"), ("managed", 403, "forbidden"), ("ghost", 404, "not_found")],
)
async def test_service_errors_map_to_their_status(probe, name, code, reason):
    with pytest.raises(HTTPClientError) as e:
        await probe(json.dumps({"name": name, "count": 0}).encode())
    assert e.value.code == code
    body = json.loads(e.value.response.body)
    assert body["reason"] == reason
    assert name in body["message"] or "read-only" in body["message"]


async def test_unexpected_errors_do_not_leak_internals(probe):
    with pytest.raises(HTTPClientError) as e:
        await probe(json.dumps({"name": "bug", "count": 0}).encode())
    assert e.value.code == 500
    body = json.loads(e.value.response.body)
    assert body["reason"] == "internal_error"
    assert "a real bug" not in body["message"]
