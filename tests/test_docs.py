"""The docs follow the code: every field of the results format is documented in
docs/results-format.md, every repository path the docs name exists, docs/architecture.md names
every module, and the modules it calls torch-free import no torch."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "suite" / "schema" / "results-v1.json").read_text(encoding="utf-8"))
FORMAT_DOC = (REPO / "docs" / "results-format.md").read_text(encoding="utf-8")
ARCHITECTURE_DOC = REPO / "docs" / "architecture.md"

# Objects whose keys are data, not field names (a precision, "workload@scale", a metric's name).
KEYED_BY_DATA = {("settings", "matmul_ceiling"), ("summary",), ("runs", "curve"),
                 ("runs", "metrics", "final_quality"), ("runs", "telemetry", "summary", "slowdown_share")}


# ---------------------------------------------------------------- the schema's fields
def _resolve(node: dict) -> dict:
    """``node`` with its ``$ref`` (a ``#/$defs/...`` pointer) followed."""
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), ref
        target = SCHEMA
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
    return node


def schema_fields(node: dict = SCHEMA, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every field the schema names, as a path of names (``*``: a key that is data; an array's
    items share the array's path). Follows ``$ref``, ``properties``, ``required``, ``items``,
    ``additionalProperties``, ``anyOf``/``oneOf``/``allOf`` and ``if``/``then``/``else``."""
    node = _resolve(node)
    if not isinstance(node, dict):
        return set()
    found: set[tuple[str, ...]] = set()
    for name in node.get("required", ()):
        found.add(path + (name,))
    for name, sub in node.get("properties", {}).items():
        found.add(path + (name,))
        found |= schema_fields(sub, path + (name,))
    if isinstance(node.get("items"), dict):
        found |= schema_fields(node["items"], path)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        found |= schema_fields(extra, path + ("*",))
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, ()):
            found |= schema_fields(sub, path)
    for key in ("if", "then", "else"):
        if isinstance(node.get(key), dict):
            found |= schema_fields(node[key], path)
    return found


def example_fields() -> set[tuple[str, ...]]:
    """Every key of the page's example document (a real results file, shortened): the fields the
    code writes, the schema's or not."""
    block = FORMAT_DOC.split("## Example", 1)[1]
    text = re.search(r"```json\n(.*?)\n```", block, re.S).group(1)
    found: set[tuple[str, ...]] = set()

    def walk(value, path: tuple[str, ...]) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item, path)
        elif isinstance(value, dict):
            data_keys = path in KEYED_BY_DATA
            for key, sub in value.items():
                name = "*" if data_keys and key not in _named(path) else key
                found.add(path + (name,))
                walk(sub, path + (name,))

    walk(json.loads(text), ())
    return found


def _named(path: tuple[str, ...]) -> set[str]:
    """The keys that are field names in an object otherwise keyed by data (a curve point's)."""
    return {"step", "time_s", "train_loss"} if path == ("runs", "curve") else set()


# ---------------------------------------------------------------- the page's sections
def sections(doc: str) -> list[tuple[tuple[str, ...], str]]:
    """(path, own text) of every section that documents a part of the document: the heading's
    first backticked name (``## `runs[]` ``, ``### `metrics` `` inside it: ``runs.metrics``), or
    the root for "Top level". Code blocks, the example and text before the first section are left
    out: a field is documented by the prose and tables, not by appearing in a sample."""
    out: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[int, tuple[str, ...] | None]] = []
    current: tuple[str, ...] | None = None
    lines: list[str] = []
    doc = re.sub(r"```.*?```", "", doc, flags=re.S)
    for line in doc.splitlines() + ["# end"]:
        heading = re.match(r"(#+)\s+(.*)", line)
        if not heading:
            lines.append(line)
            continue
        if current is not None:
            out.append((current, "\n".join(lines)))
        lines = []
        level, title = len(heading.group(1)), heading.group(2)
        while stack and stack[-1][0] >= level:
            stack.pop()
        named = re.search(r"`([^`]+)`", title)
        parent = stack[-1][1] if stack else None
        if title.strip().lower() == "top level":
            current = ()
        elif named and level > 1:
            own = _names(named.group(1))
            if parent and own[:len(parent)] != parent:
                own = parent + own
            current = own
        else:
            current = None
        stack.append((level, current))
    return out


def _names(dotted: str) -> tuple[str, ...]:
    """``runs[].metrics`` → ``("runs", "metrics")``."""
    return tuple(part.removesuffix("[]") for part in dotted.strip().strip(".").split("."))


def _backticked(text: str) -> set[tuple[str, ...]]:
    """Every backticked name or dotted path in ``text`` (``.kind`` and ``ranks[]`` included)."""
    return {_names(t) for t in re.findall(r"`([A-Za-z_][\w\[\]]*(?:\.[\w\[\]]+)*|\.[\w\[\]]+)`", text)}


def undocumented(fields: set[tuple[str, ...]], doc: str = FORMAT_DOC) -> list[str]:
    """The fields that the section documenting their parent does not name in backticks.

    The section is the deepest one whose path starts the field's parent path (a field may also
    have a section of its own). Within it the field counts as named by its path relative to the
    section, by any end of that path (``exposed_share``, ``communication.exposed_share``), or
    by a longer path that starts with it (``suite.name`` names ``suite``)."""
    parts = sections(doc)
    missing = []
    for field in sorted(fields):
        if field[-1] == "*":
            continue  # an entry of an object keyed by data: the object's own row describes it
        if any(path == field for path, _ in parts):
            continue  # the field has a section of its own
        parent = field[:-1]
        fitting = [(path, text) for path, text in parts if parent[:len(path)] == path]
        if not fitting:
            missing.append(".".join(field) + " (no section for " + (".".join(parent) or "the top level") + ")")
            continue
        path, text = max(fitting, key=lambda pt: len(pt[0]))
        relative = field[len(path):]
        names = _backticked(text)
        ends = {relative[i:] for i in range(len(relative)) if "*" not in relative[i:]}
        if names & ends or any(n[:len(relative)] == relative for n in names):
            continue
        missing.append(".".join(field))
    return missing


def test_every_schema_field_is_documented_in_results_format():
    fields = schema_fields()
    assert len(fields) > 150  # the walk reached the whole schema
    missing = undocumented(fields)
    assert not missing, "fields of suite/schema/results-v1.json not documented in docs/results-format.md: " \
        + ", ".join(missing)


def test_every_field_of_the_example_is_documented_in_results_format():
    fields = example_fields()
    assert ("settings", "matmul_ceiling", "*", "trials_flops") in fields
    missing = undocumented(fields)
    assert not missing, "fields of the example in docs/results-format.md not documented there: " \
        + ", ".join(missing)


def test_every_schema_definition_is_used():
    """The walk reaches ``$defs`` through ``$ref``; an unused definition would escape it."""
    text = json.dumps(SCHEMA)
    unused = [name for name in SCHEMA.get("$defs", {}) if f'"#/$defs/{name}"' not in text]
    assert not unused, unused


def test_the_check_sees_a_missing_field():
    doc = FORMAT_DOC.replace("`exposed_share`", "`exposed`")
    assert "runs.distributed.communication.exposed_share" in undocumented(schema_fields(), doc)
    in_example_only = ("runs", "metrics", "throughput_status")
    doc = "## Top level\n`runs[]`\n## `runs[]`\n`metrics`\n### `metrics`\n`x`\n```\n`throughput_status`\n```\n"
    assert undocumented({in_example_only}, doc) == ["runs.metrics.throughput_status"]
    assert undocumented({in_example_only}, doc.replace("`x`", "`throughput_status`")) == []


# ---------------------------------------------------------------- paths and modules
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# outputs of the commands the docs show, not files of the repository
GENERATED = ("site/_build", "benchmarks/baselines", "results/ledger.jsonl")  # the ledger: written by the first submit


def test_every_path_the_docs_name_exists():
    missing = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for found in re.findall(r"(?<![\w./-])((?:suite|workloads|benchmarks|tests|docs|site|results|\.ci)"
                                r"/[\w./<>*-]*)", text):
            path = found.rstrip(".,:;)")
            if path.startswith(GENERATED) or "<" in path or "*" in path:
                continue
            if not (REPO / path).exists():
                missing.append(f"{page.name}: {path}")
    assert not missing, missing


def test_architecture_names_every_module():
    """Each module of suite/'s root and of its stage packages (validate/, site/, mlperf/ and
    commands/ are described with their own modules where they matter), of workloads/, each
    workload's folder, and each package of suite/, by its path inside suite/ or workloads/
    (``cli.py``, ``meters/ceiling.py``, ``lm/gpt.py``, ``validate/``), with or without that prefix."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    wanted = [("workloads", package.name + "/") for package in sorted((REPO / "workloads").iterdir())
              if (package / "__init__.py").is_file()]
    stages = [p.name for p in sorted((REPO / "suite").iterdir()) if (p / "__init__.py").is_file()
              and p.name not in ("validate", "site", "mlperf", "commands", "schema")]  # those: their own pages
    for top, folders in (("suite", ("", *stages, "run/reproduce")), ("workloads", ("", "lm"))):
        for folder in folders:
            for module in sorted((REPO / top / folder).glob("*.py")):
                if module.name not in ("__init__.py", "__main__.py"):
                    wanted.append((top, str(module.relative_to(REPO / top))))
    wanted += [("suite", package.name + "/") for package in sorted((REPO / "suite").iterdir())
               if (package / "__init__.py").is_file()]
    unnamed = [f"{top}/{rel}" for top, rel in wanted
               if not re.search(rf"(?<![\w/])(?:{top}/)?{re.escape(rel)}", text)]
    assert not unnamed, f"docs/architecture.md does not name: {unnamed}"


def test_run_refuses_bad_arguments_and_a_taken_output_before_importing_torch(tmp_path):
    """`goodbench run` refuses what needs no torch (an unknown workload, a taken -o) at once."""
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    code = ("import sys\nfrom suite import cli\n"
            "def status(argv):\n"
            "    try:\n        return cli.main(argv)\n"
            "    except SystemExit as exc:  # a usage error\n        return exc.code\n"
            f"codes = [status(['run', '-w', 'no-such-workload']), status(['run', '-o', {str(taken)!r}])]\n"
            "print(codes, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[2, 1] False", out.stdout + out.stderr
    assert "never overwrites" in out.stderr and taken.read_text() == "{}"


def test_the_install_hints_name_the_torch_the_readme_and_ci_install():
    """A command that needs torch where it is missing says to install it first, as the README's two
    commands and CI do (a new user's review: the extra alone pulls a CUDA torch of gigabytes)."""
    from suite.record.dependencies import CPU_TORCH

    readme = (REPO / "README.md").read_text()
    for extra in ("train", "test"):
        assert f'pip install {CPU_TORCH} && pip install -e ".[{extra}]"' in readme
    assert f"pip install {CPU_TORCH} && pip install -e \".[test]\"" in (REPO / ".ci" / "run").read_text()
