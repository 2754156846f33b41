"""Which versions of a PyPI package exist: on the configured index (the simple API's JSON form, PEP 691)
and in the configured wheel folders. An exact-name lookup: indexes offer no search."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from ...errors import Unavailable
from .change import normalized
from .tool import PipSettings

PYPI_SIMPLE = "https://pypi.org/simple"
TIMEOUT = 10.0
_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


def _version_of(filename: str, name: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            dist, version, _, _ = parse_wheel_filename(filename)
        elif filename.endswith((".tar.gz", ".zip")):
            dist, version = parse_sdist_filename(filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return version if normalized(dist) == name else None


def _from_folder(folder: str, name: str) -> set[Version]:
    path = Path(folder.removeprefix("file://"))
    try:
        files = os.listdir(path)
    except OSError:
        return set()
    return {v for f in files if (v := _version_of(f, name)) is not None}


def _from_index(index: str, name: str) -> set[Version] | None:
    """The versions the index has, or None when it has no such project."""
    url = f"{index.rstrip('/')}/{urllib.parse.quote(name)}/"
    request = urllib.request.Request(url, headers={"Accept": _ACCEPT})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            body = response.read()
            kind = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise Unavailable(
            f"The Python package index {index} answered {e.code}.", reason="index_unavailable"
        ) from e
    except (urllib.error.URLError, OSError) as e:
        raise Unavailable(
            f"The Python package index {index} could not be reached: {e}", reason="index_unavailable"
        ) from e
    if "json" in kind:
        files = [f.get("filename", "") for f in json.loads(body).get("files", [])]
    else:  # an older index's HTML page: the file names are the links' texts
        files = re.findall(r">([^<>]+?)</a>", body.decode("utf-8", "replace"))
    return {v for f in files if (v := _version_of(f, name)) is not None}


def lookup(name: str, settings: PipSettings) -> list[str] | None:
    """Versions of ``name``, newest first (blocking); None when neither the index nor a folder has it."""
    key = normalized(name)
    found: set[Version] = set()
    known = False
    for where in settings.find_links:
        versions = _from_folder(where, key)
        known = known or bool(versions)
        found |= versions
    if not settings.no_index:
        for index in [settings.index_url or PYPI_SIMPLE, *settings.extra_index_urls]:
            listed = _from_index(index, key)
            if listed is not None:
                known = True
                found |= listed
    if not known:
        return None
    return [str(v) for v in sorted(found, reverse=True)]
