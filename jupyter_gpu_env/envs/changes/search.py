"""What exists to add, asked as the user types: conda packages of the configured channels by part of
their name (rattler, in the conda worker, on repodata it caches on disk), PyPI packages by exact name.
Answers are kept a few minutes, so typing back and forth asks nothing twice. ``source`` says where a
package the server asks the user to add (a Dask cluster's ``distributed``) can come from."""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict

from ...errors import GpuEnvError
from ...models.envs.packages import FoundPackage, PackageKind, PackageSearch
from ..engine import CondaEngine
from ..pip import index
from ..pip.change import normalized
from ..pip.tool import PipSettings

KEEP_SECONDS = 300.0
KEEP_ANSWERS = 256


class PackageSearcher:
    def __init__(self, engine: CondaEngine, pip: PipSettings) -> None:
        self.engine = engine
        self.pip = pip
        self._kept: OrderedDict[tuple[str, str, int], tuple[float, PackageSearch]] = OrderedDict()

    async def search(self, query: str, kind: PackageKind, limit: int = 20) -> PackageSearch:
        key = (kind, query.strip().lower(), limit)
        kept = self._kept.get(key)
        if kept is not None and time.monotonic() - kept[0] < KEEP_SECONDS:
            self._kept.move_to_end(key)
            return kept[1]
        answer = await (self._conda(key[1], limit) if kind == "conda" else self._pypi(key[1]))
        self._kept[key] = (time.monotonic(), answer)
        while len(self._kept) > KEEP_ANSWERS:
            self._kept.popitem(last=False)
        return answer

    async def source(self, spec: str) -> PackageKind:
        """``"conda"`` when the configured channels hold the package ``spec`` names (``dask==2024.8.0``:
        dask), else ``"pypi"``; ``"conda"`` too when the channels cannot be asked (nothing is known)."""
        m = re.match(r"[A-Za-z0-9_.-]+", spec.strip())
        name = normalized(m.group(0)) if m else ""
        if not name:
            return "conda"
        try:
            found = await self.search(name, "conda", 5)
        except GpuEnvError:
            return "conda"
        return "conda" if any(normalized(p.name) == name for p in found.packages) else "pypi"

    async def _conda(self, query: str, limit: int) -> PackageSearch:
        found = await self.engine.search(query, limit)
        packages = [
            FoundPackage(name=p["name"], kind="conda", versions=p["versions"]) for p in found["packages"]
        ]
        return PackageSearch(query=query, kind="conda", packages=packages, total=int(found["total"]))

    async def _pypi(self, query: str) -> PackageSearch:
        versions = await asyncio.to_thread(index.lookup, query, self.pip)
        packages = (
            []
            if versions is None
            else [FoundPackage(name=normalized(query), kind="pypi", versions=versions[:8])]
        )
        return PackageSearch(query=query, kind="pypi", packages=packages, total=len(packages))
