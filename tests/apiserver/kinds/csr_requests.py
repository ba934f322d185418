"""Real PKCS#10 requests for CertificateSigningRequest tests, signed by a fresh EC key.

`pem_request(common_name)` is what `openssl req` would give a kubelet or a user; `request_field`
is the same as the base64 text spec.request carries in JSON. Used by the CSR tests and the
registry conformance table.
"""

from __future__ import annotations

import base64
import functools

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@functools.cache
def pem_request(common_name: str = "alice") -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def request_field(common_name: str = "alice") -> str:
    return base64.b64encode(pem_request(common_name)).decode()
