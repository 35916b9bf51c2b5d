"""goodbench where the GPU image's packages are missing: no jsonschema, no fastjsonschema, no
cryptography (docs/measurement.md's GPU figures). Each use says what it cannot do, in one line, and never calls a
document valid without checking it (suite/record/dependencies.py, suite/schema/checker.py)."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import forging
import pytest

from suite import validate as v
from suite.record import dependencies
from suite.record.errors import GoodbenchError
from suite.trust import signing
from suite.validate import schema

REPO = forging.REPO
CRYPTO = signing.CRYPTO


@pytest.fixture
def lacking(monkeypatch):
    """``lacking("jsonschema", ...)``: those modules do not import, as on the GPU image."""
    def without(*modules):
        real = dependencies.installed
        monkeypatch.setattr(dependencies, "installed", lambda module: module not in modules and real(module))
    return without


def _bad_steps() -> dict:
    doc = copy.deepcopy(forging.real("dlrm-small"))
    doc["runs"][0]["steps"] = "many"
    doc["runs"][0]["seed"] = -1
    return doc


def test_with_jsonschema_every_schema_error_is_listed():
    problems = v.check_document(_bad_steps())
    assert {p.field for p in problems if p.code == "schema"} == {"runs[0].steps", "runs[0].seed"}


def test_without_jsonschema_fastjsonschema_gives_the_first_error(lacking):
    lacking("jsonschema")
    problems = v.check_document(_bad_steps())
    schema_problems = [p for p in problems if p.code == "schema"]
    assert len(schema_problems) == 1 and schema_problems[0].field.startswith("runs[0].")
    assert schema_problems[0].reason.endswith("(the first error only: jsonschema, which lists every error, "
                                              "is not installed)")
    assert v.check_document(forging.real("dlrm-small")) == []  # a valid file still passes


def test_with_neither_the_schema_is_unchecked_and_the_rules_still_run(lacking):
    lacking("jsonschema", "fastjsonschema")
    valid = forging.real("dlrm-small")
    assert [(p.code, p.field) for p in v.check_document(valid)] == [("schema-unchecked", "")]
    faster = copy.deepcopy(valid)
    faster["runs"][0]["metrics"]["throughput"]["samples_per_s"] *= 1.5
    assert [p.code for p in v.check_document(faster)] == ["schema-unchecked", "summary-mismatch", "throughput-mismatch"]
    assert [p.code for p in v.check_document([1, 2])] == ["schema"]  # no object: refused without a library
    assert [p.code for p in v.check_document({"schema_version": 1, "runs": "x"})] == ["schema-unchecked"]


def test_the_schema_check_is_bounded_by_what_is_shown():
    """A file of many broken runs: jsonschema stops after MAX_PROBLEMS + 1 errors."""
    doc = copy.deepcopy(forging.real("dlrm-small"))
    doc["runs"] = [{} for _ in range(5000)]
    problems = schema.schema_problems(doc)
    assert len(problems) == v.MAX_PROBLEMS + 1


def test_without_cryptography_a_signed_file_is_unchecked_not_valid(tmp_path, lacking):
    key_dir = tmp_path / "key"
    signing.keygen(key_dir)
    signed = signing.seal(forging.real("dlrm-small"), signing.load_key(key_dir))
    assert v.check_document(signed) == []
    lacking(CRYPTO)
    assert [(p.code, p.field) for p in v.check_document(signed)] == [("signature-unchecked", "signature.value")]
    with pytest.raises(signing.CannotVerify):
        signing.signer(signed)
    assert v.check_document(forging.real("dlrm-small")) == []  # an unsigned file needs no cryptography


def test_without_cryptography_a_key_stops_signing_in_one_line_and_no_key_is_fine(tmp_path, lacking):
    signing.keygen(tmp_path / "key")
    lacking(CRYPTO)
    assert signing.load_key(tmp_path / "none") is None
    with pytest.raises(GoodbenchError, match=r"^a signing key is at .*cryptography.*--no-sign$"):
        signing.load_key(tmp_path / "key")
    with pytest.raises(GoodbenchError, match="keygen needs the package cryptography"):
        signing.keygen(tmp_path / "other")


@pytest.mark.slow
def test_the_cli_in_a_python_shaped_like_the_gpu_image(tmp_path):
    """benchmarks/gpu_image/sitecustomize.py blocks the three packages: validate answers in one
    line per problem (no traceback) and keygen says what it needs."""
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'benchmarks' / 'gpu_image'}{os.pathsep}{REPO}",
           "GOODBENCH_CONFIG_DIR": str(tmp_path / "config")}
    probe = subprocess.run([sys.executable, "-c", "import jsonschema"], env=env, capture_output=True, text=True)
    assert probe.returncode == 1 and "the GPU image lacks it" in probe.stderr
    doc = tmp_path / "run.json"
    doc.write_text(json.dumps(forging.real("dlrm-small")))
    out = subprocess.run([sys.executable, "-m", "suite", "validate", str(doc)], env=env, capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr + out.stdout
    assert out.stdout.splitlines() == [f"{doc}: {schema.UNCHECKED} [schema-unchecked]"]
    keygen = subprocess.run([sys.executable, "-m", "suite", "keygen"], env=env, capture_output=True, text=True,
                            cwd=tmp_path)
    assert keygen.returncode == 1 and "Traceback" not in keygen.stderr
    assert "keygen needs the package cryptography" in keygen.stderr
