"""``goodbench sign FILE``: sign a valid results file written unsigned (``--no-sign``, or before
the key existed) with the user's key, into a new file; FILE itself is never changed
(docs/submitting.md, "Sign a file written unsigned"; docs/rules.md, "Signed results").

What it signs is what ``goodbench run`` signs as it ends (:func:`suite.trust.signing.seal`): every
run id minted anew for the key, then the whole document. A signature records no time, so one
made later claims nothing about when; the store counts a file from when it is stored or
committed to, whenever it was signed. Refused, with nothing written: a file the validator
refuses, one signed already, a reproduction (its signature is the word of the reviewer who ran it
again, which a file in hand cannot give), an output inside a results store (only ``goodbench submit``
writes there: :func:`suite.store.naming.store_reason`) and, as a guard against a mistake, one whose run ids were
minted for another key (a signed file whose signature was taken off). That guard is no protection
of another's runs: with their ``run_id_nonce`` taken off too, the ids read as unsigned ones and the
file is signed. What keeps a run its owner's is the store's copy detection (the same run ids, step
times or step-time fingerprint: docs/rules.md, "One run, one owner") and signing before sharing."""
from __future__ import annotations

import argparse
from pathlib import Path

from suite.commands.common import output_path

SUFFIX = ".signed.json"  # the default output: FILE with this suffix, beside it


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench sign`` and its arguments."""
    p = commands.add_parser("sign", help="sign an unsigned results file with your key, into a new file",
                            description="Validate FILE, mint its run ids for your signing key (goodbench keygen) "
                                        "and write it signed into a new file, as goodbench run signs the file it "
                                        "writes. FILE is not changed; no file is overwritten. Refused: an "
                                        "invalid file, a signed one, a reproduction (signed by the reviewer who "
                                        "ran it again, as goodbench reproduce ends) and, against a mistake, one "
                                        "whose run ids another key minted (a signed file with its signature taken "
                                        "off; with its run_id_nonce taken off too, it is signed). A signature "
                                        "records no time: the signed file counts from when it is stored or "
                                        "committed to, and a run stays its owner's by the store's copy detection "
                                        "and by signing before sharing (docs/rules.md, \"One run, one owner\").")
    p.add_argument("file", metavar="FILE", help="the unsigned results file")
    p.add_argument("-o", "--output", type=output_path, metavar="OUT",
                   help=f"the signed file to write (default: FILE with {SUFFIX}, beside it); never overwritten, "
                        "never inside a results store (only goodbench submit writes there)")
    return p


def run(args) -> int:
    """Sign FILE into OUT and say so; 0, or a :class:`GoodbenchError` (one line, nothing written)."""
    from suite.record import results
    from suite.record.errors import GoodbenchError
    from suite.record.text import safe
    from suite.store import naming
    from suite.trust import signing
    from suite.validate import check_document, load

    name = safe(args.file, 200)
    doc, problems = load(args.file)  # bounded: size, encoding, nesting, numbers; a link is refused
    problems = problems or check_document(doc)
    if problems:
        more = f" (and {len(problems) - 1} more: goodbench validate {name})" if len(problems) > 1 else ""
        raise GoodbenchError(f"not signed: {problems[0].line(args.file)}{more}")
    out = Path(args.output) if args.output else Path(args.file).with_suffix(SUFFIX)  # a file read has a name
    shown = safe(str(out), 200)
    store = naming.store_reason(out.parent)
    if store is not None:  # the site would read it, never stored by submit (trial 13)
        raise GoodbenchError(f"not signed: {shown} is in a results store ({store}), where only goodbench submit "
                             f"writes: give -o a path outside it, then goodbench submit the signed file")
    if out.exists() or out.is_symlink():
        raise GoodbenchError(f"{shown} exists; goodbench sign never overwrites a file (give another -o)")
    key = signing.load_key()
    public = None if key is None else signing.public_bytes(key)
    refusal = _refusal(doc, name, public)
    if refusal is not None:
        raise GoodbenchError(refusal)
    if key is None or public is None:
        raise GoodbenchError(f"no signing key at {signing.key_path()}: `goodbench keygen` makes one, "
                             f"then `goodbench sign {name}`")
    renamed = signing.bind_runs(doc, public)
    signed = signing.sign(doc, key)  # bind_runs and sign: signing.seal, the ids counted
    problems = check_document(signed)
    if problems:  # cannot happen to a valid file; never written if it does
        raise GoodbenchError(f"not signed: signed, the file would not be valid: {problems[0].line(shown)}")
    try:
        results.write(out, signed)  # atomic, and never over a file that appeared meanwhile
    except FileExistsError:
        raise GoodbenchError(f"{shown} exists; goodbench sign never overwrites a file (give another -o)") from None
    runs = len(signed["runs"])
    print(f"{shown}: {name} signed by {signing.fingerprint(public)} (key {signing.key_path()}); {name} is unchanged")
    print(f"run ids: {renamed} of {runs} minted anew for the key (a signed file's run ids are its key's)"
          if renamed else f"run ids: all {runs} minted for the key already")
    print("validated: ok")
    print(f"note: signed now, after its run (a signature records no time): {shown} counts from when it is "
          "stored or committed to (goodbench submit), as any signed file; a signed record of its runs stored "
          "before it stays first (this one is then shown as disputed), an unsigned one becomes its copy "
          "(docs/rules.md, \"One run, one owner\")")
    return 0


def _refusal(doc: dict, name: str, public: bytes | None) -> str | None:
    """Why a valid document is not the user's to sign (``public``: their key's, None without one),
    in one line; None when nothing in it says so."""
    from suite.record.text import safe
    from suite.trust import signing

    signer = signing.signer(doc)  # a valid file's signature verifies
    if signer is not None:
        whose = "your key" if public is not None and signer == signing.fingerprint(public) else "another key"
        return (f"{name} is signed already, by {signing.short(signer)} ({whose}): a signed file is not "
                "signed again")
    if isinstance(doc["settings"].get("reproduces"), dict):
        return (f"{name} is a reproduction: its signature is the word of the reviewer who trained it again, "
                "given as goodbench reproduce ends, and a file in hand does not say who ran it; run "
                "goodbench reproduce again with your key")
    foreign = [] if public is None else signing.minted_for_another(doc, public)
    if foreign:
        run_id = safe(doc["runs"][foreign[0]].get("run_id"), 40)
        return (f"{name}: the id of run {run_id} was minted for another signing key (its run_id_nonce), as in "
                "a file that key signed and whose signature was taken off: not signed, lest you sign another's "
                "run by mistake. A guard, not a protection: with its run_id_nonce taken off too it would be "
                "signed; a run stays its owner's by the store's copy detection (docs/rules.md, \"One run, one "
                "owner\") and by being signed before it is shared")
    return None
