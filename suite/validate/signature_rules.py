"""The rules of a signed results file (docs/rules.md, "Signed results"): its ``signature`` section
verifies over the whole file, and every run's id was minted for the signing key. An unsigned
file has no problem here. The signature is checked over the parsed document written out
canonically (:func:`suite.trust.signing.message`), so a file and a document in memory read alike."""
from __future__ import annotations

import datetime as dt

from suite.record.text import safe
from suite.trust import signing
from suite.validate.registry import Problem, code, document_rule

code("signature", "a signature that is malformed, of an unknown algorithm, names another key's "
                  "fingerprint, or does not verify over the file (changed after it was signed)")
code("signature-unchecked", "a signed file whose signature could not be checked here (the package "
                            "cryptography is not installed): validate again where it is")
code("run-key-binding", "a run of a signed file whose id was not minted for the signing key, or "
                        "that lacks its run_id_nonce")

Runs = list[tuple[int, dict]]


@document_rule("signature", "signature-unchecked")
def _check_signature(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A signature, when present, is well formed and verifies over the whole file."""
    if signing.SECTION not in doc:
        return []
    why = signing.section_problem(doc)
    if why is not None:
        return [Problem("signature", "signature", safe(why))]
    public = signing.public_key_of(doc)
    if public is None:  # cannot happen once well formed; nothing more to check
        return []
    if doc["signature"]["fingerprint"] != signing.fingerprint(public):
        return [Problem("signature", "signature.fingerprint",
                        f"is not the fingerprint of public_key ({signing.fingerprint(public)})")]
    if not signing.can_verify():
        return [Problem("signature-unchecked", "signature.value",
                        "not checked: the package cryptography is not installed here (`goodbench info`)")]
    if not signing.verify(doc):
        return [Problem("signature", "signature.value",
                        "does not verify over the file: it was changed after it was signed")]
    return []


@document_rule("run-key-binding")
def _check_run_binding(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Every run of a signed file has an id minted for the signing key, with its nonce beside it."""
    public = signing.public_key_of(doc)
    if public is None:
        return []  # unsigned, or a malformed signature (reported as such)
    problems = []
    for i, run in runs:
        if "run_id_nonce" not in run:
            problems.append(Problem("run-key-binding", f"runs[{i}].run_id_nonce",
                                    "missing: a signed file's run ids are minted for its key"))
        elif not signing.is_bound(run, public):
            problems.append(Problem("run-key-binding", f"runs[{i}].run_id",
                                    f"run {run['run_id']} was not minted for the signing key "
                                    f"{signing.fingerprint(public)}: a run of another key cannot be "
                                    "signed with this one"))
    return problems
