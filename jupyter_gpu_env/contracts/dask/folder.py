"""The cluster's folder on the server's side: built aside with its spec, its own TLS credentials and
the keeper's package, then renamed into place (the scheduler never sees half a folder); a scale and a
stop asked of the keeper; the TLS context this server presents to a cluster.

Every cluster gets its own certificate authority, made when the cluster is, whose key signs one
certificate and is then thrown away: nothing can ever sign another certificate this cluster trusts.
That one certificate and its key are what the scheduler, its workers and its clients (the user's
notebooks, this server's dashboard proxy) all present, and each of them requires it of the other side
(mutual TLS), as dask-gateway does. The key is readable by the owner alone (0600, in a 0700 folder):
on a login node shared by many users, and on a filesystem every node mounts, holding the file is what
proves a process is the owner's.
"""

from __future__ import annotations

import datetime
import os
import shutil
import ssl
from collections.abc import Callable
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ...system.atomic import write_json_atomic
from .spec import (
    CA_PEM,
    CERT_PEM,
    CLUSTER_JSON,
    KEEPER_PACKAGE,
    KEY_PEM,
    SCALE_JSON,
    STOP,
    TLS_DIR,
    WORKER_LOGS,
    ClusterSpec,
    ScaleFile,
)

KEEPER = Path(__file__).with_name("keeper")
CLOCK_SKEW = datetime.timedelta(minutes=10)  # nodes' clocks differ a little: valid a while before now
VALID_SECONDS = 365 * 86400  # as distributed's Security.temporary(); longer where a scheduler may live longer


def build(
    folder: Path,
    spec: ClusterSpec,
    extra: Callable[[Path], None] | None = None,
    *,
    valid_seconds: int = VALID_SECONDS,
) -> None:
    """Write ``folder`` aside: ``cluster.json``, ``tls/``, ``gpuenv_dask/``, ``workers/``, and what
    ``extra`` writes there (a backend's scripts); then rename it into place. Runs off the event loop.
    The certificate is valid ``valid_seconds`` (the cluster's longest life) and not a day longer."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".tmp-{folder.name}")
    tmp.mkdir()
    try:
        make_credentials(tmp, spec.id, valid_seconds)
        shutil.copytree(KEEPER, tmp / KEEPER_PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (tmp / WORKER_LOGS).mkdir()
        if extra is not None:
            extra(tmp)
        write_json_atomic(tmp / CLUSTER_JSON, spec.model_dump(mode="json"), durable=True)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def add_pool_module(folder: Path, name: str, source: Path) -> str:
    """Copy a backend's pool module (standard library only) into the keeper's package of ``folder``,
    being built aside, as ``name``; the name ``cluster.json``'s ``pool["module"]`` gives the keeper."""
    shutil.copyfile(source, folder / KEEPER_PACKAGE / f"{name}.py")
    return name


def make_credentials(folder: Path, cluster_id: str, valid_seconds: int) -> None:
    """``tls/ca.pem`` (the cluster's own authority), ``tls/cluster.pem`` (the one certificate it
    signed, for servers and clients alike) and ``tls/cluster.key``; all 0600 in a 0700 folder.

    Made to pass OpenSSL's strict checks (Python 3.13 turns them on by default): a CA with its key
    usage and key identifiers, a leaf that is not a CA and says it serves and is a client."""
    tls = folder / TLS_DIR
    tls.mkdir(mode=0o700)
    now = datetime.datetime.now(datetime.UTC)
    until = now + datetime.timedelta(seconds=valid_seconds) + datetime.timedelta(days=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"jupyter-gpu-env dask {cluster_id} CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"dask-{cluster_id}")])
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=False), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        # distributed and this server check no host name (a scheduler is reached by whatever address
        # its node has); the name is there for tools that insist on one
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(f"dask-{cluster_id}")]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    _write_private(folder / CA_PEM, ca.public_bytes(pem))
    _write_private(folder / CERT_PEM, leaf.public_bytes(pem))
    _write_private(
        folder / KEY_PEM,
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _write_private(path: Path, data: bytes) -> None:
    """Created 0600 whatever the umask, never over an existing file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def client_ssl_context(folder: Path) -> ssl.SSLContext:
    """What this server presents to a cluster's dashboard, and requires of it: the cluster's
    certificate, checked against the cluster's own authority (no host name: as distributed does)."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(folder / CA_PEM))
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_cert_chain(str(folder / CERT_PEM), str(folder / KEY_PEM))
    return ctx


def write_scale(folder: Path, scale: ScaleFile) -> None:
    write_json_atomic(folder / SCALE_JSON, scale.model_dump(mode="json"), durable=True)


def request_stop(folder: Path) -> None:
    """Ask the keeper to shut the cluster down (it looks every few seconds)."""
    (folder / STOP).touch()
