"""The certificates a loopback control plane needs, made with ``cryptography``: one CA signing every serving
certificate (API server, the node agent's kubelet port, Kueue's webhooks and visibility server) and the API
server's client certificate towards the kubelet; a second CA for the aggregation layer's front proxy; the
service-account signing key. Every name is 127.0.0.1 or localhost."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

API_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
             "kubernetes.default.svc.cluster.local")  # fmt: skip
API_IPS = ("127.0.0.1", "10.0.0.1")  # 10.0.0.1: the `kubernetes` Service's address in 10.0.0.0/24


def _write_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    path.chmod(0o600)


@dataclass(frozen=True)
class Authority:
    cert: Path
    key: Path

    @classmethod
    def make(cls, folder: Path, name: str) -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            )
            .sign(key, hashes.SHA256())
        )
        out = cls(folder / f"{name}.crt", folder / f"{name}.key")
        out.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, out.key)
        return out

    def issue(
        self,
        folder: Path,
        name: str,
        *,
        server: bool = True,
        dns: tuple[str, ...] = ("localhost",),
        ips: tuple[str, ...] = ("127.0.0.1",),
        cert_name: str | None = None,
        key_name: str | None = None,
    ) -> tuple[Path, Path]:
        """A certificate for ``name`` (a server's for ``dns``/``ips``, else a client's); its paths."""
        ca_key = serialization.load_pem_private_key(self.key.read_bytes(), None)
        ca_cert = x509.load_pem_x509_certificate(self.cert.read_bytes())
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            alt = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
        folder.mkdir(parents=True, exist_ok=True)
        crt, k = folder / (cert_name or f"{name}.crt"), folder / (key_name or f"{name}.key")
        crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, k)
        return crt, k


@dataclass(frozen=True)
class Pki:
    folder: Path
    ca: Authority
    front_proxy_ca: Authority
    sa_key: Path
    sa_pub: Path

    @classmethod
    def make(cls, folder: Path) -> Pki:
        folder.mkdir(parents=True, exist_ok=True)
        sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        sa_key, sa_pub = folder / "sa.key", folder / "sa.pub"
        _write_key(sa, sa_key)
        sa_pub.write_bytes(
            sa.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        return cls(
            folder,
            Authority.make(folder, "cluster-ca"),
            Authority.make(folder, "front-proxy-ca"),
            sa_key,
            sa_pub,
        )
