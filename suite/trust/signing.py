"""Signed results (docs/rules.md, "Signed results"): the submitter's Ed25519 key, signing a
results document, checking a signature, and run ids bound to the key.

The key lives in the user's config directory (:func:`config_dir`): ``signing-key.pem`` (PKCS8
PEM, unencrypted, mode 0600, created once and never overwritten) and ``signing-key.pub`` (its
public key, PEM). A signature is the document's top-level ``"signature"`` section; it covers the
canonical JSON of the whole document without that section (:func:`message`), so the same check
works on a file and on a document in memory. A run id minted for a key is
``sha256("goodbench-run-id\\0" + public key + nonce)`` (first 32 hex digits), the random nonce
stored beside it as ``run_id_nonce``: a run copied into another file keeps an id that only its
own key can sign. Torch-free; ``cryptography`` is imported by the functions that need it.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
import secrets
import stat
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.record import dependencies
from suite.record.errors import GoodbenchError
from suite.record.results import dumps, write_atomic

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ALGORITHM = "ed25519"
DOMAIN = b"goodbench-results-v1\n"   # prefixed to every signed message
RUN_ID_DOMAIN = b"goodbench-run-id\0"  # prefixed to every bound run id's hash input
KEY_FILE, PUBLIC_FILE = "signing-key.pem", "signing-key.pub"
SECTION = "signature"
FIELDS = ("algorithm", "public_key", "fingerprint", "value")
PUBLIC_KEY_BYTES, SIGNATURE_BYTES, NONCE_BYTES = 32, 64, 16
CRYPTO = "cryptography.hazmat.primitives.asymmetric.ed25519"  # the module that signs and checks


# ---------------------------------------------------------------- where the key lives
def config_dir() -> Path:
    """``$GOODBENCH_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/goodbench``, else ``~/.config/goodbench``."""
    explicit = os.environ.get("GOODBENCH_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"  # XDG: relative paths are ignored
    return base / "goodbench"


def key_path(directory: Path | None = None) -> Path:
    """The private key's file."""
    return (directory or config_dir()) / KEY_FILE


# ---------------------------------------------------------------- keys
def fingerprint(public_key: bytes) -> str:
    """``SHA256:`` and the unpadded base64 of sha256 of the raw 32-byte public key (OpenSSH's style)."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(public_key).digest()).decode().rstrip("=")


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    """The raw 32-byte public key of a private key."""
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def keygen(directory: Path | None = None) -> tuple[Path, str]:
    """Make a new key in ``directory`` (default :func:`config_dir`, created 0700): the private key
    written 0600 through a temp file and a hard link, which never replaces an existing key.
    Returns (the private key's path, its fingerprint); :class:`GoodbenchError` when a key is there."""
    if not dependencies.installed(CRYPTO):
        raise GoodbenchError("keygen needs the package cryptography, which is not installed here")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    directory = directory or config_dir()
    path = key_path(directory)
    if path.exists() or path.is_symlink():
        raise GoodbenchError(f"{path} exists; goodbench never overwrites a signing key (results signed "
                             "with it name it; move it away first to make a new one)")
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{KEY_FILE}.", suffix=".tmp")  # created 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails if a key appeared meanwhile: never replaced
        except FileExistsError:
            raise GoodbenchError(f"{path} exists; goodbench never overwrites a signing key") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    write_atomic(directory / PUBLIC_FILE, public_pem)  # derived from the key: rewritten with it
    return path, fingerprint(public_bytes(key))


def load_key(directory: Path | None = None) -> Ed25519PrivateKey | None:
    """The private key, or None when there is none; :class:`GoodbenchError` (one line) for a key
    file that others may read, that is not an unencrypted Ed25519 PKCS8 PEM key, or that exists
    where the package cryptography is missing (no key: cryptography is never imported)."""
    path = key_path(directory)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GoodbenchError(f"cannot read the signing key {path}: {exc.strerror or exc}") from None
    if not dependencies.installed(CRYPTO):
        os.close(fd)
        raise GoodbenchError(f"a signing key is at {path}, but the package cryptography, which signs with "
                             "it, is not installed here: install it, or write unsigned results with "
                             "--no-sign")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise GoodbenchError(f"the signing key {path} is not a regular file")
        if mode & 0o077:
            raise GoodbenchError(f"the signing key {path} may be read by others (mode {mode & 0o777:04o}); "
                                 f"`chmod 600 {path}`")
        pem = fh.read(64 * 1024)
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise GoodbenchError(f"the signing key {path} is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise GoodbenchError(f"the signing key {path} is not an Ed25519 key")
    return key


# ---------------------------------------------------------------- run ids bound to a key
def bound_run_id(public_key: bytes, nonce: bytes) -> str:
    """The run id minted for ``public_key`` with ``nonce``: 32 hex digits."""
    return hashlib.sha256(RUN_ID_DOMAIN + public_key + nonce).hexdigest()[:32]


def new_run_id(public_key: bytes | None) -> dict[str, str]:
    """A new run's ``run_id`` (and ``run_id_nonce``): bound to ``public_key`` when given, else a
    random uuid4 without a nonce."""
    if public_key is None:
        return {"run_id": uuid.uuid4().hex}
    nonce = secrets.token_bytes(NONCE_BYTES)
    return {"run_id": bound_run_id(public_key, nonce), "run_id_nonce": nonce.hex()}


def is_bound(run: Any, public_key: bytes) -> bool:
    """True when the run's id is the one minted for ``public_key`` with its ``run_id_nonce``."""
    if not isinstance(run, dict):
        return False
    nonce = run.get("run_id_nonce")
    try:
        raw = bytes.fromhex(nonce) if isinstance(nonce, str) and len(nonce) == 2 * NONCE_BYTES else None
    except ValueError:
        raw = None
    return raw is not None and run.get("run_id") == bound_run_id(public_key, raw)


def minted_for_another(doc: dict, public_key: bytes) -> list[int]:
    """The indexes of the runs whose id carries a ``run_id_nonce`` but was not minted for
    ``public_key`` with it: runs of a file another key signed (an unsigned run has no nonce)."""
    return [i for i, run in enumerate(doc["runs"])
            if isinstance(run, dict) and "run_id_nonce" in run and not is_bound(run, public_key)]


def bind_runs(doc: dict, public_key: bytes) -> int:
    """Mint new bound ids for the runs whose id is not bound to ``public_key`` (a run finished
    before the key existed and kept by a resumed suite), renaming them in ``settings.reproduces``
    and ``second_clock`` too; returns how many were renamed."""
    renamed: dict[str, str] = {}
    for run in doc["runs"]:
        if not is_bound(run, public_key):
            fresh = new_run_id(public_key)
            renamed[run["run_id"]] = fresh["run_id"]
            run.update(fresh)
    section = doc["settings"].get("reproduces")
    for entry in section["runs"] if isinstance(section, dict) else []:
        entry["run_id"] = renamed.get(entry["run_id"], entry["run_id"])
    clock = doc.get("second_clock")  # a reproduction of own code: its re-run's stamps name its runs
    for entry in clock["runs"] if isinstance(clock, dict) and isinstance(clock.get("runs"), list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("run_id"), str):
            entry["run_id"] = renamed.get(entry["run_id"], entry["run_id"])
    return len(renamed)


# ---------------------------------------------------------------- signing and checking
def message(doc: dict) -> bytes:
    """What a signature covers: the domain line, then the canonical JSON (sorted keys, no spaces,
    UTF-8) of the whole document without its ``signature`` section."""
    body = {k: v for k, v in doc.items() if k != SECTION}
    return DOMAIN + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                               allow_nan=False).encode("utf-8")


def sign(doc: dict, key: Ed25519PrivateKey) -> dict:
    """The document with its ``signature`` section (a new dict; an old section is replaced).

    The document is first taken through JSON as the file will hold it, so that the signed
    message is the one a reader of the file recomputes."""
    plain = json.loads(dumps({k: v for k, v in doc.items() if k != SECTION}))
    public = public_bytes(key)
    plain[SECTION] = {"algorithm": ALGORITHM, "public_key": base64.b64encode(public).decode(),
                      "fingerprint": fingerprint(public),
                      "value": base64.b64encode(key.sign(message(plain))).decode()}
    return plain


def seal(doc: dict, key: Ed25519PrivateKey) -> dict:
    """Bind every run's id to the key (:func:`bind_runs`), then sign (:func:`sign`)."""
    bind_runs(doc, public_bytes(key))
    return sign(doc, key)


def _decode(text: Any, size: int) -> bytes | None:
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == size else None


def decode(text: Any, size: int) -> bytes | None:
    """The ``size`` bytes whose base64 ``text`` is; None for anything else."""
    return _decode(text, size)


def section_problem(doc: dict) -> str | None:
    """Why the document's ``signature`` section is malformed (None: well formed, or absent)."""
    section = doc.get(SECTION)
    if section is None:
        return None
    if not isinstance(section, dict):
        return "not an object"
    missing = [f for f in FIELDS if f not in section]
    if missing:
        return f"lacks {', '.join(missing)}"
    if section["algorithm"] != ALGORITHM:
        return f"algorithm {str(section['algorithm'])[:40]!r} is not {ALGORITHM!r}"
    if _decode(section["public_key"], PUBLIC_KEY_BYTES) is None:
        return f"public_key is not the base64 of {PUBLIC_KEY_BYTES} bytes"
    if _decode(section["value"], SIGNATURE_BYTES) is None:
        return f"value is not the base64 of {SIGNATURE_BYTES} bytes"
    return None


def public_key_of(doc: dict) -> bytes | None:
    """The raw public key a well-formed ``signature`` section names (not yet verified), else None
    (a section that is null, too: a stored file no validator passed)."""
    if section_problem(doc) is not None or doc.get(SECTION) is None:
        return None
    return _decode(doc[SECTION]["public_key"], PUBLIC_KEY_BYTES)


class CannotVerify(GoodbenchError):
    """The package cryptography, which checks signatures, is not installed here."""


def can_verify() -> bool:
    """Whether signatures can be checked here (the package cryptography imports)."""
    return dependencies.installed(CRYPTO)


def verify(doc: dict) -> bool:
    """True when the document's signature is well formed, names the fingerprint of its public
    key and verifies over the document without it; :class:`CannotVerify` where the package
    cryptography is missing (never a verdict made without checking)."""
    if not can_verify():
        raise CannotVerify("signatures cannot be checked here: the package cryptography is not installed")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    public = public_key_of(doc)
    if public is None or doc[SECTION]["fingerprint"] != fingerprint(public):
        return False
    value = _decode(doc[SECTION]["value"], SIGNATURE_BYTES)
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(value, message(doc))  # type: ignore[arg-type]
    except (InvalidSignature, ValueError, TypeError):  # TypeError/ValueError: not JSON-serialisable
        return False
    return True


def signer(doc: Any) -> str | None:
    """The fingerprint of the key that signed ``doc``, when its signature verifies; None for an
    unsigned document or a signature that does not hold."""
    if not isinstance(doc, dict) or SECTION not in doc:
        return None
    try:
        return doc[SECTION]["fingerprint"] if verify(doc) else None
    except (UnicodeEncodeError, RecursionError):  # text or nesting the validator refuses anyway
        return None


def closing_line(doc: dict, no_sign: bool) -> str:
    """What ``run`` and ``reproduce`` say last about the file they wrote: its signer, or why unsigned."""
    if SECTION in doc:
        return f"signed by {doc[SECTION]['fingerprint']} (key {key_path()})"
    if no_sign:
        return "unsigned (--no-sign)"
    return "unsigned: no key; `goodbench keygen` makes one"


def short(fp: str) -> str:
    """A fingerprint abbreviated for tables: ``SHA256:`` and its first 12 characters, then "…"."""
    return fp[:19] + "…" if len(fp) > 19 else fp
