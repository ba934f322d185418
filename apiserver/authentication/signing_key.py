"""The service-account signing key: an RSA key kept in the data dir, its key id and its public JWK.

Like kubeadm's `pki/sa.key` and `pki/sa.pub`: made once, reused on every restart, so tokens issued
earlier still verify. Made lazily, on the first token issued or verified or the first JWKS read:
most servers (and most tests) never need one, and RSA key generation is the slow part. The key id is
upstream's: base64url (no padding) of the SHA-256 of the public key's DER SubjectPublicKeyInfo.
Used by `service_account_tokens` (sign, verify) and `oidc_discovery` (the JWKS).
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

ALGORITHM = "RS256"
_KEY_BITS = 2048  # kubeadm's sa.key size


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def key_id(public_key: rsa.RSAPublicKey) -> str:
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return b64url(hashlib.sha256(der).digest())


class SigningKey:
    """One RSA key: read from `path` (PEM, PKCS#1 or PKCS#8), or made there; None: in memory only."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._key: rsa.RSAPrivateKey | None = None
        self._kid = ""
        self._lock = threading.Lock()

    def _private(self) -> rsa.RSAPrivateKey:
        if self._key is None:
            with self._lock:
                if self._key is None:
                    key = self._load_or_make()
                    self._kid = key_id(key.public_key())
                    self._key = key
        return self._key

    def _load_or_make(self) -> rsa.RSAPrivateKey:
        if self.path and os.path.exists(self.path):
            with open(self.path, "rb") as f:
                # cryptography checks the key (its primes multiply to its modulus...): ~40 ms of CPU,
                # but a damaged key file is refused at start instead of signing tokens nothing verifies.
                loaded = serialization.load_pem_private_key(f.read(), password=None)
            if not isinstance(loaded, rsa.RSAPrivateKey):
                raise ValueError(f"{self.path}: the service-account signing key must be an RSA key")
            return loaded
        key = rsa.generate_private_key(public_exponent=65537, key_size=_KEY_BITS)
        if self.path:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            _write(self.path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                                serialization.NoEncryption()), private=True)
            # sa.pub beside it, as kubeadm writes it, for whoever verifies tokens offline.
            _write(os.path.splitext(self.path)[0] + ".pub", key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        return key

    @property
    def kid(self) -> str:
        self._private()
        return self._kid

    def sign(self, message: bytes) -> bytes:
        return self._private().sign(message, padding.PKCS1v15(), hashes.SHA256())

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            self._private().public_key().verify(signature, message, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return False
        return True

    def jwk(self) -> dict[str, str]:
        """The public key as a JWK, in the fields and order kube-apiserver's /openid/v1/jwks serves."""
        numbers = self._private().public_key().public_numbers()
        return {"use": "sig", "kty": "RSA", "kid": self.kid, "alg": ALGORITHM,
                "n": b64url(_int_bytes(numbers.n)), "e": b64url(_int_bytes(numbers.e))}


def _write(path: str, data: bytes, private: bool = False) -> None:
    partial = path + ".partial"
    with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644), "wb") as f:
        f.write(data)
    os.replace(partial, path)
