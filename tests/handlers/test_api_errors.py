"""Every bad input gets a JSON 4xx with a message a user can act on, never a 500 and never an HTML page."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError


async def _refused(call, code: int) -> dict:
    with pytest.raises(HTTPClientError) as e:
        await call
    assert e.value.code == code, e.value.response.body
    assert e.value.response.headers["Content-Type"].startswith("application/json")
    return json.loads(e.value.response.body)


def _post(api, path: str, raw: bytes | str):
    return api(*path.split("/"), method="POST", body=raw)


MEMORY_400_DIGITS = json.dumps({"notebook_path": "a.ipynb", "resources": {"memory": "9" * 400 + "G"}})


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("[" * 5000 + "]" * 5000, "nested deeper than 32"),
        ('{"notebook_path": "a.ipynb", "resources": {"memory": Infinity}}', "Infinity"),
        ('{"notebook_path": "a.ipynb", "resources": {"cpus": NaN}}', "NaN"),
        (
            '{"notebook_path": "a.ipynb", "resources": {"cpus": 1e400}}',
            "1e400 in the request body is out of range",
        ),
        ('{"notebook_path": "a.ipynb", "resources": {"cpus": ' + "9" * 400 + "}}", "larger than 2^63"),
        (MEMORY_400_DIGITS, "memory is longer than 40"),
        ('{"notebook_path": "a\\u0000.ipynb"}', "NUL"),
        ('{"notebook_path": "a.ipynb", "parameters": {"x": "\\ud800"}}', "lone surrogate"),
        ('{"notebook_path": "a.ipynb", "parameters": {"\\ud800": 1}}', "lone surrogate"),
        (
            '{"notebook_path": "a.ipynb", "resources": {"mig_profile": "1g.10gb\\n"}}',
            "MIG profile '1g.10gb\\n' is not valid",
        ),
        (b'{"notebook_path": "\xff.ipynb"}', "not UTF-8"),
        ("{not json", "not valid JSON"),
    ],
)
async def test_malformed_bodies_are_400(api, raw, words):
    err = await _refused(_post(api, "jobs", raw), 400)
    assert words in err["message"], err


async def test_a_body_of_blanks_is_no_json_document(api):
    # An empty body is an empty object (every field optional here); blanks alone are not JSON, and an
    # operation whose fields are all optional must not read them as {} (schemathesis found it).
    err = await _refused(_post(api, "environments/nowhere/kernel", "\t\n "), 400)
    assert "not valid JSON" in err["message"]
    err = await _refused(_post(api, "environments/nowhere/kernel", ""), 404)
    assert "nowhere" in err["message"]


async def test_names_and_paths_that_cannot_exist(api):
    err = await _refused(_post(api, "environments", '{"source": "demo", "name": "a\\u0000b"}'), 400)
    assert "name" in err["message"]
    err = await _refused(_post(api, "environments", '{"source": "de\\ud800mo", "name": "ab"}'), 400)
    assert "lone surrogate" in err["message"]
    long = json.dumps({"notebook_path": "x" * 300 + ".ipynb"})
    err = await _refused(_post(api, "jobs", long), 404)
    assert "a component of 306 bytes; a file or folder name may have at most 255" in err["message"]
    err = await _refused(api("environments", "x\x01y"), 400)
    assert "control character" in err["message"]


@pytest.mark.parametrize(
    ("path", "params", "words"),
    [
        ("jobs", {"limit": "²"}, "whole number written in digits"),
        ("jobs", {"offset": str(2**63)}, "must be at most 1000000000"),
        ("jobs", {"offset": "9" * 40}, "whole number written in digits"),
        ("jobs", {"offset": "1.6e29"}, "whole number written in digits"),
        ("jobs", {"limit": "0"}, "at least 1"),
        ("jobs", {"state": "running,nope"}, "state"),
        ("jobs/usage", {"start": "nan"}, "must be a number"),
        ("jobs/usage", {"end": "1e400"}, "out of range"),
        ("gpu/history", {"seconds": "-1"}, "greater than 0"),
        ("environments/demo/export", {"format": "toml"}, "yaml, explicit"),
    ],
)
async def test_bad_query_values_are_400(api, path, params, words):
    err = await _refused(api(*path.split("/"), params=params), 400)
    assert words in err["message"], err


async def test_messages_keep_their_percent_signs(api):
    err = await _refused(_post(api, "jobs", '{"notebook_path": "100%done.ipynb"}'), 404)
    assert "'100%done.ipynb'" in err["message"] and "%%" not in err["message"]


async def test_a_body_beyond_the_limit_is_413_before_it_is_read(api):
    huge = json.dumps({"notebook_path": "a.ipynb", "name": "x" * (2 << 20)})
    err = await _refused(_post(api, "jobs", huge), 413)
    assert err["reason"] == "too_large" and "1048576 bytes" in err["message"]


async def test_auth_failures_and_unknown_paths_are_json(jp_fetch, http_server_client, jp_base_url):
    for headers in ({}, {"Authorization": "token wrong"}):
        with pytest.raises(HTTPClientError) as e:
            await http_server_client.fetch(f"{jp_base_url}gpu-env/api/environments", headers=headers)
        assert e.value.code == 403
        assert e.value.response.headers["Content-Type"].startswith("application/json")
        assert json.loads(e.value.response.body)["reason"] == "forbidden"
    err = await _refused(jp_fetch("gpu-env", "api", "no", "such", "thing"), 404)
    assert "openapi.json" in err["message"]
    with pytest.raises(HTTPClientError) as e:
        await jp_fetch("gpu-env", "api", "environments", method="PUT", body=b"{}")
    assert e.value.code == 405 and e.value.response.headers["Allow"] == "GET, POST"
    assert "PUT is not allowed here" in json.loads(e.value.response.body)["message"]
