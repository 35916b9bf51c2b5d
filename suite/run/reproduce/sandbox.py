"""The sandbox own code's recorded command runs in when ``goodbench reproduce`` runs it again
(:mod:`suite.run.reproduce.own`; docs/own-code.md, "Reproducing"): bubblewrap (``bwrap``) with
every namespace unshared (no network but a loopback, its own processes), a scrubbed environment,
and a file system built from an allow-list — read-only: the system's programs and libraries,
Python and its packages, goodbench's own packages, the dataset folders; writable: only a
throwaway copy of the code and the folder the re-run writes its file in, and a private ``/tmp``.
The reviewer's home, goodbench's configuration (the signing key), the results store and the
reviewer's checkout are never bound, so they are not there to read. The process holds no
capability whatever user runs goodbench (root included): its own user namespace, an unprivileged
id in it, every capability dropped, no further user namespace where bwrap can forbid one, and
``/proc/sys`` read-only, so it can neither remount a read-only folder nor set the kernel's
settings; :func:`check` sees that inside the sandbox before anything of a results file runs.

Where ``bwrap`` is missing or cannot make its namespaces, :class:`CannotReproduce` names what to
install: never a fallback to running unsandboxed."""
from __future__ import annotations

import functools
import glob
import inspect
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from suite.run.reproduce import sandbox_tmp
from suite.run.reproduce.planning import CannotReproduce

INSTALL_HINT = "install bubblewrap (`apt-get install bubblewrap`; the package of that name elsewhere)"
# the system's programs and libraries, bound read-only (a symbolic link, as on a merged /usr, stays one)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
# what programs read of /etc: the loader's cache, names of users and hosts, the time zone — no more
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf", "/etc/passwd",
                "/etc/group", "/etc/hosts", "/etc/localtime", "/etc/alternatives", "/etc/os-release")
GPU_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri")  # bound where present (not tried on a GPU yet)
# who the sandbox's process is, to programs that ask (getpass, torch inductor's cache folder under /tmp)
# where /etc/passwd has no entry for its id; its home is a folder of its private /tmp
SANDBOX_USER = {"HOME": "/tmp/home", "USER": "goodbench", "LOGNAME": "goodbench"}
# what of /sys the sandbox sees on a machine without an NVIDIA GPU: the processors, their caches
# and NUMA nodes (torch and its thread pools read them), never the machine's identifiers (DMI), its
# network interfaces or disks; with one, /sys whole (not tried on a GPU yet)
SYSTEM_INFO = ("/sys/devices/system/cpu", "/sys/devices/system/node", "/sys/kernel/mm/transparent_hugepage")
# the variables the child gets from this process's environment, where set; everything else is cleared
PASSED_VARIABLES = ("PATH", "LANG", "LC_ALL", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                    "GOODBENCH_DATA_DIR", "GOODBENCH_PG_TIMEOUT_S", "TZ")
# what the sandbox's process is: an unprivileged id in its own user namespace, with no capability
# (bwrap run by root keeps every one otherwise, and its binds would then not hold: trial 16)
UNPRIVILEGED_ID = "65534"
# the sandbox's private /tmp is bounded (sandbox_tmp.size: a share of the memory, at least 2 GiB): a script
# that fills it takes no more of the machine's memory, and leaves no minutes-long teardown behind
ISOLATION = ("--unshare-all", "--unshare-user", "--unshare-net", "--uid", UNPRIVILEGED_ID, "--gid", UNPRIVILEGED_ID,
             "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv")
# files of the fresh /proc that root's user id may write without a capability (the kernel's
# settings: kernel.core_pattern would run a program as root outside every namespace), bound read-only
PROC_COVERED = ("/proc/sys", "/proc/sysrq-trigger", "/proc/pressure")
GOODBENCH_PACKAGES = ("goodbench", "suite", "workloads")  # what `import goodbench` needs of its source tree
# bwrap's own environment: none. --clearenv clears the child's, but bwrap and the init process it
# forks (pid 1 in the sandbox, whose /proc/1/environ the child can read) keep what they were given
BWRAP_ENVIRONMENT: dict[str, str] = {}


def bwrap() -> str:
    """The ``bwrap`` program on PATH; :class:`CannotReproduce` naming what to install where there is none."""
    found = shutil.which("bwrap")
    if found is None:
        raise CannotReproduce("own code is run again only inside a sandbox, and bubblewrap (`bwrap`) is not on "
                              f"PATH: {INSTALL_HINT}; goodbench never runs a results file's command unsandboxed")
    return found


@functools.cache
def _help(program: str) -> str:
    """What ``bwrap --help`` says ("" where it cannot be run): which options this bubblewrap has."""
    try:
        said = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=30, env=BWRAP_ENVIRONMENT)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return said.stdout + said.stderr


def _forbids_user_namespaces(program: str) -> bool:
    """Whether this bwrap can forbid further user namespaces (``--disable-userns``, bubblewrap 0.8)."""
    return "--disable-userns" in _help(program)


def _bounds_tmpfs(program: str) -> bool:
    """Whether this bwrap can bound a tmpfs's size (``--size``, bubblewrap 0.5)."""
    return "--size" in _help(program)


def bounds_tmp() -> bool:
    """Whether the sandbox's ``/tmp`` is bounded here (this bwrap has ``--size``); where it is not,
    the reproduction says so before its first re-run (:meth:`~suite.run.reproduce.sandbox_tmp.Size.line`)."""
    return _bounds_tmpfs(bwrap())


def source_root() -> Path:
    """The folder goodbench's own packages are imported from (its checkout, or site-packages)."""
    import suite

    return Path(suite.__file__).resolve().parent.parent


def own_package_dirs() -> list[Path]:
    """The folders of goodbench's own packages as imported here."""
    root = source_root()
    return [root / name for name in GOODBENCH_PACKAGES if (root / name / "__init__.py").is_file()]


def _shows(path: Path, folder: Path) -> bool:
    """Whether binding ``path`` shows all of ``folder`` (it is that folder or holds it)."""
    return path == folder or folder.is_relative_to(path)


def bindable(path: Path, hidden: Iterable[Path], secret: Iterable[Path]) -> bool:
    """Whether ``path`` may be bound: it shows no ``hidden`` folder whole (a virtual environment
    inside the home is bound, the home is not) and nothing of a ``secret`` one."""
    return not any(_shows(path, h) for h in hidden) and not any(_shows(path, s) or path.is_relative_to(s)
                                                               for s in secret)


def python_paths() -> list[Path]:
    """The folders this Python may need: its prefixes and the absolute folders on ``sys.path``."""
    found: list[Path] = []
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  os.path.dirname(os.path.realpath(sys.executable)), *sys.path]
    for entry in candidates:
        if entry and os.path.isabs(entry) and os.path.isdir(entry):
            for path in (Path(os.path.abspath(entry)), Path(entry).resolve()):
                if path not in found:
                    found.append(path)
    return found


def data_dirs() -> list[Path]:
    """The dataset folders goodbench looks in (``$GOODBENCH_DATA_DIR``, the user cache), where they exist."""
    from workloads import data

    return [d.resolve() for d in data.search_dirs() if d.is_dir()]


def reviewer_folders(where: Path) -> tuple[list[Path], list[Path]]:
    """(hidden, secret): the folders never bound whole — the home, the checkout ``where`` (its
    results store) — and those of which nothing is bound: goodbench's configuration (the signing
    key), ``$GOODBENCH_CONFIG_DIR`` and ``~/.config/goodbench`` alike."""
    from suite.trust import signing

    home = Path.home().resolve()
    secret = {signing.config_dir().resolve(), (home / ".config" / "goodbench").resolve()}
    return [home, where.resolve()], sorted(secret)


def _importable_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` lies inside ``folder`` (a folder Python imports from) where what is written
    in it is importable from there: every folder between them named as a package can be."""
    return path != folder and path.is_relative_to(folder) and all(
        part.isidentifier() for part in path.relative_to(folder).parts)


def _refuse_imported_from(path: Path, kept: list[Path], imported: list[Path], packages: list[Path]) -> None:
    """Refuse to bind ``path`` writable where it shows a folder of ``kept`` (those goodbench or
    Python imports from, the reviewer's checkout and home), lies inside one of goodbench's own
    ``packages``, or lies inside an ``imported`` folder (Python's) under names a package can have
    (``site-packages/goodbench/out``; ``/tmp/goodbench-rerun-x`` under a ``/tmp`` on ``sys.path`` is no
    package): what the sandbox writes must not run outside it later."""
    resolved = path.resolve()
    shown = [k for k in kept if _shows(resolved, k.resolve())]
    if shown:
        raise CannotReproduce(f"the sandbox would be given {path} to write, which holds {shown[0]}, a folder "
                              "goodbench imports from or yours: goodbench does not run a results file's command so")
    inside = [k for k in packages if resolved.is_relative_to(k.resolve())]
    inside += [k for k in imported if _importable_inside(resolved, k.resolve())]
    if inside:
        raise CannotReproduce(f"the sandbox would be given {path} to write, which lies inside {inside[0]}, a folder "
                              "goodbench imports from: goodbench does not run a results file's command so")


def command(argv: list[str], *, writable: list[Path], cwd: Path, where: Path, env: dict[str, str],
            tmp_bytes: int = sandbox_tmp.FLOOR_BYTES) -> list[str]:
    """``argv`` wrapped in bwrap, run in ``cwd``: read-only the system, Python, goodbench's
    packages and the datasets; read-write only ``writable`` (each at its own path) and a private
    ``/tmp`` of ``tmp_bytes`` (where this bwrap can bound it); the reviewer's home, checkout
    ``where`` and configuration not there
    (:func:`reviewer_folders`); the environment cleared but for :data:`PASSED_VARIABLES` and ``env``."""
    hidden, secret = reviewer_folders(where)
    program = bwrap()
    args = [program, *ISOLATION, *(["--disable-userns"] if _forbids_user_namespaces(program) else [])]
    for name in PASSED_VARIABLES:
        if os.environ.get(name) and name not in env:
            args += ["--setenv", name, os.environ[name]]
    home = SANDBOX_USER["HOME"]
    root = source_root()
    for name, value in {**SANDBOX_USER, "GOODBENCH_OFFLINE": "1", "PYTHONPATH": str(root), "PYTHONNOUSERSITE": "1",
                        **env}.items():
        args += ["--setenv", name, value]
    for system in SYSTEM_DIRS:
        if os.path.islink(system):
            args += ["--symlink", os.readlink(system), system]
        elif os.path.isdir(system):
            args += ["--ro-bind", system, system]
    for system in SYSTEM_FILES:
        args += ["--ro-bind-try", system, system]
    args += ["--dev", "/dev", "--proc", "/proc"]
    for covered in PROC_COVERED:
        args += ["--ro-bind-try", covered, covered]
    nvidia = sorted(glob.glob(GPU_DEVICES[0]))
    for system in ["/sys"] if nvidia else SYSTEM_INFO:  # CUDA reads the PCI tree and its driver there
        args += ["--ro-bind-try", system, system]
    for device in gpu_devices():
        args += ["--dev-bind", device, device]
    args += [*(["--size", str(tmp_bytes)] if _bounds_tmpfs(program) else []), "--tmpfs", "/tmp", "--dir", home]
    shared = [p for p in [*python_paths(), *data_dirs()] if bindable(p, [*hidden, root], secret)]
    shared += [p for p in own_package_dirs() if bindable(p, [], secret)]  # goodbench's source tree: its packages alone
    for path in shared:
        if not any(path != other and path.is_relative_to(other) for other in shared):  # once, by its outermost
            args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        _refuse_imported_from(path, [*python_paths(), root, *own_package_dirs(), where, Path.home()],
                              python_paths(), own_package_dirs())
        args += ["--bind", str(path), str(path)]
    args += ["--remount-ro", "/", "--chdir", str(cwd), "--", *argv]
    return args


def gpu_devices() -> list[str]:
    """The device files of :data:`GPU_DEVICES` present here, each once (``/dev/nvidia*`` matches the
    ``/dev/nvidia-caps`` folder too), in order (not tried on a GPU yet)."""
    return list(dict.fromkeys(device for pattern in GPU_DEVICES for device in sorted(glob.glob(pattern))))


def capabilities_held(status: str) -> list[str]:
    """What ``/proc/self/status`` (its text) says of the capabilities the process holds, one phrase
    each; a field the kernel does not write (``CapAmb`` before Linux 4.3) holds none. Run in the
    sandbox's self-test, so it uses nothing outside the standard library."""
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    held = []
    for name in ("CapEff", "CapPrm", "CapAmb"):
        value = fields.get(name, "0").strip()
        if int(value or "0", 16):
            held.append("it holds capabilities (" + name + " " + value + ")")
    return held


def mig_unreadable(visible: str, instances: list[str], caps: dict[str, bool]) -> str | None:
    """Why a MIG slice cannot be used in the sandbox: one is asked for (``CUDA_VISIBLE_DEVICES``
    ``visible`` names a ``MIG-`` device) or, where it names no device, exists (``instances``, the
    driver's ``/proc/driver/nvidia/capabilities/gpu*/mig/gi*``), and a capability file CUDA opens for it
    (``caps``: each ``/dev/nvidia-caps`` file and whether the sandbox's user may read it) is
    unreadable; None otherwise. Run in the sandbox's self-test, standard library only."""
    unread = sorted(path for path, readable in caps.items() if not readable)
    if ("MIG-" not in visible and (visible or not instances)) or not unread:
        return None
    return (f"a MIG slice needs {unread[0]}, which the sandbox's unprivileged user cannot read: reproduce on a "
            "whole GPU (MIG is not tried in the sandbox)")


# what check runs in the sandbox: goodbench imports, and the process can change nothing it must not
# (it holds a capability, remounts goodbench's packages or writes there, or sets a kernel setting)
SELF_TEST = "\n".join(inspect.getsource(f) for f in (capabilities_held, mig_unreadable)) + """
import ctypes, glob, os, sys, goodbench
package = sys.argv[1]  # goodbench's packages as bound (a copy of goodbench's checkout holds its own)
said = capabilities_held(open("/proc/self/status").read())
if ctypes.CDLL(None, use_errno=True).mount(None, package.encode(), None, 32 | 4096, None) == 0:
    said.append("it may remount goodbench's packages")  # in its own mount namespace, gone with it
if os.access(package, os.W_OK):
    said.append("it may write in " + package)
try:  # opened, never written
    os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))
    said.append("it may set the kernel's settings (/proc/sys)")
except OSError:
    pass
mig = mig_unreadable(os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                     glob.glob("/proc/driver/nvidia/capabilities/gpu*/mig/gi*"),
                     {p: os.access(p, os.R_OK) for p in glob.glob("/dev/nvidia-caps/*")})
print("SANDBOX-MIG " + mig if mig and not said else "SANDBOX-" + ("; ".join(said) if said else "HELD"))
"""


def check(writable: list[Path], where: Path) -> None:
    """That the sandbox can be made here, Python imports goodbench in it, and it holds
    (:data:`SELF_TEST`); :class:`CannotReproduce` naming bwrap's complaint and what to install
    otherwise (bwrap missing, or no namespaces allowed), or what the sandbox would let through."""
    probe = command([sys.executable, "-c", SELF_TEST, str(own_package_dirs()[0])], writable=writable, cwd=writable[0], where=where, env={})
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=120, env=BWRAP_ENVIRONMENT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CannotReproduce(f"the sandbox cannot be started ({exc}): {INSTALL_HINT}, where it may make "
                              "namespaces; goodbench never runs a results file's command unsandboxed") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1][:300]
        raise CannotReproduce(f"the sandbox cannot be started here (bwrap: {said}): {INSTALL_HINT}, where it may "
                              "make namespaces; goodbench never runs a results file's command unsandboxed")
    said = (done.stdout.strip().splitlines() or [""])[-1]
    if said.startswith("SANDBOX-MIG "):
        raise CannotReproduce(f"{said.removeprefix('SANDBOX-MIG ')[:300]}; goodbench does not run a results "
                              "file's command there")
    if said != "SANDBOX-HELD":
        raise CannotReproduce(f"the sandbox would not hold here ({said.removeprefix('SANDBOX-')[:300]}), so "
                              "goodbench does not run a results file's command in it")
