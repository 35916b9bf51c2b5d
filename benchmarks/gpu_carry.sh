#!/usr/bin/env bash
# Prepare, on this machine, what a GPU session must carry to a machine with no network: the
# pinned wheels of the packages its image lacks, the dataset files, and (with --key) a copy of
# the signing key. Everything lands in git-ignored folders of this repository, which the device
# call carries beside the working tree:
#
#   bash benchmarks/gpu_carry.sh [--data-dir DIR] [--key] [--no-wheels]
#
#   .whl/             the wheels (CPython 3.12, manylinux x86_64) that benchmarks/gpu_session.sh
#                     installs with `pip install --no-index --no-deps --target`: jsonschema and
#                     what it needs (referencing, rpds-py, jsonschema-specifications), fastjsonschema,
#                     cryptography and cffi (with pycparser). The image has attrs and typing-extensions.
#   build/gpu-data/   the dataset files the workloads read (tinyshakespeare, fashion-mnist), each
#                     checked against its pinned sha256 (workloads/data.py), from --data-dir,
#                     $GOODBENCH_DATA_DIR or ../shared/datasets
#   build/gpu-config/ with --key: the signing key (goodbench keygen), mode 0600, so that the
#                     session signs its results (gpu_session.sh sets GOODBENCH_CONFIG_DIR to it)
#
# It ends with the device call to make, exactly: its carry list, its command (the `slot` plan of
# benchmarks/gpu_session.sh, SLOT_SECONDS=480 unless set) and its time limit (docs/measurement.md,
# "A GPU slot"), and the size of what will travel: the working tree and the carried folders
# together must stay under 64 MiB.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
DATA_DIR="${GOODBENCH_DATA_DIR:-}"
KEY=0 WHEELS=1
while [ $# -gt 0 ]; do
    case "$1" in
        --data-dir) DATA_DIR="$2"; shift 2 ;;
        --key) KEY=1; shift ;;
        --no-wheels) WHEELS=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu_carry: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
[ -z "$DATA_DIR" ] && [ -d "$ROOT/../shared/datasets" ] && DATA_DIR="$ROOT/../shared/datasets"

# The pinned set: the versions goodbench is tested with (pip list of its CI environment).
WHEELS_PINNED=(
    jsonschema==4.26.0 referencing==0.37.0 rpds-py==0.30.0 jsonschema-specifications==2025.9.1
    fastjsonschema==2.22.3 cryptography==48.0.0 cffi==2.0.0 pycparser==3.0
)
if [ "$WHEELS" = 1 ]; then
    rm -rf .whl && mkdir -p .whl
    "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl "${WHEELS_PINNED[@]}"
    echo "wheels: $(cd .whl && ls)"
fi

rm -rf build/gpu-data && mkdir -p build/gpu-data
"$PYTHON" - "$DATA_DIR" build/gpu-data <<'EOF'
import shutil, sys
from pathlib import Path
from workloads import data, registry

source, dest = sys.argv[1] or None, Path(sys.argv[2])
files = {f.name: f for w in registry.WORKLOADS.values() for f in w.data_files}
for name, file in sorted(files.items()):
    try:
        found = data.locate(file, source)  # sha256 checked; a download only where one is allowed
    except data.DataNotFound as exc:
        sys.exit(f"gpu_carry: {exc}")
    (dest / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(found, dest / name)
    print(f"data: {name} ({file.size:,} bytes, sha256 {file.sha256[:12]}…) from {found}")
EOF

if [ "$KEY" = 1 ]; then
    key="$("$PYTHON" -c 'from suite.trust import signing; print(signing.key_path())')"
    [ -f "$key" ] || { echo "gpu_carry: no signing key at $key (goodbench keygen makes one)" >&2; exit 1; }
    rm -rf build/gpu-config && mkdir -m 700 -p build/gpu-config
    install -m 600 "$key" build/gpu-config/signing-key.pem
    echo "key: $key copied to build/gpu-config/ (it travels with the call; the machine is wiped after it)"
fi

tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- | tail -1 | cut -f1)
folders=(); for f in .whl build/gpu-data build/gpu-config; do [ -e "$f" ] && folders+=("$f"); done
carried=$(du -cb "${folders[@]}" | tail -1 | cut -f1)
echo "travels: working tree $((tree / 1048576)) MiB + carried $((carried / 1048576)) MiB (limit 64 MiB)"
[ $((tree + carried)) -lt $((64 * 1048576)) ] || { echo "gpu_carry: over 64 MiB" >&2; exit 1; }
slot="${SLOT_SECONDS:-480}"
carry=$(printf '"%s", ' "${folders[@]}"); carry="[${carry%, }]"
[ "$KEY" = 1 ] || echo "no key carried: the slot's results will be unsigned (--key carries goodbench keygen's key)"
echo "the device call for one GPU slot:"
echo "  carry:     $carry"
echo "  command:   SLOT_SECONDS=$slot bash benchmarks/gpu_session.sh slot"
echo "  timeout_s: $((slot + 40))   (the slot ends its last stage ${slot} s in and lists what it wrote)"
