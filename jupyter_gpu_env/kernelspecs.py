"""Jupyter kernelspecs this extension writes: for an environment, for a packed image, for one batch job.

An environment's kernelspec is written to the user's Jupyter data folder (``<data>/kernels/<name>/kernel.json``), so
JupyterLab's Launcher, papermill and nbconvert all find it by name. It starts the environment's own
Python with ipykernel and carries the environment's activation in ``env``: ``PATH`` with the env's
``bin`` first, ``CONDA_PREFIX``, ``CONDA_DEFAULT_ENV`` and what simple ``export`` lines of
``etc/conda/activate.d/*.sh`` set. ``${VAR}`` in those values is filled in by jupyter_client from the
server's environment when the kernel starts (``Template.safe_substitute``), so a literal ``$`` is
written as ``$$``.

An image's kernelspec runs ``python -m jupyter_gpu_env.images.launch``, which mounts the image (or binds
it with apptainer) and execs its Python. A job's kernelspec is written into the job folder on the node at
run time (``JOB_FOLDER/kernels/gpu-env-job``, found through ``JUPYTER_PATH``), so PATH is the node's.

Kernelspecs we write carry ``metadata.jupyter_gpu_env``; we never change or delete one without it.
Blocking functions (small files); services call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_data_dir

from .errors import Conflict, FileRefused, Forbidden, NotFound
from .models.envs import KernelInfo
from .models.images import Image
from .system.atomic import write_json_atomic
from .system.untrusted import copy_regular_file, read_regular_file

KERNEL_PREFIX = "gpu-env-"
METADATA_KEY = "jupyter_gpu_env"
_EXPORT = re.compile(r"export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)")
_VAR_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_BLOCK_OPEN = re.compile(r"^(if|case|for|while|until|select)\b|\{\s*$|^function\b|\(\)\s*\{?")
_BLOCK_CLOSE = re.compile(r"^(fi|esac|done)\b|^\}")
_ONE_LINE_BLOCK = re.compile(r"[;\s](fi|done|esac|\})\s*;?\s*$")
_LOGO_FILES = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")


def kernels_dir(data_dir: Path | None = None) -> Path:
    return Path(data_dir or jupyter_data_dir()) / "kernels"


def kernel_name_for(env_name: str, prefix: Path) -> str:
    """``gpu-env-<name>``; kernelspec names are case-insensitive, so mixed case gets a stable suffix."""
    base = KERNEL_PREFIX + env_name.lower().replace("@", "-at-")
    if env_name != env_name.lower():
        base += "-" + hashlib.sha1(str(prefix).encode()).hexdigest()[:6]
    return base


def _template_literal(value: str) -> str:
    return value.replace("$", "$$")


def _expand(raw: str, prefix: Path, known: dict[str, str]) -> str | None:
    """Turn a shell word into a kernelspec env value, or None when it needs a real shell."""
    if "$(" in raw or "`" in raw or re.search(r"\$\{[^}]*[^A-Za-z0-9_}][^}]*\}", raw):
        return None  # command substitution or ${VAR:-default}-style expansions
    try:
        words = shlex.split(raw, comments=True, posix=True)
    except ValueError:
        return None
    if len(words) != 1:
        return None
    if raw.lstrip().startswith("'"):
        return _template_literal(words[0])

    def ref(m: re.Match[str]) -> str:
        var = m.group(1) or m.group(2)
        if var == "CONDA_PREFIX":
            return _template_literal(str(prefix))
        return known.get(var, "${" + var + "}")

    pieces, last = [], 0
    for m in _VAR_REF.finditer(words[0]):
        pieces.append(_template_literal(words[0][last : m.start()]))
        pieces.append(ref(m))
        last = m.end()
    pieces.append(_template_literal(words[0][last:]))
    return "".join(pieces)


def activation_env(prefix: Path, env_name: str) -> tuple[dict[str, str], list[str]]:
    """The kernel's ``env`` and the activate.d lines that were skipped (with the reason).

    Taken from ``etc/conda/activate.d/*.sh`` in name order: top-level ``export VAR=value`` lines
    whose value is a single word, with ``$CONDA_PREFIX`` replaced and other ``$VAR`` passed on as
    ``${VAR}``. Skipped: anything inside if/case/loops/functions, command substitution, parameter
    expansions such as ``${VAR:-x}``, ``unset``, ``source``, plain assignments without ``export``,
    and scripts for other shells (.csh, .fish, .bat).
    """
    env = {
        "PATH": _template_literal(str(prefix / "bin")) + ":${PATH}",
        "CONDA_PREFIX": _template_literal(str(prefix)),
        "CONDA_DEFAULT_ENV": _template_literal(env_name),
    }
    skipped: list[str] = []
    scripts = prefix / "etc" / "conda" / "activate.d"
    for script in sorted(scripts.glob("*.sh")) if scripts.is_dir() else []:
        depth = 0
        try:  # the environment's owner wrote it: a named pipe or a huge file is passed over
            lines = read_regular_file(script, 1 << 20).decode("utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for raw in lines:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if _BLOCK_CLOSE.search(line):
                depth = max(0, depth - 1)
                continue
            if _BLOCK_OPEN.search(line):
                if not _ONE_LINE_BLOCK.search(line):
                    depth += 1
                skipped.append(f"{script.name}: {line} (conditional or function)")
                continue
            m = _EXPORT.fullmatch(line)
            if depth or not m:
                skipped.append(f"{script.name}: {line}" + (" (inside a block)" if depth else ""))
                continue
            value = _expand(m.group(2), prefix, env)
            if value is None:
                skipped.append(f"{script.name}: {line} (needs a shell)")
                continue
            env[m.group(1)] = value
    return env, skipped


def _read_spec(path: Path) -> dict[str, Any] | None:
    try:
        spec = json.loads(read_regular_file(path / "kernel.json", 1 << 20))
    except (OSError, ValueError, RecursionError):
        return None
    return spec if isinstance(spec, dict) else None


def _ours(spec: dict[str, Any] | None) -> dict[str, Any] | None:
    meta = (spec or {}).get("metadata") or {}
    ours = meta.get(METADATA_KEY) if isinstance(meta, dict) else None
    return ours if isinstance(ours, dict) else None


def _info(path: Path, spec: dict[str, Any]) -> KernelInfo:
    ours = _ours(spec) or {}
    return KernelInfo(
        kernel_name=path.name,
        display_name=spec.get("display_name", path.name),
        resource_dir=str(path),
        prefix=str(ours.get("prefix", "")),
        env_name=str(ours.get("env_name", "")),
        env={str(k): str(v) for k, v in (spec.get("env") or {}).items()},
    )


def read_ours(data_dir: Path | None = None, prefix: str = KERNEL_PREFIX) -> list[tuple[str, dict[str, Any]]]:
    """(name, kernel.json) of the kernelspecs this extension wrote whose names start with ``prefix``."""
    root = kernels_dir(data_dir)
    paths = sorted(p for p in root.iterdir() if p.name.startswith(prefix)) if root.is_dir() else []
    return [(p.name, spec) for p in paths if _ours(spec := _read_spec(p) or {})]


def list_registered(data_dir: Path | None = None) -> list[KernelInfo]:
    """The environments' and images' kernelspecs this extension registered (not batch kernels, which
    run no environment here: their ``metadata.jupyter_gpu_env`` names a ``kind``)."""
    root = kernels_dir(data_dir)
    out = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        spec = _read_spec(path)
        ours = _ours(spec)
        if ours and "kind" not in ours:
            out.append(_info(path, spec or {}))
    return out


def find_for_prefix(prefix: Path, data_dir: Path | None = None) -> KernelInfo | None:
    target = os.path.normpath(prefix)
    return next((k for k in list_registered(data_dir) if os.path.normpath(k.prefix) == target), None)


def has_ipykernel(prefix: Path) -> bool:
    return (prefix / "bin" / "python").exists() and any(
        (prefix / "lib").glob("python3*/site-packages/ipykernel")
    )


def register(
    env_name: str,
    prefix: Path,
    *,
    display_name: str | None = None,
    managed: bool = False,
    data_dir: Path | None = None,
) -> KernelInfo:
    """Write (or rewrite) the kernelspec for the environment at ``prefix``.

    Raises Conflict when the environment has no ipykernel, or when a kernelspec of that name exists
    that this extension did not create.
    """
    if not has_ipykernel(prefix):
        how = (
            "Clone it, add the package ipykernel to the clone (Customise → add packages), and register the clone."
            if managed
            else "Add the package ipykernel with Customise → add packages, then register the kernel again."
        )
        raise Conflict(
            f"The environment '{env_name}' has no ipykernel, so Jupyter cannot run a kernel in it. {how}",
            reason="no_ipykernel",
        )
    root = kernels_dir(data_dir)
    name = kernel_name_for(env_name, prefix)
    final = root / name
    existing = _read_spec(final) if final.exists() else None
    if final.exists():
        ours = _ours(existing)
        if not ours:
            raise Conflict(
                f"A kernelspec named '{name}' exists in {root} and was not created by jupyter-gpu-env; "
                "remove or rename it first.",
                reason="kernelspec_exists",
            )
        if os.path.normpath(str(ours.get("prefix"))) != os.path.normpath(prefix):
            name += "-" + hashlib.sha1(str(prefix).encode()).hexdigest()[:6]
            final = root / name
    env, _skipped = activation_env(prefix, env_name)
    spec = {
        "argv": [str(prefix / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": display_name or f"Python ({env_name})",
        "language": "python",
        "interrupt_mode": "signal",
        "env": env,
        "metadata": {"debugger": True, METADATA_KEY: {"prefix": str(prefix), "env_name": env_name}},
    }
    install_spec(root, final, spec, logos=prefix / "share" / "jupyter" / "kernels" / "python3")
    return _info(final, spec)


def install_spec(root: Path, final: Path, spec: dict[str, Any], *, logos: Path | None = None) -> None:
    """Write ``spec`` as the kernelspec folder ``final`` atomically (replacing an older one of ours)."""
    root.mkdir(parents=True, exist_ok=True)
    # Built beside kernels/ (not in it: Jupyter would list a half-written folder there), then renamed.
    tmp = Path(tempfile.mkdtemp(prefix=".gpu-env-kernel-", dir=root.parent))
    try:
        (tmp / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
        for logo in _LOGO_FILES:
            if logos is not None and (logos / logo).is_file():
                with contextlib.suppress(FileRefused):  # no longer a regular file: left out
                    copy_regular_file(logos / logo, tmp / logo)
        os.chmod(tmp, 0o755)
        old = None
        if final.exists():
            old = root.parent / f"{tmp.name}-old"
            os.rename(final, old)
        os.rename(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def unregister(kernel_name: str, data_dir: Path | None = None) -> None:
    """Remove a kernelspec this extension created (NotFound if absent, Forbidden if not ours)."""
    root = kernels_dir(data_dir)
    path = root / kernel_name
    if "/" in kernel_name or kernel_name.startswith(".") or not path.is_dir():
        raise NotFound(f"No kernelspec named '{kernel_name}' in {root}.", reason="kernel_not_found")
    if not _ours(_read_spec(path)):
        raise Forbidden(
            f"The kernelspec '{kernel_name}' was not created by jupyter-gpu-env; it is left alone.",
            reason="not_our_kernel",
        )
    trash = root.parent / f".gpu-env-kernel-removed-{os.getpid()}-{kernel_name}"
    os.rename(path, trash)
    shutil.rmtree(trash, ignore_errors=True)


def unregister_prefix(prefix: Path, data_dir: Path | None = None) -> str | None:
    """Remove the kernelspec registered for ``prefix``, if any; returns its name."""
    info = find_for_prefix(prefix, data_dir)
    if info is None:
        return None
    unregister(info.kernel_name, data_dir)
    return info.kernel_name


# ----- kernels from packed images -----


def image_kernel_name(image: Image) -> str:
    return f"gpu-env-image-{image.id}".lower()


def register_image(
    image: Image,
    *,
    tool: str,
    mount: Path,
    display_name: str | None = None,
    container: str | None = None,
    data_dir: Path | None = None,
) -> KernelInfo:
    """The kernelspec of ``image``, opened with ``tool`` (squashfuse, or apptainer in ``container``) at ``mount``."""
    name = image_kernel_name(image)
    argv = [sys.executable, "-m", "jupyter_gpu_env.images.launch", image.path, str(mount)]
    if tool == "apptainer" and container:
        argv += ["--container", container]
    spec = {
        "argv": [*argv, "--", "-f", "{connection_file}"],
        "display_name": display_name or f"Python ({image.environment}, image)",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {METADATA_KEY: {"prefix": str(mount), "env_name": image.environment, "image": image.id}},
    }
    root = kernels_dir(data_dir)
    install_spec(root, root / name, spec)
    return _info(root / name, spec)


def unregister_image(image: Image, data_dir: Path | None = None, *, missing_ok: bool = False) -> str:
    """Remove the image's kernelspec; NotFound when there is none, unless ``missing_ok``."""
    name = image_kernel_name(image)
    try:
        unregister(name, data_dir)
    except NotFound:
        if not missing_ok:
            raise
    return name


# ----- the throw-away kernelspec of one batch job -----

JOB_KERNEL = "gpu-env-job"


def job_kernelspec(
    prefix: str | os.PathLike[str], env_name: str, base_env: Mapping[str, str]
) -> dict[str, Any]:
    """The kernel.json content: ENV/bin/python -m ipykernel_launcher, with the environment activated.

    Activation is what ``conda activate`` does that matters to a kernel: the env's ``bin`` first on
    PATH (so ``!pip``, compilers and CUDA tools come from it) and ``CONDA_PREFIX`` (which many
    libraries use to find their data).
    """
    prefix = Path(prefix)
    path = os.pathsep.join(p for p in (str(prefix / "bin"), base_env.get("PATH", os.defpath)) if p)
    return {
        "argv": [str(prefix / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({env_name})",
        "language": "python",
        "interrupt_mode": "signal",
        "env": {"PATH": path, "CONDA_PREFIX": str(prefix), "CONDA_DEFAULT_ENV": env_name},
        "metadata": {"debugger": True},
    }


def write_job_kernelspec(
    folder: Path,
    prefix: str | os.PathLike[str],
    *,
    env_name: str,
    kernel_name: str = JOB_KERNEL,
    base_env: Mapping[str, str] | None = None,
) -> Path:
    """Write ``folder/kernels/<kernel_name>/kernel.json``; return its path. Add ``folder`` to JUPYTER_PATH."""
    spec_dir = folder / "kernels" / kernel_name
    spec_dir.mkdir(parents=True, exist_ok=True)
    target = spec_dir / "kernel.json"
    write_json_atomic(target, job_kernelspec(prefix, env_name, os.environ if base_env is None else base_env))
    return target
