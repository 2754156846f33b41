"""Images: `pack` an environment into one squashfs (or SIF) file, and list the `images`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..models.images import Image, ImageRequest
from .common import age, human_bytes, print_json, print_table, validated
from .config import command_parser, with_services
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..services import Library


def print_usage_lines(image: Image) -> None:
    u = image.usage
    print(f"Mounted at {u.mount_path}, use it with one of:")
    print(f"  apptainer:  {u.apptainer}")
    print(f"  squashfuse: {u.squashfuse}")
    print(f"    unmount:  {u.unmount}")
    print(f"  unsquashfs: {u.unsquashfs}")


@with_services
async def cmd_pack(s: Library, args: argparse.Namespace) -> int:
    """Pack an environment into one image file, with progress; an unchanged environment is packed once."""
    req = validated(ImageRequest, format=args.format, compression=args.compression)
    s.images.check_request(req)
    loc = await s.envs.resolve(args.env)
    with ProgressBar(f"pack {loc.name}", verbose=args.verbose) as bar:
        image = await s.images.pack(loc.name, loc.prefix, req, bar.progress)
        bar.progress(1.0, f"Packed '{loc.name}'")
    print(image.path)
    saved = f"{image.file_count} files in one, {human_bytes(image.env_size_bytes)} on disk"
    print(f"  {image.id}: {human_bytes(image.size_bytes)} ({saved}), packed in {image.pack_seconds:.1f} s")
    print_usage_lines(image)
    return 0


@with_services
async def cmd_images(s: Library, args: argparse.Namespace) -> int:
    """List the packed images."""
    images = await s.images.list(args.env)
    if args.json:
        print_json(images)
        return 0
    rows = [
        (
            i.id,
            i.environment,
            i.format if i.format == "sif" else f"{i.format}/{i.compression}",
            human_bytes(i.size_bytes),
            i.file_count,
            age(i.created_at),
        )
        for i in images
    ]
    print_table(("ID", "ENV", "FORMAT", "SIZE", "FILES", "AGE"), rows, "No images yet.")
    return 0


def register(sub: Any) -> None:
    p = command_parser(sub, "pack", cmd_pack)
    p.add_argument("env", metavar="ENV", help="the environment to pack")
    p.add_argument("--format", choices=["squashfs", "sif"], default="squashfs", help="default: squashfs")
    p.add_argument(
        "--compression",
        choices=["zstd", "xz", "none"],
        default="zstd",
        help="squashfs compression (default: zstd; xz mounts on old kernels)",
    )

    p = command_parser(sub, "images", cmd_images)
    p.add_argument("--env", metavar="ENV", help="only the images of this environment")
    p.add_argument("--json", action="store_true", help="print the images as JSON")
