"""Every verb of every handler of the extension refuses unauthenticated callers."""

import re

import pytest
from tornado.httpclient import HTTPClientError
from tornado.web import RequestHandler

from jupyter_gpu_env.handlers import tornado_routes
from jupyter_gpu_env.handlers.base import GpuEnvHandler

VERBS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _implemented(handler: type) -> list[str]:
    verbs = []
    for verb in VERBS:
        fn = getattr(handler, verb.lower())
        if fn is not getattr(RequestHandler, verb.lower()):
            verbs.append(verb)
    return verbs


def _sample_path(pattern: str) -> str:
    path = re.sub(r"\(\?P<\w+>\[\^/\]\+\)", "x", pattern)
    path = path.replace(r"\.", ".").replace("/?", "").replace("(/.*)?", "/anything")
    return path


def _registered(router):
    """Walk tornado's nested routers and yield (pattern, handler) for the extension's handlers."""
    for rule in getattr(router, "rules", []):
        target = rule.target
        if isinstance(target, type):
            if issubclass(target, GpuEnvHandler):
                yield rule.matcher.regex.pattern, target
        else:
            yield from _registered(target)


def test_every_route_is_a_gpu_env_handler():
    for _, handler in tornado_routes():
        assert issubclass(handler, GpuEnvHandler)


async def test_no_verb_reachable_without_authentication(jp_serverapp, http_server_client):
    app = jp_serverapp.web_app
    registered = [*_registered(app.default_router), *_registered(app.wildcard_router)]
    assert registered, "the extension registered no handlers"
    checked = 0
    for pattern, handler in registered:
        path = _sample_path(pattern.rstrip("$"))
        verbs = _implemented(handler) or ["GET"]
        for verb in verbs:
            body = b"{}" if verb in ("POST", "PUT", "PATCH") else None
            # A matching XSRF cookie and header, so that a 403 can only come from missing authentication.
            headers = {"Cookie": "_xsrf=probe", "X-XSRFToken": "probe"}
            with pytest.raises(HTTPClientError) as e:
                await http_server_client.fetch(
                    path,
                    method=verb,
                    body=body,
                    headers=headers,
                    allow_nonstandard_methods=True,
                    request_timeout=10,
                )
            assert e.value.code in (401, 403), f"{verb} {path} answered {e.value.code} without authentication"
            checked += 1
    assert checked >= len(registered)
