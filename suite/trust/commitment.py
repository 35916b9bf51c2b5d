"""A commitment's signature (docs/submitting.md, "Commit first"): the line ``goodbench submit
--commit`` appends to the ledger names a file by its sha256 and is signed by the key that signed
the file, so that the check of a pull request knows whose commitments it counts (a cap per signer:
:mod:`suite.site.publish`) and nobody can change a commitment's stamp or spend another key's share.

The signature is Ed25519 over ``goodbench-commitment-v1\\n`` + the file's name + ``\\n`` + the
stamp. It says who committed, and when they say they did; the stamp's bounds are the pull
request's check's. Torch-free; signing and checking need the package cryptography.
"""
from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from suite.trust import signing

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

DOMAIN = b"goodbench-commitment-v1\n"
FIELDS = ("key", "signature")  # what a signed commitment line holds beside "file" and "committed_at"


def message(name: str, stamp: str) -> bytes:
    """What a commitment's signature covers: the domain line, the file's name and the stamp."""
    return DOMAIN + f"{name}\n{stamp}".encode()


def sign(name: str, stamp: str, key: Ed25519PrivateKey) -> dict[str, str]:
    """The fields a signed commitment line adds: the raw public key and the signature, base64."""
    return {"key": base64.b64encode(signing.public_bytes(key)).decode(),
            "signature": base64.b64encode(key.sign(message(name, stamp))).decode()}


def signer(entry: Any) -> str | None:
    """The fingerprint of the key that signed a commitment line (a parsed ledger line), when its
    signature verifies over its file and stamp; None otherwise (unsigned, malformed, forged).
    :class:`suite.trust.signing.CannotVerify` where the package cryptography is missing."""
    if not isinstance(entry, dict):
        return None
    name, stamp = entry.get("file"), entry.get("committed_at")
    public = signing.decode(entry.get("key"), signing.PUBLIC_KEY_BYTES)
    value = signing.decode(entry.get("signature"), signing.SIGNATURE_BYTES)
    if not isinstance(name, str) or not isinstance(stamp, str) or public is None or value is None:
        return None
    if not signing.can_verify():
        raise signing.CannotVerify("commitments cannot be checked here: the package cryptography is not installed")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public).verify(value, message(name, stamp))
    except (InvalidSignature, ValueError, UnicodeEncodeError):
        return None
    return signing.fingerprint(public)


def claimed_signer(entry: Any) -> str | None:
    """The fingerprint a commitment line names by its key, not verified (a line of the store's
    ledger, verified when its pull request was checked); None without a key."""
    public = signing.decode(entry.get("key"), signing.PUBLIC_KEY_BYTES) if isinstance(entry, dict) else None
    return None if public is None else signing.fingerprint(public)
