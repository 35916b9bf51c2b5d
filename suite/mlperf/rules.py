"""Per-workload rule files in MLCommons' rule language, for ``mlperf_logging.compliance_checker``.

MLCommons' ``training_<ruleset>/common.yaml`` cannot check a goodbench log: its
``submission_benchmark`` rule accepts only the round's MLPerf benchmarks and then enqueues
``closed_<benchmark>.yaml``, which does not exist for a goodbench workload (the checker crashes
looking for it). A goodbench rule file stands in for the pair: it applies MLPerf's common rules
(training 5.1.0's ``common.yaml`` and ``closed_common.yaml``: the same keys, occurrence
requirements and checks; ``submission_division`` sets the init time limit without enqueuing
another config), then the workload's pinned values per scale — benchmark name, global batch,
``max_steps``, training samples, base learning rate (closed division), and the quality target
(``eval_accuracy`` must reach it at least once, as MLPerf's ``closed_<benchmark>.yaml`` asks).

The files ship in ``suite/mlperf/rules/<workload>.yaml`` and are generated from the registry's
specs by :func:`render` (``python -m suite.mlperf.rules`` rewrites them; a test checks the
shipped files match). Use: ``python -m mlperf_logging.compliance_checker --usage training
--ruleset 5.1.0 --config /abs/path/<workload>.yaml result_0.txt`` (the checker joins a relative
``--config`` to its own folder, so give an absolute path).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

RULESET = "5.1.0"  # the MLCommons training ruleset these rules follow and the checker is run with
FOLDER = "rules"

_COMMON = '''
- KEY:
    NAME:  submission_org
    REQ:   EXACTLY_ONE
    CHECK: " v['value'] != '' "

- KEY:
    NAME:  submission_platform
    REQ:   EXACTLY_ONE
    CHECK: " v['value'] != '' "

- KEY:
    NAME:  submission_division
    REQ:   EXACTLY_ONE
    CHECK: " v['value'] in ['closed', 'open'] "
    POST:  " s['division'] = v['value']; s['compile_time_mins'] = 240 if v['value'] == 'open' else 30 "

- KEY:
    NAME:  cache_clear
    REQ:   AT_LEAST_ONE
    CHECK:
        - "'value' in v"

- KEY:
    NAME:  init_start
    REQ:   AT_LEAST_ONE
    CHECK:
        - "not s['init_stopped']"
        - "not s['run_started']"
    POST:  " s['init_started'] = True; s['first_init_start']=min(s['first_init_start'], ll.timestamp) "

- KEY:
    NAME:  init_stop
    REQ:   EXACTLY_ONE
    CHECK:
        - "s['init_started']"
        - "not s['run_started']"
        - "ll.timestamp - s['first_init_start'] < (s['compile_time_mins']*60*1e3)"
    POST:  " s['init_stopped'] = True"

- KEY:
    NAME:  run_start
    REQ:   EXACTLY_ONE
    CHECK: " ( s['init_stopped'] == True )"
    POST:  " s['run_started'] = True "

- KEY:
    NAME:  run_stop
    REQ:   EXACTLY_ONE
    CHECK:
        - "s['run_started']"
        - "'status' in v['metadata']"
    POST:  " s['run_stopped'] = True "

- KEY:
    NAME:  block_start
    REQ:   AT_LEAST_ONE_OR(epoch_start)
    CHECK:
        - "s['run_started']"
        - "('epoch_count' in v['metadata']) | ('samples_count' in v['metadata'])"
        - "'first_epoch_num' in v['metadata'] if 'epoch_count' in v['metadata'] else True"
        - "v['metadata']['epoch_count'] > 0 if 'epoch_count' in v['metadata'] else True"
        - "v['metadata']['samples_count'] >= 0 if 'samples_count' in v['metadata'] else True"

- KEY:
    NAME:  block_stop
    REQ:   AT_LEAST_ONE_OR(epoch_stop)
    CHECK:
        - "('first_epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])"

- KEY:
    NAME:  epoch_start
    REQ:   AT_LEAST_ONE_OR(block_start)
    CHECK:
        - "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])"

- KEY:
    NAME:  epoch_stop
    REQ:   AT_LEAST_ONE_OR(block_stop)
    CHECK:
        - "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])"

- KEY:
    NAME:  eval_start
    REQ:   AT_LEAST_ONE_OR(block_start)
    CHECK:
        - "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])"

- KEY:
    NAME:  eval_stop
    REQ:   AT_LEAST_ONE_OR(block_stop)
    CHECK:
        - "('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])"

- KEY:
    NAME:  train_samples
    REQ:   EXACTLY_ONE
    CHECK:
        - " v['value'] != '' "
        - " s['division'] == 'open' or v['value'] == s['pinned'][s['scale']]['train_samples'] "

- KEY:
    NAME:  eval_samples
    REQ:   EXACTLY_ONE
    CHECK: " v['value'] != '' "

- KEY:
    NAME: gradient_accumulation_steps
    REQ: EXACTLY_ONE
    CHECK: " v['value'] > 0 "
'''


def _pinned(workload, scale: str) -> dict[str, Any]:
    spec = workload.spec(scale)
    batch = workload.samples_per_step(spec)
    pinned: dict[str, Any] = {"global_batch_size": batch, "max_steps": spec.max_steps,
                              "train_samples": spec.max_steps * batch}
    if getattr(spec, "lr", None) is not None:
        pinned["lr"] = spec.lr
    if spec.target is not None:
        pinned["target"] = spec.target.value
        pinned["direction"] = spec.target.direction
    return pinned


def render(workload) -> str:
    """The rule file of ``workload`` (a registry workload), as shipped."""
    scales = {scale: _pinned(workload, scale) for scale in sorted(workload.variants)}
    has_lr = all("lr" in p for p in scales.values())
    targets = {p.get("direction") for p in scales.values()}
    lines = [
        f"# goodbench workload {workload.id} v{workload.version}: MLCommons compliance-checker rules",
        f"# (MLCommons training {RULESET} common rules, then the workload's pinned values per scale).",
        "# Generated from the workload's spec by suite/mlperf/rules.py: do not edit by hand.",
        "",
        "- BEGIN:",
        "    CODE: >",
        "        s.update({",
        "            'init_started': False, 'init_stopped' : False, 'run_started' : False,",
        "            'run_stopped' : False, 'in_epoch' : False, 'last_epoch' : 0, 'in_block' : False,",
        "            'block_first_epoch' : -1, 'first_init_start': 9e99, 'compile_time_mins': 0,",
        "            'division': None, 'scale': None,",
        f"            'pinned': {scales!r},",
        "        })",
        _COMMON.rstrip(),
        "",
        "- KEY:",
        "    NAME:  submission_benchmark",
        "    REQ:   EXACTLY_ONE",
        f"    CHECK: \" v['value'] == '{workload.id}' \"",
        "",
        "- KEY:",
        "    NAME:  goodbench_scale",
        "    REQ:   EXACTLY_ONE",
        "    CHECK: \" v['value'] in s['pinned'] \"",
        "    POST:  \" s['scale'] = v['value'] \"",
        "",
        "- KEY:",
        "    NAME:  goodbench_max_steps",
        "    REQ:   EXACTLY_ONE",
        "    CHECK: \" v['value'] == s['pinned'][s['scale']]['max_steps'] \"",
        "",
        "- KEY:",
        "    NAME:  seed",
        "    REQ:   EXACTLY_ONE",
        "",
        "- KEY:",
        "    NAME:  global_batch_size",
        "    REQ:   EXACTLY_ONE",
        "    CHECK: \" s['division'] == 'open' or v['value'] == s['pinned'][s['scale']]['global_batch_size'] \"",
        "    POST:  \" s['global_batch_size'] = v['value'] \"",
    ]
    if has_lr:
        lines += ["",
                  "- KEY:",
                  "    NAME:  opt_base_learning_rate",
                  "    REQ:   EXACTLY_ONE",
                  "    CHECK: \" s['division'] == 'open' or v['value'] == s['pinned'][s['scale']]['lr'] \""]
    lines += ["",
              "- KEY:",
              "    NAME:  eval_accuracy",
              "    REQ:   AT_LEAST_ONE",
              "    CHECK:",
              "        - \"('epoch_num' in v['metadata']) | ('samples_count' in v['metadata'])\""]
    if targets <= {"min", "max"} and None not in targets:
        # the quality target of the run's scale, reached at least once (MLPerf's closed_<benchmark>.yaml)
        reach = ("(v['value'] <= s['pinned'][s['scale']]['target'] if s['pinned'][s['scale']]['direction'] == 'min' "
                 "else v['value'] >= s['pinned'][s['scale']]['target'])")
        lines.append(f"    ATLEAST_ONE_CHECK: \"s.get('scale') in s['pinned'] and isinstance(v['value'], (int, float)) "
                     f"and {reach}\"")
    return "\n".join(lines) + "\n"


def shipped(workload_id: str) -> str:
    """The shipped rule file's text of a workload (FileNotFoundError, naming the command that
    writes it, for one without)."""
    try:
        return resources.files("suite.mlperf").joinpath(f"{FOLDER}/{workload_id}.yaml").read_text("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no rule file suite/mlperf/{FOLDER}/{workload_id}.yaml: "
                                "python -m suite.mlperf.rules writes one for every registered workload") from None


def write_all(folder: Path | None = None) -> list[Path]:
    """(Re)write every registry workload's rule file into ``folder`` (default: the package's)."""
    from workloads import registry

    folder = folder or Path(__file__).resolve().parent / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for workload in registry.WORKLOADS.values():
        path = folder / f"{workload.id}.yaml"
        path.write_text(render(workload), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_all():
        print(p)
