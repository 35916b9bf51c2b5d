"""Own code re-run in a sandbox (suite/run/reproduce/sandbox.py, own.py; docs/own-code.md,
"Reproducing"): a results file's script, run again by a reviewer, finds none of the reviewer's
keys, configuration, environment, network, checkout or results, and changes none of them; only
the submitter's own script runs, never goodbench's own modules, with no argument naming a path
outside its code; without bubblewrap nothing runs."""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_own_code import TRAIN_SCRIPT, _git_repo
from waiting import lines_until, until

from suite import validate as v
from suite.cli import main
from suite.run.reproduce import own, sandbox
from suite.run.reproduce.planning import CannotReproduce

REPO = Path(__file__).resolve().parent.parent
SECRET = "s3cret-of-the-reviewer"

# what a hostile script tries before it trains honestly (so that its file is compared): the
# paths are the reviewer's, written in literally, as an attacker who knows the layout would
HOSTILE = '''
import glob, json, os, socket
found = {}
for path in READ:
    try:
        found[path] = sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read()[:40]
    except OSError:
        pass
found["env"] = sorted(k for k, val in os.environ.items() if SECRET in val or k == "GOODBENCH_CONFIG_DIR")
for environ in glob.glob("/proc/*/environ"):
    try:
        if SECRET.encode() in open(environ, "rb").read():
            found.setdefault("proc", []).append(environ)
    except OSError:
        pass
for address in (("1.1.1.1", 53), ("8.8.8.8", 443)):
    try:
        socket.create_connection(address, timeout=2).close()
        found.setdefault("network", []).append(address[0])
    except OSError:
        pass
for path in WRITE if "GOODBENCH_OUT" in os.environ else []:  # only when re-run by a reviewer
    try:
        with open(path, "w") as fh:
            fh.write("pwned")
        found.setdefault("wrote", []).append(path)
    except OSError:
        pass
try:
    found["home"] = sorted(os.listdir(REAL_HOME))
except OSError:
    found["home"] = []
print("HOSTILE-FOUND " + json.dumps(found), flush=True)
'''


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(folder).parts}


@pytest.mark.slow
def test_a_hostile_script_re_run_finds_nothing_of_the_reviewers_and_changes_nothing(tmp_path, monkeypatch, capfd):
    """The reviewer's signing key ($GOODBENCH_CONFIG_DIR), ~/.config/goodbench, a secret in the
    environment, the network, the reviewer's checkout and goodbench's results/: the re-run of a
    tracked script with its recorded sha256 reads none of them and writes none of them; its honest
    training is still compared, and the reproduction is signed by the key read afterwards."""
    real_home = str(Path.home())
    config, home, checkout = tmp_path / "config", tmp_path / "home", tmp_path / "checkout"
    (home / ".config" / "goodbench").mkdir(parents=True)
    (home / ".config" / "goodbench" / "signing-key.pem").write_text("not for the submitter\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(config))
    monkeypatch.setenv("GOODBENCH_TEST_TOKEN", SECRET)
    assert main(["keygen"]) == 0
    read = [str(config / "signing-key.pem"), str(config), str(home / ".config" / "goodbench"), str(checkout),
            str(checkout / "orig.json"), str(REPO / "results"), str(REPO / ".git"), str(tmp_path)]
    write = [str(checkout / "pwned"), str(REPO / "results" / "pwned.json"), str(config / "pwned"),
             str(home / "pwned")]
    checkout.mkdir()
    (checkout / "train.py").write_text(f"READ, WRITE, SECRET, REAL_HOME = {read!r}, {write!r}, {SECRET!r}, "
                                       f"{real_home!r}\n{HOSTILE}\n{TRAIN_SCRIPT}")
    _git_repo(checkout)
    done = subprocess.run([sys.executable, "train.py"], cwd=checkout, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("[]"), done.stderr[-2000:]
    unsandboxed = json.loads(done.stdout.split("HOSTILE-FOUND ", 1)[1].splitlines()[0])
    assert str(config / "signing-key.pem") in unsandboxed and unsandboxed["env"]  # the script does find them outside
    before, results_before = _snapshot(tmp_path), _snapshot(REPO / "results")
    monkeypatch.chdir(checkout)
    capfd.readouterr()
    # --measure-for 1: one re-run, whatever the load (measuring on is tested in test_measuring.py)
    assert main(["reproduce", "orig.json", "-o", str(tmp_path / "repro.json"), "--run-recorded-command",
                 "--measure-for", "1"]) in (0, 1)
    printed = capfd.readouterr().out
    found = json.loads(printed.split("HOSTILE-FOUND ", 1)[1].splitlines()[0])
    bound = {Path(p).relative_to(real_home).parts[0] for p in map(str, sandbox.python_paths())
             if Path(p).is_relative_to(real_home) and Path(p) != Path(real_home)}
    assert set(found.pop("home")) <= bound  # only the folders Python needs, never the rest of the home
    assert found == {"env": []}, found  # no key, configuration, checkout, results, secret, network or write
    assert "bit-identical" in printed  # the honest part of the script still reproduces
    assert _snapshot(tmp_path) == {**before, "repro.json": (tmp_path / "repro.json").read_bytes()}
    assert _snapshot(REPO / "results") == results_before
    repro = json.loads((tmp_path / "repro.json").read_text())
    assert repro.get("signature") and v.check_document(repro) == []  # signed once the re-run had ended
    # without bubblewrap on PATH (git still there), the command line refuses, naming what to install
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(bin_dir))
    assert main(["reproduce", "orig.json", "-o", str(tmp_path / "repro-2.json"), "--run-recorded-command"]) != 0
    assert "apt-get install bubblewrap" in capfd.readouterr().err and not (tmp_path / "repro-2.json").exists()


@pytest.mark.slow
def test_the_plain_loop_example_is_reproduced_from_goodbenchs_own_checkout(tmp_path, monkeypatch, data_dir, capfd):
    """examples/plain_loop.py, the own code of goodbench's own repository, runs in one command and
    its file validates (plain python: validate says what it becomes); it runs again in the sandbox
    from this checkout (its copy taken at HEAD), its data from the reviewer's --data-dir (a new
    user's was ignored: the re-run found no data), and its curve comes back bit for bit."""
    original = tmp_path / "own-plain.json"
    done = subprocess.run([sys.executable, "examples/plain_loop.py", "--out", "own-plain.json", "--steps", "40",
                           "--device", "cpu"], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "GOODBENCH_DATA_DIR": str(data_dir), own.OUT_VARIABLE: str(original)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"results written to {original}" in done.stdout and "validator:" not in done.stdout
    check = subprocess.run([sys.executable, "-m", "suite", "validate", str(original)], capture_output=True, text=True)
    said = (f"{original}: ok; own code timed by one clock (self-timed): shown, never ranked — `goodbench run-own "
            "SCRIPT ARGS` adds the second clock that can rank it")
    out = check.stdout.strip()  # and its load, where it ran under load
    assert check.returncode == 0 and (out == said or out.startswith(f"{said}; ") and "measured under load" in out), out
    if subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                      capture_output=True, text=True).stdout.strip():
        pytest.skip("this checkout has uncommitted changes: a file of its code would be refused as not reproducible")
    monkeypatch.setenv("GOODBENCH_DATA_DIR", "")  # the reviewer's --data-dir alone gives the re-run its data
    monkeypatch.chdir(REPO)
    capfd.readouterr()
    assert main(["reproduce", str(original), "-o", str(tmp_path / "repro.json"), "--no-sign", "--data-dir",
                 str(data_dir), "--run-recorded-command", "--measure-for", "1"]) in (0, 1)  # one re-run, whatever the load
    assert "bit-identical" in capfd.readouterr().out
    assert v.check_document(json.loads((tmp_path / "repro.json").read_text())) == []


def test_the_reviewers_data_dir_is_the_reruns_data_folder_and_a_typo_is_a_usage_error(tmp_path, monkeypatch):
    """``reproduce --data-dir DIR`` of own code: DIR becomes the sandboxed re-run's
    $GOODBENCH_DATA_DIR, which the sandbox binds read-only and passes on (it was ignored: the re-run
    looked only in the cache); a folder that is not there is refused before anything runs."""
    from suite.commands.reproduce import _data_dir_for_the_rerun
    from suite.record.errors import Usage

    monkeypatch.setenv("GOODBENCH_DATA_DIR", "")
    with pytest.raises(Usage, match="no such folder"):
        _data_dir_for_the_rerun(str(tmp_path / "nope"))
    assert os.environ["GOODBENCH_DATA_DIR"] == ""
    (tmp_path / "data").mkdir()
    _data_dir_for_the_rerun(str(tmp_path / "data"))
    assert os.environ["GOODBENCH_DATA_DIR"] == str((tmp_path / "data").resolve())
    assert (tmp_path / "data").resolve() in sandbox.data_dirs() and "GOODBENCH_DATA_DIR" in sandbox.PASSED_VARIABLES


def test_without_bubblewrap_nothing_runs_and_the_refusal_names_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    with pytest.raises(CannotReproduce, match=r"apt-get install bubblewrap.*never runs .* unsandboxed"):
        sandbox.bwrap()
    ran: list[object] = []
    monkeypatch.setattr(own, "code_at_hand", lambda settings, where: True)
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: (["python", "train.py"], where))
    monkeypatch.setattr(own, "_rerun", lambda *a: ran.append(a))
    original = type("Original", (), {"doc": {"settings": {}}})()
    with pytest.raises(CannotReproduce, match="apt-get install bubblewrap"):
        own.reproduce(original, [0], tmp_path / "repro.json", 0.2)  # type: ignore[arg-type]
    assert ran == [] and not (tmp_path / "repro.json").exists()


def test_a_bubblewrap_that_cannot_make_namespaces_is_a_refusal_too(tmp_path, monkeypatch):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(CannotReproduce, match=r"No permissions to creating new namespace.*apt-get install bubblewrap"):
        sandbox.check([tmp_path / "code"], tmp_path / "checkout")


def test_the_sandbox_binds_nothing_of_the_reviewers_home_configuration_or_checkout(tmp_path, monkeypatch):
    """What bwrap is told: every namespace unshared, the environment cleared, the configuration and
    the checkout never bound, only the code's copy and the output folder writable."""
    config, checkout = tmp_path / "config", tmp_path / "checkout"
    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(config))
    monkeypatch.setenv("GOODBENCH_TEST_TOKEN", SECRET)
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: True)
    args = sandbox.command(["python", "train.py"], writable=[tmp_path / "code", tmp_path / "out"], cwd=tmp_path / "code",
                           where=checkout, env={own.OUT_VARIABLE: str(tmp_path / "out" / "r.json")})
    for flag in ("--unshare-all", "--unshare-user", "--unshare-net", "--clearenv", "--die-with-parent",
                 "--new-session", "--disable-userns"):
        assert flag in args
    assert args[args.index("--cap-drop") + 1] == "ALL" and args[args.index("--uid") + 1] != "0"
    assert args.index("--ro-bind-try", args.index("--proc")) == args.index("/proc/sys") - 1  # after /proc is made
    assert SECRET not in args and "GOODBENCH_CONFIG_DIR" not in args
    sources = [args[i + 1] for i, a in enumerate(args) if a in ("--bind", "--ro-bind", "--dev-bind")]
    writable = [args[i + 1] for i, a in enumerate(args) if a == "--bind"]
    assert writable == [str(tmp_path / "code"), str(tmp_path / "out")]
    home = Path.home().resolve()
    for source in map(Path, sources):
        assert not (config.resolve().is_relative_to(source) or source.is_relative_to(config.resolve()))
        assert checkout.resolve() != source and not checkout.resolve().is_relative_to(source)
        assert source != home and not home.is_relative_to(source)
    assert args[-3:] == ["--", "python", "train.py"]


def test_goodbench_runs_none_of_its_own_modules_as_someones_code(tmp_path):
    """Finding: a file naming suite/__main__.py with its real sha256 made a reviewer's checkout
    run `goodbench submit`. In goodbench's own repository only examples/ is own code, and a file
    with the bytes of one of goodbench's modules is refused wherever it lies."""
    import hashlib

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    for script in ("suite/__main__.py", "suite/cli.py", "benchmarks/own_overhead.py", "goodbench/__init__.py"):
        assert "goodbench runs only the submitter's own script" in own.own_file_refusal(
            script, digest(REPO / script), REPO)
    assert own.own_file_refusal("examples/plain_loop.py", digest(REPO / "examples" / "plain_loop.py"), REPO) is None
    (tmp_path / "train.py").write_bytes((REPO / "suite" / "__main__.py").read_bytes())  # a copy, renamed
    assert "bytes of a file of goodbench's own packages" in own.own_file_refusal(
        "train.py", digest(tmp_path / "train.py"), tmp_path)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "train.py").write_text("print('mine')\n")  # a submitter's folder named suite/
    assert own.own_file_refusal("suite/train.py", digest(tmp_path / "suite" / "train.py"), tmp_path) is None


def test_a_recorded_command_runs_no_goodbench_entry_point(tmp_path):
    """runnable_command refuses the finding's command itself: `python suite/__main__.py submit X
    --results-dir results`, as recorded with suite/__main__.py's real sha256 at this commit."""
    import hashlib

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "suite/__main__.py"],
                      capture_output=True, text=True).stdout.strip():
        pytest.skip("suite/__main__.py differs from HEAD here")
    settings = {"implementation": {
        "command": ["python", "suite/__main__.py", "submit", "x.json", "--results-dir", "results"],
        "code": {"git_commit": commit, "files": {
            "suite/__main__.py": hashlib.sha256((REPO / "suite" / "__main__.py").read_bytes()).hexdigest()}}}}
    with pytest.raises(CannotReproduce, match="never its own modules"):
        own.runnable_command(settings, REPO)


@pytest.mark.parametrize("arg", ["/etc/passwd", "--out=/root/.config/goodbench/x", "~/x", "../escape.json",
                                 "--data=../../results", "sub/../../x", "\\\\server\\share",
                                 # trial 5: glued, listed, a response file, a URL
                                 "-o/etc/x", "-d~/x", "@/etc/x", "--data=a,/etc/x", "file:///etc/x", "a:/etc",
                                 # trial 11: Hydra and OmegaConf overrides, a value after a second `=`
                                 "data.path=/etc/passwd", "--define=key=/etc/passwd", "k=a=/etc/x",
                                 "+trainer.default_root_dir=/home/reviewer", "out=~/x", "data.root=a,../../x"])
def test_arguments_naming_paths_outside_the_code_are_refused_with_the_rule(arg):
    refusal = own.argument_refusal(["--steps", "3", arg])
    assert refusal and "outside the copy of the code" in refusal and "relative to its working folder" in refusal


def test_relative_arguments_inside_the_code_pass():
    assert own.argument_refusal(["--out", "own-plain.json", "--steps=40", "--lr", "1e-3", "data/train.txt",
                                 "--name=a-b", "-", "data.path=data/train.txt", "+trainer.max_steps=40",
                                 "--define=key=value", "optimizer.lr=1e-3", "a==b"]) is None


def test_the_re_runs_file_is_read_only_as_a_regular_file_of_its_own(tmp_path):
    """What the sandboxed script leaves where GOODBENCH_OUT points is read after it exits, never
    through a link it planted to one of the reviewer's files, nor from a pipe that would hang."""
    secret = tmp_path / "signing-key.pem"
    secret.write_text("the reviewer's key\n")
    assert own.read_output(tmp_path / "missing.json") is None
    (tmp_path / "link.json").symlink_to(secret)
    with pytest.raises(CannotReproduce, match="not a regular file"):
        own.read_output(tmp_path / "link.json")
    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(CannotReproduce, match="not a regular file"):
        own.read_output(tmp_path / "pipe.json")
    (tmp_path / "big.json").write_bytes(b" " * (own.MAX_FILE_BYTES + 1))
    with pytest.raises(CannotReproduce, match="at most"):
        own.read_output(tmp_path / "big.json")
    (tmp_path / "ok.json").write_text("{}")
    assert own.read_output(tmp_path / "ok.json") == b"{}"


SLEEPS_WHEN_RE_RUN = '''
import os, time
if os.environ.get("GOODBENCH_OUT"):  # only the reviewer's re-run, in the sandbox: it outlives any patience
    print("RERUN-STARTED", flush=True)
    time.sleep(600)
'''


def _sandboxes_of(scratch: Path) -> list[str]:
    """The processes whose command line names a folder under ``scratch`` (bwrap binds its copy of the code)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(scratch).encode() in cmdline.read_bytes():
                found.append(cmdline.parent.name)
        except OSError:
            pass
    return found


def _recorded_in_a_checkout(tmp_path: Path, script: str) -> tuple[Path, dict[str, str]]:
    """``script`` as train.py in a git checkout under ``tmp_path``, run once to record orig.json
    there; returns the checkout and the environment to run goodbench in."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "train.py").write_text(script)
    _git_repo(checkout)
    env = {k: val for k, val in os.environ.items() if k != own.OUT_VARIABLE}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "train.py"], cwd=checkout, capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0 and done.stdout.strip().endswith("[]"), done.stderr[-2000:]
    return checkout, env



@pytest.mark.slow
def test_sigterm_while_the_recorded_command_runs_in_the_sandbox_stops_it_and_leaves_nothing(tmp_path):
    """SIGTERM (timeout, Slurm, docker stop) to `goodbench reproduce --run-recorded-command` while
    the sandboxed re-run trains: goodbench says it was stopped and exits 143, as a training run
    does; the sandbox ends with it (no process of it left), and neither the reserved output name nor
    the scratch copy of the code is left behind (before, goodbench died at once, leaving both)."""
    import signal

    from test_own_code import TRAIN_SCRIPT

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    checkout, env = _recorded_in_a_checkout(tmp_path, SLEEPS_WHEN_RE_RUN + TRAIN_SCRIPT)
    child = subprocess.Popen([sys.executable, "-P", "-m", "suite", "reproduce", "orig.json", "-o", str(tmp_path / "repro.json"),
                              "--no-sign", "--run-recorded-command"], cwd=checkout, env={**env, "TMPDIR": str(scratch)},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert child.stdout is not None
    seen = lines_until(child, child.stdout, "RERUN-STARTED", 600)
    assert _sandboxes_of(scratch), "the sandbox runs while the script sleeps"
    child.send_signal(signal.SIGTERM)
    rest, _ = child.communicate(timeout=120)
    said = "".join(seen) + rest
    assert child.returncode == 143, said
    assert "goodbench: stopped by SIGTERM" in said and "Traceback" not in said
    until(lambda: not _sandboxes_of(scratch), 10, 0.2)
    assert not _sandboxes_of(scratch), "a process of the sandbox outlived goodbench"
    assert not (tmp_path / "repro.json").exists()  # the reserved name is free again
    assert not list(scratch.glob("goodbench-rerun-*")), "the scratch copy of the code was left behind"


@pytest.mark.slow
def test_sigterm_while_measuring_on_keeps_the_last_whole_re_run(tmp_path):
    """A re-run far slower than its original (the script sleeps in each step when re-run) is
    measured again; SIGTERM during that second re-run keeps the first, whole and stamped on the
    second clock, beside the output (``*.rerun.json``), as any re-run that cannot be compared is
    kept: no training is lost to the signal. The output name stays free, and the command exits 143."""
    import signal

    from test_own_code import TRAIN_SCRIPT

    step = "                loss = nn.functional.mse_loss(model(x), y)"
    assert step in TRAIN_SCRIPT
    script = ("import os, time\nSLOW = 0.05 if os.environ.get('GOODBENCH_OUT') else 0.0\n"
              + TRAIN_SCRIPT.replace(step, "                time.sleep(SLOW)\n" + step))
    checkout, env = _recorded_in_a_checkout(tmp_path, script)
    out = tmp_path / "repro.json"
    child = subprocess.Popen([sys.executable, "-P", "-m", "suite", "reproduce", "orig.json", "-o", str(out), "--no-sign",
                              "--run-recorded-command"], cwd=checkout, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert child.stdout is not None
    seen = lines_until(child, child.stdout, "(the recorded command runs again)", 600)
    child.send_signal(signal.SIGTERM)
    rest, _ = child.communicate(timeout=120)
    said = "".join(seen) + rest
    assert child.returncode == 143, said
    kept = tmp_path / "repro.rerun.json"
    assert f"interrupted while measuring on: the last whole re-run is kept as {kept}" in said
    assert "goodbench: stopped by SIGTERM" in said and not out.exists()
    rerun = json.loads(kept.read_text())
    assert [r["status"] for r in rerun["runs"]] == ["complete"] and rerun["second_clock"]["runs"]


def _bwrap_here() -> str | None:
    """Why a test that starts bwrap cannot run here (None where it can)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed here"
    done = subprocess.run(["bwrap", "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
                          capture_output=True, text=True)
    return None if done.returncode == 0 else f"bwrap cannot make its namespaces here: {done.stderr.strip()[:200]}"


needs_bwrap = pytest.mark.skipif(_bwrap_here() is not None, reason=str(_bwrap_here()))

# trial 16, run as root: remount a read-only bind read-write, write into goodbench's packages and
# Python's, make a user namespace to get capabilities back, set a kernel setting
ESCAPES = '''
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
got = {"caps": [status[n].strip() for n in ("CapEff", "CapPrm", "CapAmb")], "uid": status["Uid"].split()[0]}
got["remount"] = [p for p in sys.argv[1:] if libc.mount(None, p.encode(), None, 32 | 4096, None) == 0]
got["wrote"] = []
for folder in sys.argv[1:]:
    try:
        os.close(os.open(os.path.join(folder, "trial16-pwned.txt"), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        os.remove(os.path.join(folder, "trial16-pwned.txt"))  # a test failing leaves nothing behind
        got["wrote"].append(folder)
    except OSError:
        pass
pid = os.fork()
if pid == 0:  # a user namespace of its own, where it would hold every capability, then a mount
    if libc.unshare(0x10000000 | 0x00020000) != 0:
        os._exit(1)
    os._exit(2 if libc.mount(None, sys.argv[1].encode(), None, 32 | 4096, None) == 0 else 3)
got["userns"] = os.WEXITSTATUS(os.waitpid(pid, 0)[1])
got["sysctl"] = []
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/fs/lease-break-time"):
    try:  # opened, never written
        os.close(os.open(path, os.O_WRONLY))
        got["sysctl"].append(path)
    except OSError:
        pass
got["sys"] = sorted(os.listdir("/sys"))
got["pid1"] = open("/proc/1/cmdline", "rb").read().decode()
print("ESCAPES " + json.dumps(got), flush=True)
'''


@needs_bwrap
def test_the_sandboxed_script_holds_no_capability_and_changes_nothing_outside(tmp_path):
    """Trial 16: run by root, bwrap kept every capability (CapEff 000001fffeffffff), and a re-run
    script remounted goodbench's packages read-write and planted code that the reviewer's next
    goodbench process ran, reading the signing key. Whatever user runs goodbench (this test runs as
    root where the machine does), the sandboxed process holds no capability, and can neither
    remount nor write goodbench's packages or Python's, nor make a user namespace, nor open a
    kernel setting for writing."""
    code, out = tmp_path / "code", tmp_path / "out"
    code.mkdir()
    out.mkdir()
    (code / "escape.py").write_text(ESCAPES)
    targets = [str(p) for p in [*sandbox.own_package_dirs(), Path(sys.prefix).resolve()]]
    before = {t: sorted(os.listdir(t)) for t in targets}
    args = sandbox.command([sys.executable, "escape.py", *targets], writable=[code, out], cwd=code,
                           where=tmp_path / "checkout", env={})
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, env=sandbox.BWRAP_ENVIRONMENT)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.split("ESCAPES ", 1)[1].splitlines()[0])
    assert got["caps"] == ["0000000000000000"] * 3 and got["uid"] != "0", got
    assert got["remount"] == [] and got["wrote"] == [] and got["sysctl"] == [], got
    assert got["userns"] in (1, 3), got  # refused, or made without a way back to a writable mount
    assert {t: sorted(os.listdir(t)) for t in targets} == before
    if not glob.glob(sandbox.GPU_DEVICES[0]):  # trial 16's G: no DMI, network interfaces or disks in sight
        assert got["sys"] == ["devices", "kernel"], got["sys"]
    assert str(tmp_path / "checkout") not in got["pid1"] and str(Path.home()) + "\0" not in got["pid1"]


def test_the_sandbox_sees_of_sys_only_the_processors_where_there_is_no_nvidia_gpu(tmp_path, monkeypatch):
    """Trial 16: /sys bound whole showed the machine's DMI identifiers, network interfaces and
    disks, which a script can write into the file the reviewer signs. Without an NVIDIA device only
    the processors, NUMA nodes and huge-page settings are bound; with one, /sys whole, as CUDA reads
    the PCI tree there (not tried on a GPU yet)."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: True)
    monkeypatch.setattr(sandbox, "GPU_DEVICES", (str(tmp_path / "dev" / "nvidia*"),))

    def sys_bound() -> list[str]:
        args = sandbox.command(["python", "train.py"], writable=[tmp_path / "code"], cwd=tmp_path / "code",
                               where=tmp_path / "checkout", env={})
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("--") and args[i + 1].startswith("/sys")]

    assert sys_bound() == list(sandbox.SYSTEM_INFO)
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidia0").touch()
    assert sys_bound() == ["/sys"]


@needs_bwrap
def test_the_sandbox_is_checked_from_inside_before_anything_runs(tmp_path, monkeypatch):
    """check() runs its self-test in the sandbox: it holds here; with the flags before trial 16
    (no user namespace, no capability dropped) and root running goodbench, it refuses in one
    line naming what the sandbox would let through."""
    code = tmp_path / "code"
    code.mkdir()
    sandbox.check([code], tmp_path / "checkout")
    if os.geteuid() != 0:
        pytest.skip("only root keeps capabilities in a sandbox without its own user namespace")
    monkeypatch.setattr(sandbox, "ISOLATION", ("--unshare-all", "--unshare-net", "--die-with-parent",
                                               "--new-session", "--clearenv"))
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: False)
    monkeypatch.setattr(sandbox, "PROC_COVERED", ())
    with pytest.raises(CannotReproduce, match=r"would not hold here \(it holds capabilities \(CapEff [0-9a-f]+\).*"
                                              r"remount goodbench's packages.*kernel's settings") as refused:
        sandbox.check([code], tmp_path / "checkout")
    assert "\n" not in str(refused.value)


def test_nothing_goodbench_or_python_imports_from_is_bound_writable(tmp_path, monkeypatch):
    """What the sandbox writes never runs outside it: a writable folder holding goodbench's
    packages, Python's, the reviewer's checkout or home is refused before bwrap starts."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: True)
    for wrong in [sandbox.source_root(), sandbox.own_package_dirs()[0], Path(sys.prefix), tmp_path, Path.home()]:
        with pytest.raises(CannotReproduce, match="a folder goodbench imports from or yours"):
            sandbox.command(["python", "train.py"], writable=[tmp_path / "code", wrong], cwd=tmp_path / "code",
                            where=tmp_path, env={})


# a re-run that starts a busy process of its own, in a session of its own and double-forked
# (reaped by the sandbox's init): it burns CPU under a name of its own, then the script waits for it
BURNER = '''
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("/proc/self/comm", "w").write("side-burner")
        while time.process_time() < 1.5:
            pass
        open("burnt", "w").close()
    os._exit(0)
while not os.path.exists("burnt"):
    time.sleep(0.05)
'''


@pytest.mark.parametrize("told", [True, False])
def test_a_busy_process_the_sandboxed_re_run_starts_is_its_own_load_not_another_processes(tmp_path, told):
    """A slower re-run measured under load is inconclusive, not "differs": a script that burns CPU
    in a side process (a session of its own, orphaned) would excuse its own slowness if the watch
    over the re-run counted it. Told the sandbox's pid (as goodbench reproduce tells it), the watch
    counts none of it; not told, the same process reads as another (what the test can tell)."""
    from suite.meters import host_load
    from suite.run.reproduce import stamping

    code = tmp_path / "code"
    code.mkdir()
    (code / "burn.py").write_text(BURNER)
    args = sandbox.command([sys.executable, "burn.py"], writable=[code], cwd=code, where=tmp_path / "checkout", env={})
    watch = host_load.Watch(interval_s=0.1).start()
    ends = os.pipe()
    status, _, reader = stamping.run(args, sandbox.BWRAP_ENVIRONMENT, ends, 120,
                                     started=watch.own if told else None)
    during = watch.stop()
    assert status == 0 and (code / "burnt").exists() and during is not None
    burnt = sum(used for (_, name), used in watch.used.items() if name == "side-burner")
    if told:
        assert burnt == 0 and "side-burner" not in [b["name"] for b in during["busy"]]
    else:
        assert burnt >= 1.0  # 1.5 s, less what the last reading missed


def test_nothing_inside_a_folder_python_imports_from_is_bound_writable(tmp_path, monkeypatch):
    """A writable folder inside goodbench's packages, or inside a folder on ``sys.path`` under
    names a package can have, is refused too: what the sandbox plants there would be imported
    later, outside it. One whose path below holds a name no package has is not importable."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: True)
    imported = tmp_path / "site-packages"
    imported.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(imported)])

    def bind(folder: Path) -> list[str]:
        return sandbox.command(["python", "train.py"], writable=[tmp_path / "code", folder], cwd=tmp_path / "code",
                               where=tmp_path / "checkout", env={})

    for wrong in [sandbox.own_package_dirs()[0] / "out", sandbox.own_package_dirs()[0] / "a-b" / "out",
                  imported / "goodbench" / "out", imported / "pkg"]:
        with pytest.raises(CannotReproduce, match="lies inside .*a folder goodbench imports from"):
            bind(wrong)
    fine = imported / "goodbench-rerun-x" / "out"
    assert str(fine) in bind(fine)


def test_each_gpu_device_is_bound_once(tmp_path, monkeypatch):
    """``/dev/nvidia*`` matches the ``/dev/nvidia-caps`` folder, which is also named by itself: bound
    once, as every other device file (the GPU path is not tried on a GPU yet)."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: True)
    dev = tmp_path / "dev"
    (dev / "nvidia-caps").mkdir(parents=True)
    (dev / "dri").mkdir()
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm"):
        (dev / name).touch()
    monkeypatch.setattr(sandbox, "GPU_DEVICES", (f"{dev}/nvidia*", f"{dev}/nvidia-caps", f"{dev}/dri"))
    args = sandbox.command(["python", "train.py"], writable=[tmp_path / "code"], cwd=tmp_path / "code",
                           where=tmp_path / "checkout", env={})
    bound = [args[i + 1] for i, a in enumerate(args) if a == "--dev-bind"]
    assert sorted(bound) == sorted(str(dev / n) for n in ("nvidia-caps", "dri", "nvidia0", "nvidiactl", "nvidia-uvm"))
    assert len(bound) == len(set(bound))


def test_the_sandbox_names_a_user_and_a_writable_home_without_a_passwd_entry(tmp_path, monkeypatch):
    """getpass.getuser() (torch inductor's cache folder) reads USER or LOGNAME before /etc/passwd,
    which has no entry for the sandbox's id; HOME lies in its private /tmp."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "_forbids_user_namespaces", lambda program: True)
    args = sandbox.command(["python", "train.py"], writable=[tmp_path / "code"], cwd=tmp_path / "code",
                           where=tmp_path / "checkout", env={})
    set_to = {args[i + 1]: args[i + 2] for i, a in enumerate(args) if a == "--setenv"}
    assert set_to["USER"] and set_to["LOGNAME"] and set_to["HOME"].startswith("/tmp/")
    assert args[args.index("--tmpfs") + 1] == "/tmp" and args[args.index("--dir") + 1] == set_to["HOME"]


def test_the_self_test_reads_capabilities_a_kernel_does_not_write_as_none():
    """A kernel before Linux 4.3 writes no CapAmb line: no capability, not a KeyError."""
    old_kernel = "Name:\tpython\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
    assert sandbox.capabilities_held(old_kernel) == []
    held = sandbox.capabilities_held(old_kernel.replace("CapEff:\t0000000000000000", "CapEff:\t00000000a80425fb"))
    assert held == ["it holds capabilities (CapEff 00000000a80425fb)"]
    assert sandbox.capabilities_held("CapAmb:\t0000000000000400\n") == ["it holds capabilities (CapAmb 0000000000000400)"]


def test_a_mig_slice_whose_capability_files_the_sandbox_cannot_read_is_refused_in_one_line():
    caps = {"/dev/nvidia-caps/nvidia-cap1": False, "/dev/nvidia-caps/nvidia-cap2": True}
    said = sandbox.mig_unreadable("MIG-4f0c", [], caps)
    assert said is not None and "/dev/nvidia-caps/nvidia-cap1" in said and "\n" not in said
    assert sandbox.mig_unreadable("", ["/proc/driver/nvidia/capabilities/gpu0/mig/gi1"], caps) == said
    assert sandbox.mig_unreadable("0", ["/proc/driver/nvidia/capabilities/gpu1/mig/gi1"], caps) is None  # a whole GPU
    assert sandbox.mig_unreadable("MIG-4f0c", [], {p: True for p in caps}) is None


def test_the_self_test_holds_its_own_functions():
    """SELF_TEST runs in the sandbox as a script of its own: the functions it calls are defined in it."""
    functions = sandbox.SELF_TEST[:sandbox.SELF_TEST.index("import ctypes")]
    namespace: dict = {}
    exec(compile(functions, "<self-test>", "exec"), namespace)
    assert namespace["capabilities_held"]("CapEff:\t0\n") == [] and namespace["mig_unreadable"]("", [], {}) is None



def _imported_by(path: Path, functions: set[str]) -> list[str]:
    """Every module ``path`` imports at its top level and inside ``functions`` (``from a import b``
    gives ``a`` and, where it is a package, ``a.b``)."""
    import ast

    tree = ast.parse(path.read_text())
    bodies = [tree.body] + [f.body for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in functions]
    found = []
    for body in bodies:
        for node in (n for stmt in body for n in ast.walk(stmt)):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                found += [a.name for a in node.names]
    return sorted(set(found))


def test_the_reviewers_own_process_imports_no_torch_to_re_run_own_code():
    """The re-run imports torch inside the sandbox; goodbench's own process around it needs none (its
    overrides file is plain JSON, suite/run/overrides.py): 1.2 s a reproduction, measured, when
    reading it imported suite/run/system.py and with it torch. Every module the command's own-code
    path imports is imported here, in a fresh process."""
    modules = _imported_by(REPO / "suite" / "commands" / "reproduce.py", {"run", "_reproduce", "_reproduce_own"})
    assert "suite.run.overrides" in modules and "suite.run.reproduce.own" in modules
    probe = ("import importlib, sys\n"
             f"for m in {modules!r}:\n"
             "    try:\n"
             "        importlib.import_module(m)\n"
             "    except ModuleNotFoundError as e:  # a name imported from a module, not a module\n"
             "        if e.name != m: raise\n"
             "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stdout + done.stderr
