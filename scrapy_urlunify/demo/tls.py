"""The demo server's TLS: a throw-away self-signed certificate for the demo hosts, and the
server's TLS options for it."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def write_self_signed(directory: Path, hosts: tuple[str, ...] | list[str]) -> tuple[Path, Path]:
    """Create ``cert.pem``/``key.pem`` in ``directory`` valid for ``hosts`` (+ wildcards,
    localhost and 127.0.0.1) and return their paths.

    Scrapy does not verify certificates by default; the SANs are there so that
    a verifying client given ``cert.pem`` as CA would accept it too.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "scrapy-urlunify demo")])
    dns = sorted({*hosts, *(f"*.{h}" for h in hosts), "localhost"})
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [*(x509.DNSName(h) for h in dns), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / "cert.pem"
    key_path = directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def tls_options(cert_pem: bytes, key_pem: bytes) -> Any:
    """Twisted server TLS options for our certificate.

    ALPN offers http/1.1: with no ALPN protocols at all, Twisted's select
    callback answers b"", which current pyOpenSSL rejects, so clients that
    offer ALPN (curl, browsers) got a TLS "internal error" alert.
    """
    from twisted.internet import ssl

    try:
        # pyOpenSSL >= 24.3 takes cryptography objects (and deprecates its own).
        options = ssl.CertificateOptions(
            privateKey=serialization.load_pem_private_key(key_pem, None),  # type: ignore[arg-type]
            certificate=x509.load_pem_x509_certificate(cert_pem),  # type: ignore[arg-type]
            acceptableProtocols=[b"http/1.1"],
        )
        options.getContext()
    except TypeError:
        cert = ssl.PrivateCertificate.loadPEM(cert_pem + key_pem)
        options = ssl.CertificateOptions(
            privateKey=cert.privateKey.original,
            certificate=cert.original,
            acceptableProtocols=[b"http/1.1"],
        )
    return options
