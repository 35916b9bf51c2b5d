#!/usr/bin/env bash
# One measuring session of goodbench on a CUDA GPU, in named stages so that a session with a
# per-call time limit runs it in several calls. Every file it makes goes to $OUT (flat, few files).
#
#   OUT=DIR bash benchmarks/gpu_session.sh [--data-dir DIR] STAGE...
#
# Stages, in the order a session runs them:
#   info              nvidia-smi, python/torch/CUDA versions, which needed packages import
#   check             goodbench check (is this machine fit to benchmark now)
#   energy            NVML energy counter vs 10 Hz power samples over ~20 s of matmuls
#                     (benchmarks/energy_crosscheck.py -> $OUT/energy-crosscheck.json)
#   bench             pytest-benchmark of every workload's train step at full scale, compile mode
#                     $GOODBENCH_COMPILE (-> $OUT/benchmark-train-step.json; -MODE.json unless off)
#   overhead-ID       harness vs bare loop, full scale, compile mode $GOODBENCH_COMPILE
#                     (benchmarks/overhead.py -> $OUT/overhead-ID.json; overhead-ID-MODE.json unless off)
#   overhead          overhead-lm-char and overhead-gpt2-124m
#   compile-MODE      gpt2-124m full (500 steps) with --compile MODE (-> $OUT/compile-gpt2-124m-MODE.json),
#                     MODE one of: off default reduce-overhead max-autotune max-autotune-no-cudagraphs
#   compile           all five modes, then compile-summary
#   compile-summary   one row per compile-*.json in $OUT: compile s, tokens/s, MFU, p50 step
#   full-ID           goodbench run --scale full -w ID (-> $OUT/full-ID-<UTC time>.json)
#   full              full-ID for every workload
#
# Environment: OUT (required), GOODBENCH_DATA_DIR (or --data-dir: holds tinyshakespeare/input.txt
# and fashion-mnist/*.gz), GOODBENCH_COMPILE (torch.compile mode of the bench, overhead and full-*
# stages, default off; the compile-* stages name their own),
# GOODBENCH_SEEDS (seeds of the full-* runs; default the suite's: 5 for TTA workloads),
# GOODBENCH_SYSTEM_NAME, STAGE_TIMEOUT (seconds per stage, default 540), PYTHON (default python3);
# GOODBENCH_DEVICE/GOODBENCH_SCALE (default cuda/full) exist to rehearse the stages on a CPU.
# Each stage runs under `timeout -s INT`: a goodbench run cut there still writes its results file
# with the runs finished so far (settings.interrupted). Wheels in .whl/ are installed first.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
DATA_DIR="${GOODBENCH_DATA_DIR:-}"
STAGE_TIMEOUT="${STAGE_TIMEOUT:-540}"
DEVICE="${GOODBENCH_DEVICE:-cuda}"
SCALE="${GOODBENCH_SCALE:-full}"
WORKLOADS=(lm-char gpt2-124m fashion-cnn llama-1b dlrm-small)
MODES=(off default reduce-overhead max-autotune max-autotune-no-cudagraphs)
COMPILE="${GOODBENCH_COMPILE:-off}"
SUFFIX="$([ "$COMPILE" = off ] || echo "-$COMPILE")"  # results files of compiled runs say so

stages=()
while [ $# -gt 0 ]; do
    case "$1" in
        --data-dir) DATA_DIR="$2"; shift 2 ;;
        --data-dir=*) DATA_DIR="${1#--data-dir=}"; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) stages+=("$1"); shift ;;
    esac
done
contains() { local x="$1"; shift; for y in "$@"; do [ "$x" = "$y" ] && return 0; done; return 1; }
contains "$COMPILE" "${MODES[@]}" || { echo "gpu_session: GOODBENCH_COMPILE=$COMPILE is not one of ${MODES[*]}" >&2; exit 2; }
if [ -z "${OUT:-}" ]; then echo "gpu_session: set OUT to the folder for results" >&2; exit 2; fi
if [ ${#stages[@]} -eq 0 ]; then echo "gpu_session: name at least one stage (--help lists them)" >&2; exit 2; fi
mkdir -p "$OUT"
LOG="$OUT/session.log"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

if compgen -G ".whl/*.whl" >/dev/null; then  # packages the GPU machine lacks, carried as wheels
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/goodbench-site .whl/*.whl && export PYTHONPATH="/tmp/goodbench-site:$PYTHONPATH"
fi

data_args=()
[ -n "$DATA_DIR" ] && data_args=(--data-dir "$DATA_DIR")

say() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }

# run LIMIT CMD...: time-boxed (SIGINT first, SIGKILL 30 s later), output to the log too
run() {
    local limit="$1"; shift
    say "\$ $*  (limit ${limit}s)"
    local start=$SECONDS
    timeout -s INT -k 30 "$limit" "$@" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    say "exit $rc after $((SECONDS - start)) s"
    return "$rc"
}

# `python -m suite`, with SIGINT raising KeyboardInterrupt even where the caller ignored it
goodbench() {
    "$PYTHON" -c 'import runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
runpy.run_module("suite", run_name="__main__", alter_sys=True)' "$@"
}

stage_info() {
    run 60 nvidia-smi
    run 60 "$PYTHON" - <<'EOF'
import importlib, platform, torch
print("python", platform.python_version(), "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "| cuDNN", torch.backends.cudnn.version())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print("device", torch.cuda.get_device_name(0), "| SMs", p.multi_processor_count,
          "| memory GiB", round(p.total_memory / 2**30, 1), "| capability", f"{p.major}.{p.minor}")
else:
    print("torch sees no CUDA device")
for name in ("numpy", "scipy", "pandas", "pynvml", "pytest_benchmark", "jsonschema", "triton"):
    try:
        importlib.import_module(name)
        print(f"  {name}: ok")
    except ImportError as exc:
        print(f"  {name}: MISSING ({exc})")
EOF
}

stage_check() { run 120 goodbench check --device "$DEVICE"; }

stage_energy() {
    run 120 "$PYTHON" benchmarks/energy_crosscheck.py --seconds 20 --out "$OUT/energy-crosscheck.json"
}

stage_bench() {
    run "$STAGE_TIMEOUT" "$PYTHON" -m pytest benchmarks/test_train_step.py --benchmark-only \
        --scale "$SCALE" --compile-mode "$COMPILE" "${data_args[@]}" \
        --benchmark-json "$OUT/benchmark-train-step$SUFFIX.json" \
        -p no:cacheprovider -q
}

stage_overhead_one() {
    contains "$1" "${WORKLOADS[@]}" || { say "unknown workload $1 (one of ${WORKLOADS[*]})"; return 2; }
    run "$STAGE_TIMEOUT" "$PYTHON" benchmarks/overhead.py -w "$1" --scale "$SCALE" --compile "$COMPILE" \
        "${data_args[@]}" --json "$OUT/overhead-$1$SUFFIX.json"
}

stage_compile_one() {
    local mode="$1" out="$OUT/compile-gpt2-124m-$1.json"
    rm -f "$out"  # goodbench never overwrites a results file
    run "$STAGE_TIMEOUT" goodbench run -w gpt2-124m --scale "$SCALE" --device "$DEVICE" \
        --compile "$mode" -o "$out"
}

stage_compile_named() {
    contains "$1" "${MODES[@]}" || { say "unknown compile mode $1 (one of ${MODES[*]})"; return 2; }
    stage_compile_one "$1"; local rc=$?
    stage_compile_summary
    return $rc
}

stage_compile_summary() {
    run 60 "$PYTHON" - "$OUT" <<'EOF'
import json, pathlib, sys
import pandas as pd
rows = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("compile-*.json")):
    doc = json.loads(path.read_text())
    for r in doc["runs"]:
        t, m = r["metrics"]["throughput"] or {}, r["metrics"]
        rows.append({"compile": doc["settings"].get("compile", "off"), "status": r["status"],
                     "steps": r["steps"], "compile_warmup s": round(r["phases_s"]["compile_warmup"], 1),
                     "eval s": round(r["phases_s"]["eval"], 1), "tokens/s": t.get("tokens_per_s"),
                     "p50 step ms": 1000 * t["step_time_s"]["p50"] if t else None,
                     "MFU": m["mfu"], "window steps": (t.get("window") or {}).get("steps")})
print(pd.DataFrame(rows).to_string(index=False) if rows else "no compile-*.json results here")
EOF
}

stage_full_one() {
    contains "$1" "${WORKLOADS[@]}" || { say "unknown workload $1 (one of ${WORKLOADS[*]})"; return 2; }
    local args=(run -w "$1" --scale "$SCALE" --device "$DEVICE" --compile "$COMPILE"
                -o "$OUT/$SCALE-$1-$(date -u +%Y%m%dT%H%M%SZ).json" "${data_args[@]}")
    [ -n "${GOODBENCH_SEEDS:-}" ] && args+=(--seeds "$GOODBENCH_SEEDS")
    [ -n "${GOODBENCH_SYSTEM_NAME:-}" ] && args+=(--system-name "$GOODBENCH_SYSTEM_NAME")
    run "$STAGE_TIMEOUT" goodbench "${args[@]}"
}

failed=0
for stage in "${stages[@]}"; do
    say "stage $stage"
    case "$stage" in
        info) stage_info ;;
        check) stage_check ;;
        energy) stage_energy ;;
        bench) stage_bench ;;
        overhead) rc=0; for w in lm-char gpt2-124m; do stage_overhead_one "$w" || rc=1; done; [ $rc = 0 ] ;;
        overhead-*) stage_overhead_one "${stage#overhead-}" ;;
        compile) rc=0; for m in "${MODES[@]}"; do stage_compile_one "$m" || rc=1; done
                 stage_compile_summary; [ $rc = 0 ] ;;
        compile-summary) stage_compile_summary ;;
        compile-*) stage_compile_named "${stage#compile-}" ;;
        full) rc=0; for w in "${WORKLOADS[@]}"; do stage_full_one "$w" || rc=1; done; [ $rc = 0 ] ;;
        full-*) stage_full_one "${stage#full-}" ;;
        *) say "unknown stage $stage (--help lists them)"; false ;;
    esac || failed=1
done
say "done: $([ $failed = 0 ] && echo 'every stage exited 0' || echo 'a stage failed: see above')"
exit $failed
