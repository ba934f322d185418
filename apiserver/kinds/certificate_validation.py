"""What a CertificateSigningRequest must be: upstream's pkg/apis/certificates/validation.

A signed PKCS#10 request (PEM "CERTIFICATE REQUEST"), a signer name `<domain>/<path>`, known and
unique usages, at least ten minutes of requested duration, conditions with known statuses that are
never both Approved and Denied and never removed, and a certificate that is PEM CERTIFICATE blocks.
What the stored object already breaks is tolerated on update, as upstream does. Called by the CSR
strategies in `certificates.py`.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from apiserver import validation as v
from apiserver.strategy import Causes, Obj

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
_TRUE_ONLY = (APPROVED, DENIED, FAILED)  # condition types whose status may only be True
_CONDITIONS = "status.conditions"
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
USAGES = sorted([
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth",
    "client auth", "code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel",
    "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc",
])
_PEM = re.compile(rb"-----BEGIN ([^-\r\n]+)-----\r?\n(.*?)-----END \1-----", re.S)


def conditions(obj: Obj) -> list[dict[str, Any]]:
    return list((obj.get("status") or {}).get("conditions") or [])


def of_type(obj: Obj, kind: str) -> list[dict[str, Any]]:
    return [c for c in conditions(obj) if c.get("type") == kind]


def validate(obj: Obj, old: Obj | None, *, allow_certificate_content: bool = False) -> Causes:
    causes = v.object_meta(obj.get("metadata") or {}, namespaced=False, name_rule="path")
    spec = obj.get("spec") or {}
    problem = _request_problem(spec.get("request"))
    if problem:
        causes.append(v.invalid("spec.request", spec.get("request") or "", problem))
    usages = spec.get("usages") or []
    if not usages:
        causes.append(v.required("spec.usages"))
    old_usages = ((old or {}).get("spec") or {}).get("usages") or []
    if not any(u not in USAGES for u in old_usages):
        causes += [v.not_supported(f"spec.usages[{i}]", u, USAGES) for i, u in enumerate(usages) if u not in USAGES]
    if len(set(old_usages)) == len(old_usages):
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                causes.append(v.duplicate(f"spec.usages[{i}]", usage))
            seen.add(usage)
    signer = spec.get("signerName") or ""
    old_signer = ((old or {}).get("spec") or {}).get("signerName")
    if signer == LEGACY_UNKNOWN_SIGNER and old_signer != LEGACY_UNKNOWN_SIGNER:
        causes.append(v.invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
    elif signer != LEGACY_UNKNOWN_SIGNER:
        causes += signer_name("spec.signerName", signer)
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        causes.append(v.invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 600 seconds (10 minutes)"))
    causes += _validate_conditions(obj, old)
    certificate = (obj.get("status") or {}).get("certificate")
    if not allow_certificate_content:
        problem = _certificate_problem(certificate)
        if problem:
            causes.append(v.invalid("status.certificate", "<certificate data>", problem))
    return causes


def _validate_conditions(obj: Obj, old: Obj | None) -> Causes:
    """Types present and unique, status True/False/Unknown (only True for Approved/Denied/Failed),
    never both Approved and Denied. What the stored object already breaks stays tolerated."""
    old_conditions = conditions(old) if old is not None else []
    old_types = [c.get("type") for c in old_conditions]
    allow_both = bool(old is not None and of_type(old, APPROVED) and of_type(old, DENIED))
    allow_dupes = len(set(old_types)) != len(old_types)
    allow_empty = "" in old_types or None in old_types
    causes: Causes = []
    seen: set[Any] = set()
    approved = denied = False
    for i, condition in enumerate(conditions(obj)):
        kind, status = condition.get("type") or "", condition.get("status") or ""
        if not kind and not allow_empty:
            causes.append(v.required(f"{_CONDITIONS}[{i}].type"))
        allowed = ["True"] if kind in _TRUE_ONLY else ["False", "True", "Unknown"]
        if not status:
            causes.append(v.required(f"{_CONDITIONS}[{i}].status"))
        elif status not in allowed:
            causes.append(v.not_supported(f"{_CONDITIONS}[{i}].status", status, allowed))
        if not allow_both and kind in (APPROVED, DENIED):
            approved, denied = approved or kind == APPROVED, denied or kind == DENIED
            if approved and denied:
                causes.append(v.invalid(_CONDITIONS, kind, "Approved and Denied conditions are mutually exclusive"))
        if not allow_dupes:
            if kind in seen:
                causes.append(v.duplicate(f"{_CONDITIONS}[{i}].type", kind))
            seen.add(kind)
    return causes


def validate_update(new: Obj, old: Obj, *, allow_approval: bool = False, allow_certificate: bool = False) -> Causes:
    new_cert = (new.get("status") or {}).get("certificate")
    old_cert = (old.get("status") or {}).get("certificate")
    # An update that leaves status.certificate alone, or one over a stored certificate that was
    # already unparseable, is not judged on the certificate's content.
    untouched = new_cert == old_cert or _certificate_problem(old_cert) is not None
    causes = validate(new, old, allow_certificate_content=untouched)
    for kind in (APPROVED, DENIED, FAILED):
        if len(of_type(new, kind)) < len(of_type(old, kind)):
            causes.append(v.forbidden(_CONDITIONS, f'updates may not remove a condition of type "{kind}"'))
    if not allow_approval:
        for kind in (APPROVED, DENIED):
            before, after = of_type(old, kind), of_type(new, kind)
            if len(after) > len(before):
                causes.append(v.forbidden(_CONDITIONS, f'updates may not add a condition of type "{kind}"'))
            elif len(after) == len(before) and after != before:
                causes.append(v.forbidden(_CONDITIONS, f'updates may not modify a condition of type "{kind}"'))
    if new_cert != old_cert:
        if not allow_certificate:
            causes.append(v.forbidden("status.certificate", "updates may not set certificate content"))
        elif old_cert:
            causes.append(v.forbidden("status.certificate", "updates may not modify existing certificate content"))
    return causes + v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})


def signer_name(field: str, name: str) -> Causes:
    """ValidateSignerName: `<domain with a dot>/<dot-separated subdomains>`, at most 571 characters."""
    if not name:
        return [v.required(field)]
    segments = name.split("/")
    if len(segments) != 2:
        return [v.invalid(field, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    domain, path = segments
    causes: Causes = []
    if len(domain) > 253:
        causes.append(v.too_long(field, 253))
    for label in domain.split("."):
        problems = v.dns1123_label(label)
        if problems:
            causes += [v.invalid(field, domain, f'validating label "{label}": {p}') for p in problems]
            break
    if len(domain.split(".")) < 2:
        causes.append(v.invalid(field, domain, "should be a domain with at least two segments separated by dots"))
    for label in path.split("."):
        problems = v.dns1123_subdomain(label)
        if problems:
            causes += [v.invalid(field, path, f'validating label "{label}": {p}') for p in problems]
            break
    if len(name) > 253 + 253 + 63 + 1 + 1:
        causes.append(v.too_long(field, 571))
    return causes


def _decoded(value: Any) -> bytes | None:
    """A []byte field as JSON carries it (base64); None when it is not base64 at all."""
    if not value:
        return b""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _request_problem(value: Any) -> str | None:
    """Why spec.request is not a signed PEM "CERTIFICATE REQUEST" (upstream's validateCSR)."""
    data = _decoded(value) or b""
    block = _PEM.search(data)
    if block is None or block.group(1) != b"CERTIFICATE REQUEST":
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        request = x509.load_pem_x509_csr(block.group(0))
    except ValueError as exc:
        return f"x509: {exc}"
    if not request.is_signature_valid:
        return _signature_failure(request.public_key())
    return None


def _signature_failure(key: Any) -> str:
    """Go's CheckSignature error for the kind of key that (did not) sign the request."""
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    return "x509: signature verification failure"


def _certificate_problem(value: Any) -> str | None:
    """Why status.certificate is not a chain of PEM CERTIFICATE blocks (upstream's validateCertificate)."""
    data = _decoded(value)
    if data is None:
        return "must contain at least one CERTIFICATE PEM block"
    if not data:
        return None
    blocks = list(_PEM.finditer(data))
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    for block in blocks:
        kind = block.group(1).decode(errors="replace")
        if kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind}"'
        if b":" in block.group(2).split(b"\n", 1)[0]:  # "Name: value" lines open a block with headers
            return "no PEM block headers are permitted"
        try:
            x509.load_pem_x509_certificate(block.group(0))
        except ValueError as exc:
            return f"x509: {exc}"
    return None
