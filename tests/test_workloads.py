"""The reference workloads, every registered one: smoke variants train, evaluate, repeat exactly and
reach their smoke targets; their data parse."""
from __future__ import annotations

import copy
import gzip
import math
import re

import numpy as np
import pytest
import torch

from suite.run.runner import locate_data, seed_everything
from workloads import registry
from workloads.dlrm_small.job import Teacher, auc
from workloads.fashion_cnn.job import augment, read_idx
from workloads.fashion_cnn.spec import FashionCnn
from workloads.llama.config import param_count
from workloads.llama.model import Llama
from workloads.llama.model import rope_tables as llama_rope_tables
from workloads.llama.spec import Llama1B
from workloads.lm.synthetic import MarkovSource

CPU = torch.device("cpu")
IDS = list(registry.WORKLOADS)


def slow_for(*slow: str) -> list:
    """IDS as parameters, those in ``slow`` marked slow (trained in the fast loop by another test),
    every other one, a newly registered workload too, fast. So the fast loop trains every workload
    at least once (lm-char, whose build alone takes seconds, in tests/test_runner.py)."""
    return [pytest.param(w, marks=pytest.mark.slow) if w in slow else w for w in IDS]


def build(workload_id: str, data_dir, seed: int = 1):
    workload = registry.get(workload_id)
    spec = workload.spec("smoke")
    seed_everything(seed)
    files = locate_data(workload, str(data_dir))
    return workload, spec, workload.build(spec, device=CPU, seed=seed, precision="fp32",
                                          files=files)


def test_registry_order_is_the_documented_order():
    """The default suite's order, as docs/workloads.md's table lists it (a new workload has a row)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "workloads.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \|", text, flags=re.M)
    assert rows == IDS, f"docs/workloads.md's table lists {rows}; the registry, in order: {IDS}"


@pytest.mark.parametrize("workload_id", IDS)
def test_the_job_a_workload_names_is_a_function_of_its_job_module(workload_id):
    """A spec module names its job by "module:function" (it never imports the job side): the
    ``build_job`` of the ``job`` module in the workload's own folder, beside its spec."""
    from workloads.base import job_builder

    workload = registry.get(workload_id)
    module, _, name = workload.job.partition(":")
    folder = type(workload).__module__.removesuffix(".spec")
    assert type(workload).__module__ == f"{folder}.spec" and (module, name) == (f"{folder}.job", "build_job")
    assert callable(job_builder(workload.job)) and job_builder(workload.job).__name__ == name


@pytest.mark.parametrize("workload_id", slow_for("lm-char", "gpt2-124m", "fashion-cnn", "llama-1b"))
def test_smoke_trains_and_evaluates(workload_id, data_dir):
    workload, spec, job = build(workload_id, data_dir)
    losses = [float(job.train_step()) for _ in range(20)]
    assert all(math.isfinite(x) for x in losses)
    assert np.mean(losses[-4:]) < np.mean(losses[:4])
    quality = job.evaluate()
    metric = spec.target.metric if spec.target else "val_loss"
    assert math.isfinite(quality[metric])
    assert workload.kind == ("tta" if spec.target is not None else "throughput")


@pytest.mark.parametrize("workload_id", slow_for("lm-char", "gpt2-124m", "fashion-cnn", "llama-1b"))
def test_same_seed_same_losses(workload_id, data_dir):
    runs = []
    for _ in range(2):
        _, _, job = build(workload_id, data_dir, seed=3)
        runs.append([job.train_step().item() for _ in range(3)])
    assert runs[0] == runs[1]
    _, _, other = build(workload_id, data_dir, seed=4)
    assert [other.train_step().item() for _ in range(3)] != runs[0]


@pytest.mark.parametrize("workload_id", slow_for("lm-char"))
def test_state_dict_resumes_exactly(workload_id, data_dir):
    _, _, job = build(workload_id, data_dir, seed=5)
    for _ in range(2):
        job.train_step()
    state = copy.deepcopy(job.state_dict())
    # a job with next_batch is stepped on the batch it hands out (the runner's way); next_batch is optional
    expected = [(job.train_step(job.next_batch()) if hasattr(job, "next_batch") else job.train_step()).item()
                for _ in range(2)]
    _, _, resumed = build(workload_id, data_dir, seed=6)
    resumed.load_state_dict(state)
    assert [resumed.train_step().item() for _ in range(2)] == expected


@pytest.mark.slow  # trains each smoke variant until its target (lm-char: about a minute)
@pytest.mark.parametrize("workload_id", [w for w in IDS if registry.get(w).spec("smoke").target is not None])
def test_the_smoke_target_is_reached(workload_id, data_dir):
    """Seed 1 meets its smoke target within the smoke run's steps, evaluated as the runner does
    (every ``eval_every`` steps and at the last): a target never met would run, exit 0 and read "—"."""
    _, spec, job = build(workload_id, data_dir)
    target, seen = spec.target, []
    for step in range(1, spec.max_steps + 1):
        job.train_step()
        if step % spec.eval_every == 0 or step == spec.max_steps:
            seen.append((step, job.evaluate()[target.metric]))
            if target.met(seen[-1][1]):
                return
    pytest.fail(f"{workload_id}: {target.describe()} not met within {spec.max_steps} smoke steps (seed 1): {seen}")


def test_train_step_returns_detached_loss(data_dir):
    _, _, job = build("gpt2-124m", data_dir)
    loss = job.train_step()
    assert loss.dim() == 0 and not loss.requires_grad


# ---------------------------------------------------------------- synthetic tokens
def test_markov_stream_is_pinned_and_follows_the_chain():
    source = MarkovSource(vocab_size=97, branching=3, seed=5)
    a, b = source.stream(10_000, stream_seed=0), source.stream(10_000, stream_seed=0)
    assert torch.equal(a, b)
    assert not torch.equal(a, source.stream(10_000, stream_seed=1))
    table = source.successors()
    follows = (table[a[:-1]] == a[1:, None]).any(dim=1)
    # only the first token of each 4096-token chain is a fresh start
    starts = set(range(4095, 10_000 - 1, 4096))
    assert {i for i in range(len(follows)) if not follows[i]} <= starts


def test_llama_full_has_about_a_billion_parameters():
    n = param_count(Llama1B.model_config(Llama1B().spec("full")))
    assert 1.1e9 < n < 1.3e9
    small = Llama1B.model_config(Llama1B().spec("smoke"))
    assert param_count(small) == sum(p.numel() for p in Llama(small).parameters())


def test_llama_draws_each_parameter_once_where_it_lives(monkeypatch):
    """No layer's default init (kaiming) runs: each matrix is drawn once by init_weights, the
    norms set to 1, the head tied to the embedding, the RoPE tables real, all on the device."""
    from torch import nn

    draws = {"kaiming_uniform_": 0, "normal_": 0}  # on real tensors (the meta device holds no values)

    def counted(name):
        real = getattr(nn.init, name)

        def init(tensor, *args, **kwargs):
            draws[name] += tensor.device.type != "meta"
            return real(tensor, *args, **kwargs)
        return init

    for name in draws:
        monkeypatch.setattr(nn.init, name, counted(name))
    cfg = Llama1B.model_config(Llama1B().spec("smoke"))
    torch.manual_seed(1)
    model = Llama(cfg, device="cpu")
    matrices = [p for p in model.parameters() if p.dim() == 2]
    assert draws == {"kaiming_uniform_": 0, "normal_": len(matrices)}
    assert model.head.weight is model.tok.weight
    assert all(p.device.type == "cpu" and p.isfinite().all() for p in model.parameters())
    assert all(torch.equal(m.weight, torch.ones_like(m.weight)) for m in model.modules() if isinstance(m, nn.RMSNorm))
    cos, sin = llama_rope_tables(cfg)
    assert torch.equal(model.rope_cos, cos) and torch.equal(model.rope_sin, sin)
    torch.manual_seed(1)
    again = Llama(cfg)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    x = torch.randint(cfg.vocab_size, (2, 16))
    assert model(x, x).isfinite()


# ---------------------------------------------------------------- fashion-mnist
def _write_idx(path, array: np.ndarray, code: int) -> None:
    header = bytes([0, 0, code, array.ndim]) + np.array(array.shape, ">i4").tobytes()
    with gzip.open(path, "wb") as fh:
        fh.write(header + array.tobytes())


def test_read_idx_tiny_files(tmp_path):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    _write_idx(tmp_path / "img.gz", images, 0x08)
    np.testing.assert_array_equal(read_idx(tmp_path / "img.gz"), images)
    floats = np.array([1.5, -2.0], dtype=">f4")
    _write_idx(tmp_path / "f.gz", floats, 0x0D)
    np.testing.assert_array_equal(read_idx(tmp_path / "f.gz"), floats)


def test_read_idx_rejects_bad_files(tmp_path):
    with gzip.open(tmp_path / "bad.gz", "wb") as fh:
        fh.write(b"\x01\x02\x08\x01")
    with pytest.raises(ValueError, match="not an idx file"):
        read_idx(tmp_path / "bad.gz")
    with gzip.open(tmp_path / "short.gz", "wb") as fh:
        fh.write(bytes([0, 0, 8, 1]) + np.array([5], ">i4").tobytes() + b"\x00\x01")
    with pytest.raises(ValueError, match="header says"):
        read_idx(tmp_path / "short.gz")


def test_read_idx_real_fashion_mnist(data_dir):
    files = locate_data(FashionCnn(), str(data_dir))
    arrays = {name.split("/")[-1]: read_idx(path) for name, path in files.items()}
    assert arrays["train-images-idx3-ubyte.gz"].shape == (60_000, 28, 28)
    assert arrays["t10k-images-idx3-ubyte.gz"].shape == (10_000, 28, 28)
    for name in ("train-labels-idx1-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        labels = arrays[name]
        assert labels.dtype == np.uint8 and set(np.unique(labels)) == set(range(10))
    assert np.bincount(arrays["t10k-labels-idx1-ubyte.gz"]).tolist() == [1000] * 10


def test_augment_crops_and_flips_within_the_padded_image():
    images = torch.arange(4 * 28 * 28, dtype=torch.float32).reshape(4, 1, 28, 28)
    out = augment(images, pad=2, flip=True, gen=torch.Generator().manual_seed(0))
    assert out.shape == images.shape
    unchanged = augment(images, pad=0, flip=False, gen=torch.Generator().manual_seed(0))
    assert torch.equal(unchanged, images)
    # every output pixel is either padding (0) or a pixel of its own image
    for i in range(4):
        assert set(out[i].unique().tolist()) <= set(images[i].unique().tolist()) | {0.0}


# ---------------------------------------------------------------- dlrm
def test_auc_matches_the_pair_count_definition():
    scores = np.array([0.1, 0.4, 0.35, 0.8, 0.4])
    labels = np.array([0, 0, 1, 1, 1])
    pairs = [(p, n) for p in scores[labels == 1] for n in scores[labels == 0]]
    expected = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs) / len(pairs)
    assert auc(scores, labels) == pytest.approx(expected)
    assert math.isnan(auc(scores, np.ones(5)))


def test_auc_is_the_value_scipys_ranks_give_bit_for_bit_and_nan_for_a_nan_score():
    """The AUC's numpy ranks are scipy.stats.rankdata's, so a dlrm-small curve is unchanged by them."""
    from scipy.stats import rankdata

    gen = np.random.default_rng(0)
    for _ in range(20):  # float32 scores rounded to few values: many ties, as a saturated model gives
        scores = np.round(gen.random(4096, dtype=np.float32), int(gen.integers(1, 4)))
        labels = gen.random(4096) < 0.3
        ranks = rankdata(scores)
        n_pos, n_neg = int(labels.sum()), int((~labels).sum())
        assert auc(scores, labels) == float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    scores[7] = np.nan
    assert math.isnan(auc(scores, labels))


def test_teacher_is_pinned_and_labels_follow_its_probabilities():
    spec = registry.get("dlrm-small").spec("smoke")
    a = Teacher(spec).sample(20_000, torch.Generator().manual_seed(0))
    b = Teacher(spec).sample(20_000, torch.Generator().manual_seed(0))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    dense, sparse, label, prob = a
    assert (sparse >= 0).all() and (sparse < torch.tensor(spec.table_rows)).all()
    assert abs(label.mean().item() - prob.mean().item()) < 0.02
    assert auc(prob.numpy(), label.numpy()) > 0.75  # the data carry a real signal
