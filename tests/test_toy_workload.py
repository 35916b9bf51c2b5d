"""A workload is one folder: its spec (with its seed spread and eval samples), its job and model,
its pinned evaluator for own code, and one registry line (the tests and files beside it are listed
in docs/workloads.md, "Adding a workload"). A toy workload written into a temporary folder
and registered is trained by ``goodbench run``, validated and read by the leaderboard like the
suite's own, and own code held to it is graded by the evaluator its folder carries."""
from __future__ import annotations

import textwrap

import pytest

from suite import cli
from suite.figures import reproducibility
from suite.leaderboard import pipeline
from workloads import registry

pytestmark = pytest.mark.slow  # a whole training run

SPEC = '''
"""toy-line: a line fitted by one linear layer (a test's toy workload)."""
from __future__ import annotations

from dataclasses import dataclass

from workloads.base import Spec, Workload


@dataclass(frozen=True, kw_only=True)
class ToySpec(Spec):
    width: int


class ToyLine(Workload[ToySpec]):
    id = "toy-line"
    version = 1
    task = "a line fitted by one linear layer"
    job = "toy_line.job:build_job"
    evaluator = "toy_line.evaluator:ToyEvaluator"
    seed_spread = 0.05
    variants = {scale: ToySpec(width=8, batch_size=32, max_steps=60, eval_every=30, warmup_steps=5, log_every=10,
                               precision="fp32", target=None) for scale in ("smoke", "full")}

    def flops_per_step(self, spec: ToySpec) -> float:
        return 6.0 * spec.width * spec.batch_size

    def eval_samples(self, spec: ToySpec) -> int:
        return 256
'''

JOB = '''
"""toy-line's job: a linear layer trained by SGD on a pinned random line."""
from __future__ import annotations

import torch

from workloads.training import set_precision


class ToyJob:
    def __init__(self, spec, device, seed, precision):
        self.precision_flags = set_precision(device, precision)
        torch.manual_seed(seed)
        self.spec, self.device = spec, device
        self.model = torch.nn.Linear(spec.width, 1).to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)
        self.gen = torch.Generator().manual_seed(seed)
        self.truth = torch.randn(spec.width, 1, generator=torch.Generator().manual_seed(0))

    def train_step(self):
        x = torch.randn(self.spec.batch_size, self.spec.width, generator=self.gen).to(self.device)
        loss = torch.nn.functional.mse_loss(self.model(x), (x @ self.truth.to(self.device)))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    @torch.no_grad()
    def evaluate(self):
        x = torch.randn(256, self.spec.width, generator=torch.Generator().manual_seed(1)).to(self.device)
        return {"val_loss": float(torch.nn.functional.mse_loss(self.model(x), x @ self.truth.to(self.device)))}

    def state_dict(self):
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "gen": self.gen.get_state()}

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.gen.set_state(state["gen"])


def build_job(workload, spec, *, device, seed, precision, files, parallel, compile="off"):
    return ToyJob(spec, device, seed, precision)
'''

EVALUATOR = '''
"""toy-line's pinned evaluation: the mean squared error on a pinned held-out batch of the line."""
from __future__ import annotations

import torch

from workloads import registry


class ToyEvaluator:
    metric = "val_loss"
    last_probe = None

    def __init__(self, scale, device, data_dir=None):
        width = registry.get("toy-line").spec(scale).width
        truth = torch.randn(width, 1, generator=torch.Generator().manual_seed(0))
        x = torch.randn(256, width, generator=torch.Generator().manual_seed(1))
        self.data = (x.to(device), (x @ truth).to(device))

    @torch.no_grad()
    def __call__(self, logits_of):
        x, y = self.data
        return {self.metric: float(torch.nn.functional.mse_loss(logits_of(x), y))}
'''


@pytest.fixture
def toy_line(tmp_path, monkeypatch):
    """toy-line's folder (spec, job, evaluator) in a temporary folder, and its one registry line."""
    folder = tmp_path / "toy_line"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "spec.py").write_text(textwrap.dedent(SPEC))
    (folder / "job.py").write_text(textwrap.dedent(JOB))
    (folder / "evaluator.py").write_text(textwrap.dedent(EVALUATOR))
    monkeypatch.syspath_prepend(str(tmp_path))
    from toy_line.spec import ToyLine

    monkeypatch.setitem(registry.WORKLOADS, ToyLine.id, ToyLine())  # the registry line
    return ToyLine.id


def test_a_workload_in_a_folder_of_its_own_runs_end_to_end(toy_line, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    out = results / "toy.json"
    assert cli.main(["run", "-w", toy_line, "--scale", "smoke", "--device", "cpu", "-o", str(out)]) == 0, \
        capsys.readouterr().err
    assert cli.main(["validate", str(out)]) == 0, capsys.readouterr().out
    [entry] = pipeline.read(results).entries.to_dict(orient="records")
    assert entry["workload"] == toy_line and entry["kind"] == "throughput" and entry["samples_per_s"] > 0
    assert entry["ranking"] == "smoke"
    assert reproducibility.seed_bound(toy_line) == round(reproducibility.DRIFT_FACTOR * 0.05, 4)


def test_the_evaluator_a_workload_folder_carries_is_found_through_the_registry(toy_line):
    import torch

    from workloads.evaluation import evaluated, evaluator

    assert toy_line in evaluated()
    found = evaluator(toy_line, "smoke", torch.device("cpu"))
    assert type(found).__module__ == "toy_line.evaluator" and found.metric == "val_loss"
    x, y = found.data
    assert found(lambda inputs: torch.zeros(len(inputs), 1)) == {"val_loss": float((y ** 2).mean())}
    line = torch.nn.Linear(x.shape[1], 1, bias=False)
    line.weight.data = torch.linalg.lstsq(x, y).solution.T
    assert found(line)["val_loss"] < 1e-8
