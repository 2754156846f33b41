"""Every route asks Jupyter's authorizer for exactly the permissions its work needs.

Running code needs ``execute`` on ``kernels`` (as a kernel does), shutting kernels down ``write`` on
``kernels``, registering or removing a kernelspec ``write`` on ``kernelspecs``; every route also needs
its verb's own permission on ``gpu_env``. An authorizer that denies one permission at a time shows
which routes depend on it: those must answer 403 and the others must not.
"""

from __future__ import annotations

import re

import pytest
from jupyter_server.auth.authorizer import Authorizer
from tornado.httpclient import HTTPClientError

from jupyter_gpu_env.handlers import ALIASES, ROUTES
from jupyter_gpu_env.handlers.base import VERBS
from jupyter_gpu_env.handlers.openapi import build_openapi

KERNELSPECS = ("write", "kernelspecs")
RUN_CODE = ("execute", "kernels")
STOP_KERNELS = ("write", "kernels")

# (verb, path, query) -> what it needs beyond its verb's own permission on gpu_env.
EXTRA = {
    ("POST", "jobs", ""): {RUN_CODE},
    ("POST", "jobs/{job_id}/rerun", ""): {RUN_CODE},
    ("POST", "sweeps/{sweep_id}/rerun", ""): {RUN_CODE},
    ("POST", "jobs/groups/{sweep_id}/retry", ""): {RUN_CODE},  # its older path, still served
    ("POST", "environments/{name}/gpu-check", ""): {RUN_CODE},
    # A schedule runs code later: making, changing and running one needs what running it now would.
    ("POST", "pipelines", ""): {RUN_CODE},
    ("POST", "pipelines/file", ""): {RUN_CODE},
    ("POST", "pipelines/{pipeline_id}/rerun", ""): {RUN_CODE},
    ("POST", "dask/clusters", ""): {RUN_CODE},
    ("POST", "schedules", ""): {RUN_CODE},
    ("PATCH", "schedules/{schedule_id}", ""): {RUN_CODE},
    ("POST", "schedules/{schedule_id}/run", ""): {RUN_CODE},
    ("POST", "schedules/{schedule_id}/rearm", ""): {RUN_CODE},
    ("POST", "schedules/{schedule_id}/snapshot", ""): {RUN_CODE},
    ("POST", "gpu/release", ""): {STOP_KERNELS},
    ("POST", "environments/{name}/kernel", ""): {KERNELSPECS},
    ("DELETE", "environments/{name}/kernel", ""): {KERNELSPECS},
    ("POST", "images/{image_id}/kernel", ""): {KERNELSPECS},
    ("DELETE", "images/{image_id}/kernel", ""): {KERNELSPECS},
    ("POST", "batch-kernels", ""): {KERNELSPECS},
    ("DELETE", "batch-kernels/{kernel_name}", ""): {KERNELSPECS},
    ("DELETE", "batch-kernels/{kernel_name}", "?shutdown_kernels=true"): {KERNELSPECS, STOP_KERNELS},
    ("DELETE", "environments/{name}", ""): {KERNELSPECS},
    ("DELETE", "environments/{name}", "?shutdown_kernels=true"): {KERNELSPECS, STOP_KERNELS},
    ("DELETE", "images/{image_id}", ""): {KERNELSPECS},
    ("DELETE", "images/{image_id}", "?shutdown_kernels=true"): {KERNELSPECS, STOP_KERNELS},
}
EVERY = [(a, r) for a in ("read", "write", "execute") for r in ("gpu_env", "kernels", "kernelspecs")]


class DenyOne(Authorizer):
    """Allows everything but ``denied``; remembers what it was asked."""

    denied: tuple[str, str] | None = None
    asked: list[tuple[str, str]] = []

    def is_authorized(self, handler, user, action, resource):
        self.asked.append((action, resource))
        return (action, resource) != self.denied


@pytest.fixture
def jp_server_config(jp_server_config):
    return {**jp_server_config, "ServerApp": {**jp_server_config["ServerApp"], "authorizer_class": DenyOne}}


def _operations():
    handlers = dict(ROUTES)
    for path, handler in [*ROUTES, *((old, handlers[new]) for old, new in ALIASES)]:
        for verb in VERBS:
            if verb in handler.__dict__:
                queries = [q for (v, p, q) in EXTRA if v == verb.upper() and p == path] or [""]
                for query in dict.fromkeys(["", *queries]):
                    yield verb.upper(), path, query


def _needs(verb: str, path: str, query: str) -> set[tuple[str, str]]:
    own = ("read" if verb == "GET" else "write", "gpu_env")
    return {own, *EXTRA.get((verb, path, query), set())}


async def _status(jp_fetch, verb: str, path: str, query: str) -> int:
    url = re.sub(r"\{\w+\}", "nonexistent", path)
    params = dict(p.split("=") for p in query.lstrip("?").split("&") if p)
    body = b"{}" if verb in ("POST", "PUT", "PATCH") else None
    try:
        resp = await jp_fetch(
            "gpu-env", "api", url, method=verb, body=body, params=params, allow_nonstandard_methods=True
        )
    except HTTPClientError as e:
        return e.code
    return resp.code


async def test_each_route_asks_for_the_right_permissions(jp_serverapp, jp_fetch):
    authorizer = jp_serverapp.authorizer
    assert isinstance(authorizer, DenyOne)
    checked = 0
    for verb, path, query in _operations():
        needs = _needs(verb, path, query)
        for permission in EVERY:
            authorizer.denied = permission
            status = await _status(jp_fetch, verb, path, query)
            if permission in needs:
                assert status == 403, f"{verb} {path}{query} without {permission} answered {status}"
            else:
                assert status != 403, f"{verb} {path}{query} asked for {permission}, which it needs not"
            checked += 1
    authorizer.denied = None
    assert checked >= 30 * len(EVERY)


def test_the_document_states_the_permissions():
    doc = build_openapi()
    for verb, path, query in _operations():
        if query:
            continue
        stated = {
            (p["action"], p["resource"])
            for p in doc["paths"][f"/{path}"][verb.lower()]["x-jupyter-permissions"]
        }
        assert stated == _needs(verb, path, query), f"{verb} {path}"
