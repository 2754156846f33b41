"""Images: pack an environment into one squashfs (or SIF) file, cached by content, published atomically.

Layout of ``image_dir``: ``ID.sqfs`` (or ``ID.sif``) beside ``ID.json``, the record. A pack writes into
``.pack-TOKEN.partial``, with the few files rewritten for the mount prefix in ``.pack-TOKEN.staging``; only a finished image
is renamed into place, and its record after it, so a listing never shows half an image. Leftovers of a
killed pack are removed at start.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import shutil
import time
from pathlib import Path

from ..errors import Conflict, InvalidRequest, NotFound
from ..models.images import Image, ImageRequest, ImageUsage
from ..system.atomic import write_json_atomic
from ..system.offloop import python_work
from ..tasks import cancel_and_wait
from . import pack, runtime
from .content import scan
from .pack import Progress

_SUFFIX = {"squashfs": ".sqfs", "sif": ".sif"}


def user_mount_point(image_id: str) -> str:
    """Where the squashfuse line mounts an image: a folder any user may make, on the machine's own
    disk (a job's ``$TMPDIR`` on a cluster node, else /tmp), as the shell expands it."""
    return f'"${{TMPDIR:-/tmp}}/gpu-env-{image_id}"'


def usage_lines(image_path: str, mount: str, image_id: str) -> ImageUsage:
    """The command lines to use an image. squashfuse mounts it where the user may (the environment
    runs from any path: only programs started by their #! line want ``mount``, so Python is named)."""
    image = shlex.quote(image_path)
    at = user_mount_point(image_id)
    return ImageUsage(
        mount_path=mount,
        apptainer=f"apptainer exec --bind {image}:{mount}:image-src=/ CONTAINER.sif {mount}/bin/python",
        squashfuse=f'mkdir -p {at} && squashfuse {image} {at} && {at[:-1]}/bin/python"',
        squashfuse_mount=at,
        unmount=f"fusermount3 -u {at} 2>/dev/null || fusermount -u {at} 2>/dev/null || umount {at}",
        unsquashfs=f"unsquashfs -d {mount} {image} && {mount}/bin/python",
    )


class ImageService:
    def __init__(
        self,
        image_dir: str | os.PathLike[str],
        *,
        mount_prefix: str = "/opt/gpu-env",
        max_bytes: int | None = None,
        sif_base_image: str = "docker://debian:12-slim",
        threads: int | None = None,
    ) -> None:
        self.image_dir = Path(image_dir)
        self.mount_prefix = mount_prefix.rstrip("/")
        self.max_bytes = max_bytes or None
        self.sif_base_image = sif_base_image
        self.threads = threads
        self.packers = pack.packers(self.max_bytes)

    async def warm_up(self) -> None:
        """Keep a packer started ahead of need (a server does; a command-line run does not)."""
        await self.packers.warm_up()

    async def close(self) -> None:
        await self.packers.close()

    # -- records ---------------------------------------------------------------------------------

    def _record_path(self, image_id: str) -> Path:
        if not image_id or "/" in image_id or image_id.startswith("."):
            raise NotFound(f"No image with id '{image_id}'.")
        return self.image_dir / f"{image_id}.json"

    def _read(self, record: Path) -> Image | None:
        try:
            image = Image.model_validate_json(record.read_text())
        except (OSError, ValueError):
            return None
        if not Path(image.path).exists():
            return None
        # The lines as this version writes them, for images packed before it too.
        return image.model_copy(update={"usage": usage_lines(image.path, image.usage.mount_path, image.id)})

    def _list_blocking(self) -> list[Image]:
        if not self.image_dir.is_dir():
            return []
        images = [self._read(p) for p in self.image_dir.glob("*.json") if not p.name.startswith(".")]
        return sorted((i for i in images if i), key=lambda i: i.created_at, reverse=True)

    async def list(self, environment: str | None = None) -> list[Image]:
        images = await asyncio.to_thread(self._list_blocking)
        return [i for i in images if environment is None or i.environment == environment]

    async def get(self, image_id: str) -> Image:
        image = await asyncio.to_thread(self._read, self._record_path(image_id))
        if image is None:
            raise NotFound(f"No image with id '{image_id}'.")
        return image

    async def delete(self, image_id: str) -> None:
        image = await self.get(image_id)

        def remove() -> None:
            self._record_path(image_id).unlink(missing_ok=True)  # record first: never an orphan record
            Path(image.path).unlink(missing_ok=True)

        await asyncio.to_thread(remove)

    def cleanup_stale(self) -> int:
        """Remove what killed packs left behind (called once at start, before any pack runs)."""
        removed = 0
        if not self.image_dir.is_dir():
            return 0
        for p in self.image_dir.iterdir():
            if p.name.startswith(".") and (p.name.endswith(".partial") or p.name.endswith(".staging")):
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
                removed += 1
        for record in self.image_dir.glob("*.json"):
            if self._read(record) is None:  # a record whose image is gone is not an image
                record.unlink(missing_ok=True)
                removed += 1
        return removed

    # -- packing ---------------------------------------------------------------------------------

    def image_id(self, environment: str, content_hash: str, request: ImageRequest) -> str:
        kind = "sif" if request.format == "sif" else request.compression
        return f"{environment}-{content_hash[:12]}-{kind}"

    async def cached(self, environment: str, prefix: Path, request: ImageRequest) -> Image | None:
        """The existing image of this exact environment content, if one was packed before."""
        content = await python_work(scan, prefix)
        image_id = self.image_id(environment, content.content_hash, request)
        return await asyncio.to_thread(self._read, self._record_path(image_id))

    def check_request(self, request: ImageRequest) -> None:
        """Refuse what cannot be built here before a task is started."""
        if request.format == "sif" and runtime.apptainer() is None:
            raise Conflict(
                "SIF images need apptainer (or singularity), which is not installed on this server. "
                "Pack a squashfs image instead: apptainer runs it with --bind IMAGE:MOUNT:image-src=/.",
                reason="tool_missing",
            )
        if request.format == "sif" and request.compression != "zstd":
            raise InvalidRequest("Compression applies to squashfs images only; leave it out for a SIF.")

    async def pack(self, environment: str, prefix: Path, request: ImageRequest, progress: Progress) -> Image:
        """Pack ``prefix``, or return the image of identical content packed before.

        The content scan that decides between the two runs beside the packer, which starts at once:
        on a hit the packer is stopped and what it wrote removed; on a miss no time was lost waiting.
        """
        self.check_request(request)
        progress(0.01, "Reading the environment")
        await asyncio.to_thread(self.image_dir.mkdir, parents=True, exist_ok=True)
        token = secrets.token_hex(6)
        partial = self.image_dir / f".pack-{token}.partial"
        staging = self.image_dir / f".pack-{token}.staging"
        dest = f"{self.mount_prefix}/{environment}"
        started = time.monotonic()
        try:
            await asyncio.to_thread(staging.mkdir)
            squashfs = partial if request.format == "squashfs" else staging / "env.sqfs"
            packing = asyncio.ensure_future(
                pack.squashfs_image(
                    prefix,
                    squashfs,
                    dest,
                    request.compression,
                    progress,
                    staging=staging,
                    max_bytes=self.max_bytes,
                    threads=self.threads,
                    processes=self.packers,
                )
            )
            try:
                content = await python_work(scan, prefix)
                image_id = self.image_id(environment, content.content_hash, request)
                existing = await asyncio.to_thread(self._read, self._record_path(image_id))
                if existing is not None:
                    progress(1.0, "An identical image exists already")
                    return existing
                watcher = asyncio.ensure_future(_watch_growth(squashfs, content.size_bytes, progress))
                try:
                    await packing
                finally:
                    watcher.cancel()
            finally:
                await cancel_and_wait(packing)
            if request.format == "sif":
                await pack.build_sif(squashfs, partial, dest, self.sif_base_image, progress)
            progress(0.95, "Publishing the image")
            final = self.image_dir / f"{image_id}{_SUFFIX[request.format]}"
            image = Image(
                id=image_id,
                environment=environment,
                source_prefix=str(prefix),
                content_hash=content.content_hash,
                format=request.format,
                compression=request.compression,
                path=str(final),
                size_bytes=(await asyncio.to_thread(partial.stat)).st_size,
                file_count=content.file_count,
                env_size_bytes=content.size_bytes,
                created_at=time.time(),
                pack_seconds=round(time.monotonic() - started, 2),
                tools=await pack.tool_versions(),
                usage=usage_lines(str(final), dest, image_id),
            )
            await asyncio.to_thread(self._publish, partial, final, image)
            return image
        finally:
            await asyncio.shield(asyncio.to_thread(_remove, partial, staging))

    def _publish(self, partial: Path, final: Path, image: Image) -> None:
        partial.chmod(0o644)  # jobs and other tools of the same user read it; mksquashfs writes 0600
        os.replace(partial, final)
        write_json_atomic(self._record_path(image.id), image.model_dump(mode="json"), indent=2)

    def path_of(self, image_id: str) -> str | None:
        """The file of an image by id, for jobs (blocking; None when unknown)."""
        try:
            image = self._read(self._record_path(image_id))
        except NotFound:
            return None
        return image.path if image else None

    def file_path(self, image: Image) -> Path:
        return Path(image.path)


def _written(archive: Path) -> int:
    try:
        return archive.stat().st_size
    except OSError:  # not created yet
        return 0


async def _watch_growth(archive: Path, env_bytes: int, progress: Progress) -> None:
    """mksquashfs prints no progress when piped; the growing archive stands in for it.

    Packed environments come out at roughly a quarter of their size on disk, so that is the yardstick;
    the fraction is capped below 1 so that the bar never claims to be done before the tool is.
    """
    expected = max(env_bytes * 0.25, 1.0)
    while True:
        await asyncio.sleep(0.5)
        size = await asyncio.to_thread(_written, archive)
        if size:
            progress(
                0.15 + 0.75 * min(size / expected, 1.0), f"Compressing: {size / (1 << 20):.0f} MiB written"
            )


def _remove(*paths: Path) -> None:
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
