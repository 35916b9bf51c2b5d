"""Pages in words (suite/site/labels.py, suite/site/formatting.py): every field a page shows has a
label with its unit, figures print at about three significant digits, durations below the
clocks' resolution print as 0, and losses and quality metrics have charts of their own."""
from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import factories
import numpy as np
import pytest

from suite import site
from suite.record import results
from suite.site import charts, labels, run_page
from suite.site.formatting import RESOLUTION_S, seconds
from suite.site.names import run_slug
from workloads.base import Target

REPO = Path(__file__).resolve().parent.parent
STORED = sorted((REPO / "results").glob("*.json"))  # real results files, as `goodbench submit` stored them
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


class _Visible(HTMLParser):
    """The text a reader sees: outside <pre>/<code>/<script>/<title>, and outside the list of
    validator messages of a file stored under older rules (``#waived``), which quotes the file's
    paths on purpose; attribute values (tooltips) are not text."""

    SKIP = {"pre", "code", "script", "style", "title"}

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.text: list[str] = []
        self.keys: list[str] = []  # the title of every row label (th)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        hidden = (tag in self.SKIP or attrs.get("id") == "waived" or any(h for _, h in self.stack))
        if tag not in ("br", "img", "input", "meta", "link", "line", "circle", "rect", "polyline"):
            self.stack.append((tag, hidden))
        if tag == "th" and attrs.get("title"):
            self.keys.append(attrs["title"])

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not any(h for _, h in self.stack):
            self.text.append(data)


def _visible(page: str) -> _Visible:
    parser = _Visible()
    parser.feed(page)
    return parser


def _keys(value, out: set[str]) -> set[str]:
    """Every key name at any depth of a results document (lists of records included)."""
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(str(k))
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def _build(tmp_path: Path, files: list[Path], extra: dict[str, dict] | None = None) -> Path:
    folder, out = tmp_path / "results", tmp_path / "site"
    folder.mkdir()
    for file in files:
        shutil.copyfile(file, folder / file.name)
    for name, doc in (extra or {}).items():
        results.write(folder / name, doc)
    site.build(folder, out)
    return out


@pytest.mark.skipif(not STORED, reason="no stored results files in results/")
def test_no_page_shows_a_raw_key_and_every_shown_key_is_in_the_table(tmp_path):
    """Every run page of the stored results files (and of a distributed run): no visible text is
    one of the file's snake_case keys, and every row's key (its tooltip) has its own label."""
    ddp = factories.synthetic_document("synthetic-ddp", rng=np.random.default_rng(12), accelerator=1,
                                       workloads=("gpt2-124m",), world_size=4, interconnect="nvswitch",
                                       goodput=True)
    out = _build(tmp_path, STORED, {"ddp.json": ddp})
    docs = {f.name: json.loads(f.read_text()) for f in STORED} | {"ddp.json": ddp}
    pages = 0
    for name, doc in docs.items():
        raw = {k for k in _keys({**doc, "runs": [{k: v for k, v in r.items() if k != "event_log"}
                                                 for r in doc["runs"]]}, set()) if "_" in k}
        for run in doc["runs"]:
            page = _visible((out / "runs" / f"{run_slug(name, run['run_id'])}.html").read_text())
            text = " ".join(page.text)
            shown = {w for w in SNAKE.findall(text) if w in raw}
            assert not shown, f"{name} run {run['run_id']}: raw keys shown as text: {sorted(shown)}"
            assert page.keys, "every labelled row keeps its key as a tooltip"
            unknown = [k for k in page.keys if not labels.field(k).known]
            assert not unknown, f"keys without a label in suite/site/labels.py: {unknown}"
            for key in ("goodput.wall_s", "metrics.throughput.step_time_s.p99", "settings.command"):
                assert key in page.keys
            pages += 1
    assert pages == sum(len(d["runs"]) for d in docs.values())


def test_own_codes_file_names_with_dots_are_one_row_not_split_into_raw_keys():
    """A code file named "mlp.py" once showed as a raw key row "py" (the dotted key split at its dot)."""
    digest = "ab" * 32
    rows = labels.flatten({"code": {"files": {"mlp.py": digest, "lib/data.v2.py": "cd" * 32}}},
                          "settings.implementation")
    assert [k for k, _ in rows] == ["settings.implementation.code.files"]
    key, value = rows[0]
    assert labels.field(key).known
    assert labels.value_text(value, labels.field(key).unit) == "mlp.py abababababab…; lib/data.v2.py cdcdcdcdcdcd…"


def _schema_keys(schema: dict, node: dict, path: str) -> list[str]:
    """The dotted paths of the object fields the results schema names (lists of records as ``[]``)."""
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    out = []
    for alt in node.get("anyOf", []) + node.get("oneOf", []):
        out += _schema_keys(schema, alt, path)
    items = node.get("items") if node.get("type") == "array" else None
    if isinstance(items, dict) and "$ref" in items:
        items = schema["$defs"][items["$ref"].rsplit("/", 1)[-1]]
    if isinstance(items, dict) and "properties" in items:
        out += _schema_keys(schema, items, path + "[]")
    for key, child in (node.get("properties") or {}).items():
        sub = f"{path}.{key}" if path else key
        if labels.field(sub.removeprefix("runs[].").replace("[]", "[0]")).unit in labels.WHOLE:  # a target
            out.append(sub)
            continue
        nested = _schema_keys(schema, child, sub)
        types = child.get("type") if isinstance(child.get("type"), list) else [child.get("type")]
        if nested or "object" not in types:  # an open map's keys are met on the real files above
            out += nested or [sub]
    return out


def test_every_field_the_schema_names_on_the_pages_has_a_label():
    """The settings, the system, and a run's metrics, goodput and distributed sections, as the
    results schema names them: each has a label of its own (not one made from the key)."""
    schema = json.loads((REPO / "suite" / "schema" / "results-v1.json").read_text())
    keys = [k for k in _schema_keys(schema, schema, "") if k.startswith(("settings.", "system."))]
    keys += [k.removeprefix("runs[].") for k in _schema_keys(schema, schema, "")
             if k.startswith(("runs[].metrics.", "runs[].goodput.", "runs[].distributed."))
             and not k.startswith("runs[].distributed.ranks")]
    assert len(keys) > 60
    missing = [k for k in keys if not labels.field(k.replace("[]", "[0]")).known]
    assert not missing, missing


@pytest.mark.parametrize(("key", "value", "shown"), [
    ("goodput.wall_s", 7.07427, ("wall time", "7.07 s")),
    ("goodput.steady_step_s", 0.0328875, ("steady-state step time, mean", "32.9 ms")),
    ("metrics.throughput.step_time_s.p99", 0.0364741, ("step time p99", "36.5 ms")),
    ("metrics.mfu", 0.41234, ("MFU", "41.2%")),
    ("metrics.energy_to_train_j", 1234.5, ("energy to train", "1.23 kJ")),
    ("metrics.energy_per_token_j", 0.00115, ("energy per token", "1.15 mJ")),
    ("metrics.mean_power_w", 512.34, ("mean power", "512 W")),
    ("metrics.throughput.tokens_per_s", 13008.675, ("tokens per second", "13,009 tokens/s")),
    ("metrics.throughput.steps_per_s", 30.4067, ("steps per second", "30.4 steps/s")),
    ("metrics.flops_per_step", 1755881472, ("work per step", "1.76 GFLOP")),
    ("metrics.peak_flops", 989.4e12, ("peak compute of the device", "989 TFLOP/s")),
    ("settings.matmul_ceiling.fp32.flops", 181521509388.0, ("matmul ceiling (fp32), best trial", "182 GFLOP/s")),
    ("metrics.final_quality.test_accuracy", 0.777, ("final test accuracy", "0.777")),
    ("metrics.target", {"metric": "val_loss", "direction": "min", "value": 1.55},
     ("target", "validation loss ≤ 1.55")),
    ("metrics.tta_status", "reached test_accuracy >= 0.75 at step 150",
     ("time to target status", "reached test accuracy >= 0.75 at step 150")),
    ("metrics.throughput.window.segments", [[11, 200]], ("steady-state window: segments", "steps 11–200")),
    ("system.host.memory_gib", 23.5, ("host memory", "23.5 GiB")),
    # trial V: a hostile file's 1e308 GiB was a 309-digit number; from 1e15 on, scientific notation
    ("system.host.memory_gib", 1e308, ("host memory", "1e+308 GiB")),
    ("system.host.memory_gib", 2048.0, ("host memory", "2,048 GiB")),
    ("metrics.flops_per_step", 1e300, ("work per step", "1e+282 EFLOP")),
    ("steps", 1e20, ("steps", "1e+20")),
    ("metrics.throughput.samples_per_s", 123456.7, ("samples per second", "123,457 samples/s")),
    ("distributed.straggler_spread", 1.0312, ("straggler spread (max / median of the ranks' mean step time)",
                                              "1.031×")),
    ("settings.interrupted", False, ("interrupted", "no")),
    ("settings.checkpoint_every", 50, ("checkpoint every", "50 steps")),
    ("settings.checkpoint_every", None, ("checkpoint every", "—")),
    ("settings.inject_failures", [10, 30], ("failures injected at", "step 10, step 30")),
    ("settings.command", ["goodbench", "run", "--device", "cpu"],
     ("command line (home and temporary folders shown as <home>, <tmp>, the data folder as <data-dir>)",
      "goodbench run --device cpu")),
    ("settings.implementation.command", ["python", "train.py", "--data-dir=/srv/corpora/mine", "--steps", "3"],
     ("command of the own code (self-reported; home and temporary folders shown as <home>, <tmp>, the data "
      "folder as <data-dir>)", "python train.py --data-dir=<data-dir> --steps 3")),
    ("system.interconnect.summary_status", "unknown: not queried: the device is the CPU",
     ("interconnect status", "none: a CPU run uses one device, so there is no interconnect to report")),
    ("system.interconnect.gpus_status", "not queried: the device is the CPU",
     ("GPU links status", "none: a CPU run uses one device, so there is no interconnect to report")),
    ("system.interconnect.summary_status", "unknown: NVML unavailable", ("interconnect status", "unknown: NVML unavailable")),
    ("goodput.badput_s.compile_warmup", 0.5, ("compilation and warm-up", "500 ms")),
    ("metrics.energy_to_target_j", None, ("energy to target", "—")),
])
def test_values_print_with_their_unit_at_about_three_significant_digits(key, value, shown):
    assert labels.show(key, value) == shown


def test_a_skipped_workloads_fields_have_labels():
    """A run made without a workload's data lists it in settings.skipped: each entry's fields are
    labelled on the run page (the page opens the list up, one row per field)."""
    skipped = {"settings": {"skipped": [{"workload": "lm-char", "reason": "its data is missing"},
                                        {"workload": "fashion-cnn", "reason": "its data is missing"}]}}
    keys = [key for key, _ in labels.flatten(skipped, "")]
    assert keys == ["settings.skipped[0].workload", "settings.skipped[0].reason",
                    "settings.skipped[1].workload", "settings.skipped[1].reason"]
    assert all(labels.field(k).known for k in keys)
    assert labels.field("settings.skipped[1].reason").label == "skipped workload 2: why (self-reported)"


def test_a_key_the_table_lacks_is_still_shown_in_words():
    spec = labels.field("metrics.new_figure_s")
    assert not spec.known and spec.label == "new figure" and labels.value_text(0.25, spec.unit) == "250 ms"


def test_durations_below_the_clock_resolution_print_as_zero():
    assert RESOLUTION_S == 1e-6
    for noise in (5.68e-14, -5.68e-14, 9.9e-7):
        assert seconds(noise) == "0 s"
    assert seconds(2.5e-6) == "2.5 µs" and seconds(0.0) == "0 s"
    bar = str(run_page.charts.stacked_bar(run_page._parts({"train": 4.2, "other": 5.68e-14}), "phases", seconds))
    assert "e-14" not in bar and "other" not in bar and "training 4.2 s" in bar


def _curve(names: list[str]) -> list[dict]:
    return [{"step": s, "time_s": s / 10, **{n: 1.0 / s + i for i, n in enumerate(names)}} for s in (50, 100, 150)]


@pytest.mark.parametrize(("names", "target", "charts_with_target"), [
    (["train_loss", "test_accuracy", "test_loss"], Target("test_accuracy", "max", 0.75), ["quality"]),
    (["train_loss", "auc", "log_loss", "teacher_auc"], Target("auc", "max", 0.76), ["quality"]),
    (["train_loss", "val_loss"], Target("val_loss", "min", 1.55), ["loss"]),
])
def test_losses_and_quality_metrics_are_on_separate_charts_with_the_target_on_its_own(names, target,
                                                                                       charts_with_target):
    drawn = [str(c) for c in run_page.curve_charts(_curve(names), target)]
    kinds = ["loss" if "losses at each evaluation" in c else "quality" for c in drawn]
    has_quality = any("loss" not in n for n in names)
    assert kinds == ["loss", "quality"] if has_quality else kinds == ["loss"]
    with_target = [k for k, c in zip(kinds, drawn) if 'class="target"' in c]
    assert with_target == charts_with_target
    text = " ".join(drawn)
    assert f"target: {labels.target_text(target)}" in text
    assert not SNAKE.search(re.sub(r'<[^>]*>', " ", text)), "series and axes are named in words"
    loss_chart = drawn[kinds.index("loss")]
    assert "test accuracy" not in loss_chart and "AUC" not in loss_chart


def test_the_step_time_histogram_is_in_the_unit_of_its_times():
    chart = str(run_page.step_histogram([0.031, 0.032, 0.036], 3))
    assert "step time (ms)" in chart and " ms: " in chart
    assert "step time (s)" in str(run_page.step_histogram([1.5, 2.0], 2))
    assert charts.histogram([], "x", "t") is None


def test_tooltips_keep_the_raw_key_and_the_json_download_the_exact_value(tmp_path):
    doc = factories.synthetic_document("synthetic-k", rng=np.random.default_rng(4), workloads=("lm-char",),
                                       goodput=True, scale="smoke")
    out = _build(tmp_path, [], {"k.json": doc})
    run = doc["runs"][0]
    page = (out / "runs" / f"{run_slug('k.json', run['run_id'])}.html").read_text()
    wall = run["goodput"]["wall_s"]
    assert f'<th scope="row" title="goodput.wall_s">wall time</th><td>{seconds(wall)}</td>' in page
    raw = json.loads(next((out / "raw").glob("*.json")).read_text())
    assert raw["runs"][0]["goodput"]["wall_s"] == wall


def test_the_metrics_ceiling_is_labelled_self_reported_as_its_settings_row_is():
    """A user's find: a run page's Settings table marked the matmul ceiling "self-reported" and its
    Metrics table showed the same ceiling, and the share of it, with no such word."""
    from suite.validate.provenance import SELF_REPORTED, provenance

    for key, value in (("metrics.matmul_ceiling_flops", 1.16e11), ("metrics.share_of_ceiling", 0.28)):
        assert provenance(key) == SELF_REPORTED == provenance("settings.matmul_ceiling.fp32.flops")
        assert "self-reported" in labels.show(key, value)[0], key
