"""The cluster's certificate authority, the API server's serving certificate, and client certificates.

Generated once into the data dir (`pki/ca.crt`, `pki/ca.key`, `pki/apiserver.crt`,
`pki/apiserver.key`) and reused on restart, so kubeconfigs handed out earlier stay valid. The
serving certificate names 127.0.0.1, localhost and the in-cluster service names, as kubeadm's does.
The serving context asks for a client certificate (optional) and verifies it against the CA; the
API server reads CN as the user and O as the groups. `client_certificate()` mints one (the admin's
in `pki/admin.crt`, as kubeadm's admin.conf; `system:kube-scheduler`, `system:node:<name>`, ...).
Called by `cli.py` and `embedded.py` before the server starts.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import os
import ssl
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

_DNS_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
              "kubernetes.default.svc.cluster.local")
_IPS = ("127.0.0.1", "10.96.0.1", "::1")


# kubeadm's admin.conf since 1.29: a group bound to cluster-admin by the kubeadm:cluster-admins
# ClusterRoleBinding, not system:masters (kept for super-admin.conf), so the admin can be revoked.
ADMIN_USER = "kubernetes-admin"
ADMIN_GROUPS = ("kubeadm:cluster-admins",)
CLIENT_DAYS = 365  # kubeadm's client certificate validity


def component_identity(component: str, node_name: str = "") -> tuple[str, tuple[str, ...]]:
    """(CN, O) of upstream's per-component credentials, for `Pki.client_certificate` (kubeadm's
    scheduler.conf, controller-manager.conf, and each kubelet's system:node:<name> in system:nodes),
    and of the nodes host's shared client."""
    if component == "node":
        if not node_name:
            raise ValueError("a node identity needs the node's name")
        return f"system:node:{node_name}", ("system:nodes",)
    # haru:nodes-host is haru's own: the hollow nodes' process reads for all its kubelets at once.
    identities = {"scheduler": "system:kube-scheduler", "controllers": "system:kube-controller-manager",
                  "kube-proxy": "system:kube-proxy", "nodes-host": "haru:nodes-host"}
    if component not in identities:
        raise ValueError(f"no upstream identity for component {component!r}")
    return identities[component], ()


@dataclass(frozen=True)
class Pki:
    ca_cert: str
    server_cert: str
    server_key: str

    @property
    def ca_key(self) -> str:
        return os.path.join(os.path.dirname(self.ca_cert), "ca.key")

    def ca_pem(self) -> bytes:
        with open(self.ca_cert, "rb") as f:
            return f.read()

    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert, self.server_key)
        # kube-apiserver's --client-ca-file: a client certificate is asked for, never required, and
        # one that does not chain to the CA fails the handshake.
        context.load_verify_locations(self.ca_cert)
        context.verify_mode = ssl.CERT_OPTIONAL
        return context

    def client_certificate(self, user: str, groups: tuple[str, ...] = (),
                           days: int = CLIENT_DAYS) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) for CN=user, O=each group, signed by the cluster CA."""
        ca_key, ca_cert = _signer(self.ca_key, self.ca_cert)
        key = _key()
        subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
                            + [x509.NameAttribute(NameOID.COMMON_NAME, user)])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, content_commitment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
        )
        return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)

    def admin_certificate(self) -> tuple[bytes, bytes]:
        """The admin's client pair, made once (`pki/admin.crt`, `pki/admin.key`) and reused."""
        folder = os.path.dirname(self.ca_cert)
        cert_path, key_path = os.path.join(folder, "admin.crt"), os.path.join(folder, "admin.key")
        if not (os.path.exists(cert_path) and os.path.exists(key_path)):
            cert, key = self.client_certificate(ADMIN_USER, ADMIN_GROUPS)
            _write(key_path, key, private=True)
            _write(cert_path, cert)
        with open(cert_path, "rb") as c, open(key_path, "rb") as k:
            return c.read(), k.read()


@functools.lru_cache(maxsize=4)
def _signer(key_path: str, cert_path: str) -> tuple[Any, x509.Certificate]:
    """The CA's key and certificate, read once: `haru up` mints one certificate per kubelet."""
    with open(key_path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    with open(cert_path, "rb") as f:
        return key, x509.load_pem_x509_certificate(f.read())


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write(path: str, data: bytes, private: bool = False) -> None:
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(data)
    if private:
        os.chmod(partial, 0o600)
    os.replace(partial, path)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def ensure(data_dir: str) -> Pki:
    pki_dir = os.path.join(data_dir, "pki")
    os.makedirs(pki_dir, exist_ok=True)
    pki = Pki(os.path.join(pki_dir, "ca.crt"), os.path.join(pki_dir, "apiserver.crt"),
              os.path.join(pki_dir, "apiserver.key"))
    if all(os.path.exists(p) for p in (pki.ca_cert, pki.server_cert, pki.server_key)):
        return pki
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = _key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "haru-ca")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = _key()
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in _DNS_NAMES]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in _IPS]
    server_cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name).public_key(server_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write(os.path.join(pki_dir, "ca.key"), _pem_key(ca_key), private=True)
    _write(pki.server_key, _pem_key(server_key), private=True)
    _write(pki.server_cert, server_cert.public_bytes(serialization.Encoding.PEM))
    _write(pki.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
    return pki
