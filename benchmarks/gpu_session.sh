#!/usr/bin/env bash
# One measuring session of goodbench on a CUDA GPU, in named stages, time-boxed to one budget.
# Every file it makes goes to $OUT (flat, few files).
#
#   OUT=DIR SLOT_SECONDS=N bash benchmarks/gpu_session.sh [--data-dir DIR] STAGE...
#   bash benchmarks/gpu_session.sh --rehearsal [--data-dir DIR] [STAGE...]
#
# First prepare what travels, here: `bash benchmarks/gpu_carry.sh --key` prints the device call's
# carry list and command line. A GPU slot is one command of 6-8 minutes (docs/measurement.md,
# "A GPU slot"):
#   slot              info check full-gpt2-124m full-llama-1b energy full-lm-char full-fashion-cnn,
#                     then what else fits: compile-default full-dlrm-small own probe overhead bench
# A stage whose minimum (STAGE_MIN below, GPU seconds) does not fit in what is left of the budget
# is skipped with the reason, not started. For a longer loan, the same stages in calls of
# under 9 minutes each:
#   call-1            info check full-gpt2-124m full-llama-1b energy compile-default bench
#   call-2            full-lm-char full-fashion-cnn
#   call-3            full-dlrm-small own probe overhead (if time remains)
#
# Stages:
#   info              nvidia-smi, goodbench info (Python, numpy and the packages it runs without: each
#                     missing one and what it turns off), and whether this script's workload and
#                     compile-mode lists are the suite's
#   check             goodbench check (is this machine fit to benchmark now)
#   energy            NVML energy counter vs 10 Hz power samples over ~20 s of matmuls
#                     (benchmarks/energy_crosscheck.py -> $OUT/energy-crosscheck.json)
#   bench             pytest-benchmark of every workload's train step at full scale, compile mode
#                     $GOODBENCH_COMPILE (-> $OUT/benchmark-train-step.json; -MODE.json unless off)
#   overhead-ID       harness vs bare loop, full scale, compile mode $GOODBENCH_COMPILE
#                     (benchmarks/overhead.py -> $OUT/overhead-ID.json; overhead-ID-MODE.json unless off)
#   overhead          overhead-lm-char and overhead-gpt2-124m
#   compile-MODE      gpt2-124m full (500 steps) with --compile MODE (-> $OUT/compile-gpt2-124m-MODE.json),
#                     MODE one of: default reduce-overhead max-autotune max-autotune-no-cudagraphs
#                     (eager, "off", is full-gpt2-124m's run: the summary reads it from there)
#   compile           the four compiled modes, then compile-summary
#   compile-summary   one row per gpt2-124m results file in $OUT: compile s, tokens/s, MFU, p50 step
#   full-ID           goodbench run --scale full -w ID (-> $OUT/full-ID-<UTC time>.json)
#   full              full-ID for every workload
#   own               goodbench's library around one's own loop: examples/plain_loop.py held to
#                     lm-char's smoke target on the device, run by `goodbench run-own` (its second
#                     clock stamps the steps' and evaluations' edges from outside the process)
#                     (-> $OUT/own-plain-<UTC time>.json; run-own prints whether the clocks agree
#                     and what the validator says of it; validate it again where it is brought)
#   probe             own code's causality probe on the device: how far honest causal GPTs come from
#                     its tolerance at fp32 and bf16, and the control that reads the next token
#                     (benchmarks/causality_probe.py, printed to the log)
#
# Environment: OUT (required), SLOT_SECONDS (seconds the whole invocation may take, default 480;
# CALL_BUDGET is its older name: every command's limit is cut to what is left of it, less the
# SIGINT margin; give the device call a limit at least 30 s above it), GOODBENCH_DATA_DIR (or --data-dir: holds tinyshakespeare/input.txt
# and fashion-mnist/*.gz; default: build/gpu-data, where benchmarks/gpu_carry.sh puts the files to
# carry, else ../shared/datasets beside the repository), GOODBENCH_COMPILE (torch.compile mode of
# the bench, overhead and full-* stages, default off; the compile-* stages name their own),
# GOODBENCH_SEEDS (seeds of the full-* runs; default the suite's: 5 for TTA workloads),
# GOODBENCH_SYSTEM_NAME, GOODBENCH_CONFIG_DIR (the signing key's folder; default build/gpu-config
# when it holds a key), STAGE_TIMEOUT (seconds per command, default 540),
# STAGE_KILL_AFTER (SIGKILL that long after a command's SIGINT, default 10), PYTHON (default
# python3); GOODBENCH_DEVICE/GOODBENCH_SCALE (default cuda/full) set the device and scale.
# GOODBENCH_OFFLINE=1 is set: nothing is downloaded, a missing dataset is a one-line skip.
# Each command runs under `timeout -s INT -k KILL_AFTER` in a process group of its own: at its
# limit the whole group gets SIGINT, and a goodbench run cut there still writes its results file
# with the runs so far (settings.interrupted); SIGKILL follows KILL_AFTER s later. A command's
# limit ends KILL_AFTER + 10 s before the call's budget, so that a cut run is written in time. A
# run killed after its results file was written (a slow interpreter exit) counts as cut at its
# limit: the file is renamed into place whole, so it is there complete or not at all.
# Ctrl-C or SIGTERM of this script reaches the running command the same way, and no later stage
# starts (exit 130/143). Wheels in .whl/ (benchmarks/gpu_carry.sh) are installed first, into a
# private folder made for this invocation and removed at its exit, and the packages goodbench runs
# without that are still missing are named. The first lines say what arrived (wheels, each
# dataset file with its sha256 checked, the key); a workload whose data did not arrive is not
# started, and the line names the file. The last lines list each file written to $OUT and whether
# goodbench validate accepts it, then each bound's honest slack on those files (benchmarks/physics_slack.py
# -> $OUT/physics-slack.json). Runs are signed when a key
# is there and the package cryptography imports; else unsigned, and the log says why.
#
# --rehearsal runs the stages on this machine's CPU at smoke scale with the same commands (device
# and scale swapped) in a Python shaped like the GPU image (benchmarks/gpu_image/: jsonschema,
# fastjsonschema and cryptography cannot be imported unless carried in .whl/), to find a broken
# stage before GPU time is spent; it needs no OUT (a new folder under /tmp) and by default runs
# every stage: info check energy bench overhead compile full own probe, the families over
# REHEARSAL_WORKLOADS (default lm-char dlrm-small; overhead: the first) and REHEARSAL_MODES
# (default: default). A goodbench run is stopped REHEARSAL_CUT seconds (default 2) after its
# training starts, as Ctrl-C would stop it, and must leave its results file (the compile stage's
# run, which a CPU does not compile within minutes, is cut at REHEARSAL_COMPILE_TIMEOUT, default
# 60 s × REHEARSAL_SLOWDOWN, and must leave it too); bench and overhead,
# which take many minutes on a CPU, are cut at STAGE_TIMEOUT (default 15 s here; SIGKILL 10 s
# later); energy ends with status 2 (it needs a CUDA GPU). The rehearsal passes when every stage
# ended so. The fixed limits of info, check, energy and the runs are REHEARSAL_SLOWDOWN (default 5)
# times the GPU's: a busy CPU starts Python and torch far slower. REHEARSAL_IMAGE=0 rehearses with
# this machine's packages instead.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
DATA_DIR="${GOODBENCH_DATA_DIR:-}"
WORKLOADS=(lm-char gpt2-124m fashion-cnn llama-1b dlrm-small)
MODES=(off default reduce-overhead max-autotune max-autotune-no-cudagraphs)
COMPILE="${GOODBENCH_COMPILE:-off}"
SUFFIX="$([ "$COMPILE" = off ] || echo "-$COMPILE")"  # results files of compiled runs say so
REHEARSAL=0

stages=()
while [ $# -gt 0 ]; do
    case "$1" in
        --data-dir) DATA_DIR="$2"; shift 2 ;;
        --data-dir=*) DATA_DIR="${1#--data-dir=}"; shift ;;
        --rehearsal) REHEARSAL=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) stages+=("$1"); shift ;;
    esac
done
contains() { local x="$1"; shift; for y in "$@"; do [ "$x" = "$y" ] && return 0; done; return 1; }
contains "$COMPILE" "${MODES[@]}" || { echo "gpu_session: GOODBENCH_COMPILE=$COMPILE is not one of ${MODES[*]}" >&2; exit 2; }
# One slot: what puts the most trustworthy results on the board first (docs/measurement.md,
# "A GPU slot"), then what else fits. The calls of a longer loan: each under 9 minutes on an H100.
SLOT=(info check full-gpt2-124m full-llama-1b energy full-lm-char full-fashion-cnn
      compile-default full-dlrm-small own probe overhead bench)
CALL_1=(info check full-gpt2-124m full-llama-1b energy compile-default bench)
CALL_2=(full-lm-char full-fashion-cnn)
CALL_3=(full-dlrm-small own probe overhead)
# The least time (GPU seconds) in which a stage still leaves something worth having: info's and
# check's lines, a throughput run's steady window, a time-to-target workload's first seed, the
# energy cross-check's 20-s window. A stage with less left than this is skipped, not started.
declare -A STAGE_MIN=([info]=15 [check]=15 [energy]=35 [bench]=90 [own]=45 [probe]=30 [overhead]=60
                      [full-gpt2-124m]=60 [full-llama-1b]=75 [full-lm-char]=60 [full-fashion-cnn]=60
                      [full-dlrm-small]=60 [compile]=90 [full]=60)
stage_min() {  # stage_min STAGE: its minimum in seconds (a family's: one member's)
    local s="$1"
    [ -n "${STAGE_MIN[$s]:-}" ] && { echo "${STAGE_MIN[$s]}"; return; }
    case "$s" in compile-*) s=compile ;; overhead-*) s=overhead ;; full-*) s=full ;; *) echo 10; return ;; esac
    echo "${STAGE_MIN[$s]}"
}
expanded=()
for stage in "${stages[@]}"; do
    case "$stage" in
        slot) expanded+=("${SLOT[@]}") ;;
        call-1) expanded+=("${CALL_1[@]}") ;;
        call-2) expanded+=("${CALL_2[@]}") ;;
        call-3) expanded+=("${CALL_3[@]}") ;;
        *) expanded+=("$stage") ;;
    esac
done
stages=("${expanded[@]+"${expanded[@]}"}")
FULL_WORKLOADS=("${WORKLOADS[@]}")  # what the families full, compile and overhead run over
COMPILE_MODES=("${MODES[@]:1}")  # off, eager, is full-gpt2-124m's run: never trained twice
OVERHEAD_WORKLOADS=(lm-char gpt2-124m)
KILL_AFTER="${STAGE_KILL_AFTER:-10}"  # SIGKILL this long after a command's SIGINT (a run exits within 5 s)
if [ "$REHEARSAL" = 1 ]; then
    DEVICE=cpu SCALE=smoke
    STAGE_TIMEOUT="${STAGE_TIMEOUT:-15}"
    SLOW="${REHEARSAL_SLOWDOWN:-5}"  # a busy CPU starts Python and torch far slower than the GPU machine
    RUN_TIMEOUT="${REHEARSAL_RUN_TIMEOUT:-$((120 * SLOW))}"  # a goodbench run is stopped by the rehearsal itself
    # a CPU compiles gpt2-124m for longer than this: the stage shows the run starts and, cut, leaves its file
    COMPILE_TIMEOUT="${REHEARSAL_COMPILE_TIMEOUT:-$((60 * SLOW))}"
    REHEARSAL_CUT="${REHEARSAL_CUT:-2}"
    KILL_AFTER="${STAGE_KILL_AFTER:-10}"
    read -r -a FULL_WORKLOADS <<<"${REHEARSAL_WORKLOADS:-lm-char dlrm-small}"
    read -r -a COMPILE_MODES <<<"${REHEARSAL_MODES:-default}"
    OVERHEAD_WORKLOADS=("${FULL_WORKLOADS[0]}")
    for w in "${FULL_WORKLOADS[@]}"; do
        contains "$w" "${WORKLOADS[@]}" || { echo "gpu_session: REHEARSAL_WORKLOADS: $w is not one of ${WORKLOADS[*]}" >&2; exit 2; }
    done
    for m in "${COMPILE_MODES[@]}"; do
        contains "$m" "${MODES[@]}" || { echo "gpu_session: REHEARSAL_MODES: $m is not one of ${MODES[*]}" >&2; exit 2; }
    done
    OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/goodbench-rehearsal.XXXXXX")}"
    [ ${#stages[@]} -eq 0 ] && stages=(info check energy bench overhead compile full own probe)
    BUDGET="${SLOT_SECONDS:-${CALL_BUDGET:-3600}}"
else
    DEVICE="${GOODBENCH_DEVICE:-cuda}"
    SCALE="${GOODBENCH_SCALE:-full}"
    STAGE_TIMEOUT="${STAGE_TIMEOUT:-540}"
    RUN_TIMEOUT="$STAGE_TIMEOUT" COMPILE_TIMEOUT="$STAGE_TIMEOUT"
    SLOW=1
    BUDGET="${SLOT_SECONDS:-${CALL_BUDGET:-480}}"
fi
case "$BUDGET" in ''|*[!0-9]*) echo "gpu_session: SLOT_SECONDS=$BUDGET is not a number of seconds" >&2; exit 2 ;; esac
DEADLINE=$((SECONDS + BUDGET))  # every command's limit ends before it (see run)
CLOSING=$((20 * SLOW))  # kept at the end: the list of files written and their validation
if [ -z "$DATA_DIR" ]; then  # the carried copy (benchmarks/gpu_carry.sh), else the mirror beside the repository
    for candidate in "$ROOT/build/gpu-data" "$ROOT/../shared/datasets"; do
        if [ -d "$candidate" ]; then DATA_DIR="$(cd "$candidate" && pwd)"; break; fi
    done
fi
export GOODBENCH_OFFLINE=1  # never a download: a missing dataset is a one-line skip
if [ -z "${GOODBENCH_CONFIG_DIR:-}" ] && [ -f "$ROOT/build/gpu-config/signing-key.pem" ]; then
    export GOODBENCH_CONFIG_DIR="$ROOT/build/gpu-config"  # a key carried for this session
fi
if [ -z "${OUT:-}" ]; then echo "gpu_session: set OUT to the folder for results" >&2; exit 2; fi
if [ ${#stages[@]} -eq 0 ]; then echo "gpu_session: name at least one stage (--help lists them)" >&2; exit 2; fi
mkdir -p "$OUT"
LOG="$OUT/session.log"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

say() { echo "== $(date -u +%H:%M:%S) $*" | tee -ia "$LOG"; }

# Packages the GPU machine lacks, carried as wheels: installed into a folder of this invocation's
# own (private, removed at exit), never a fixed path another user or an earlier session could fill.
CARRIED=""
if compgen -G ".whl/*.whl" >/dev/null; then
    CARRIED="$(mktemp -d "${TMPDIR:-/tmp}/goodbench-carried.XXXXXX")"
    trap 'rm -rf "$CARRIED"' EXIT
    if "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$CARRIED" .whl/*.whl; then
        export PYTHONPATH="$CARRIED:$PYTHONPATH"
        say "arrived: wheels $(cd .whl && echo *.whl), installed for this session only"
    else
        say "arrived: wheels in .whl/ that did not install (see above); going on without them"
        CARRIED=""
    fi
else
    say "arrived: no wheels (.whl/ is empty: bash benchmarks/gpu_carry.sh makes them)"
fi
if [ "$REHEARSAL" = 1 ] && [ "${REHEARSAL_IMAGE:-1}" = 1 ]; then  # a Python shaped like the GPU image
    export PYTHONPATH="$ROOT/benchmarks/gpu_image:$PYTHONPATH" GOODBENCH_CARRIED="$CARRIED"
fi
missing="$("$PYTHON" -c 'from suite.record import dependencies; print(" ".join(dependencies.missing()))' 2>&1)" \
    || { say "goodbench does not import here: $missing"; exit 1; }
if [ -n "$missing" ]; then
    say "packages goodbench runs without, missing here: $missing (goodbench info says what each turns off)"
fi
if [ -f "${GOODBENCH_CONFIG_DIR:-/nonexistent}/signing-key.pem" ]; then
    say "arrived: a signing key ($GOODBENCH_CONFIG_DIR)"
else
    say "arrived: no signing key (bash benchmarks/gpu_carry.sh --key carries one)"
fi
sign_args=()
if ! "$PYTHON" -c 'from suite.record import dependencies; from suite.trust import signing; import sys; sys.exit(0 if dependencies.installed(signing.CRYPTO) else 1)'; then
    sign_args=(--no-sign)
    say "results unsigned: the package cryptography is not installed here (carry it: benchmarks/gpu_carry.sh)"
elif ! "$PYTHON" -c 'from suite.trust import signing; import sys; sys.exit(0 if signing.key_path().is_file() else 1)'; then
    say "results unsigned: no signing key here (carry one: benchmarks/gpu_carry.sh --key)"
fi

data_args=()
[ -n "$DATA_DIR" ] && data_args=(--data-dir "$DATA_DIR")
# Which dataset files arrived, each checked against its pinned sha256: a workload whose file did
# not is not started (stage_full_one), and the line names the file and how to carry it.
declare -A NO_DATA=()
arrived="$("$PYTHON" - "$DATA_DIR" <<'EOF'
import sys
from pathlib import Path
from workloads import data, registry
folder = Path(sys.argv[1]) if sys.argv[1] else None
for wid, workload in registry.WORKLOADS.items():
    for file in workload.data_files:
        path = folder / file.name if folder else None
        state = "ok" if path and path.is_file() and data.sha256_of(path) == file.sha256 else \
            "wrong-sha256" if path and path.is_file() else "absent"
        print(wid, file.name, state)
EOF
)" || { say "goodbench's workloads do not import here: $arrived"; exit 1; }
seen=() ; missing_files=()
while read -r wid name state; do
    [ -z "$wid" ] && continue
    contains "$name" "${seen[@]+"${seen[@]}"}" || { seen+=("$name"); [ "$state" = ok ] || missing_files+=("$name ($state)"); }
    if [ "$state" != ok ]; then NO_DATA[$wid]="${NO_DATA[$wid]:+${NO_DATA[$wid]}, }${DATA_DIR:-(no data folder)}/$name ($state)"; fi
done <<<"$arrived"
if [ ${#missing_files[@]} -eq 0 ]; then
    say "arrived: datasets in $DATA_DIR, every file with its pinned sha256 (${seen[*]})"
else
    say "arrived: datasets NOT all here (${DATA_DIR:-no data folder}): missing ${missing_files[*]}; their workloads will not start (carry build/gpu-data: bash benchmarks/gpu_carry.sh)"
fi

# `python -m suite` as a command `timeout` can run (it cannot run a shell function), with SIGINT
# raising KeyboardInterrupt even where the caller ignored SIGINT (a background job's default)
GOODBENCH_MAIN='import runpy, signal
signal.signal(signal.SIGINT, signal.default_int_handler)
runpy.run_module("suite", run_name="__main__", alter_sys=True)'
GOODBENCH=("$PYTHON" -c "$GOODBENCH_MAIN")

STAGE_PID=""  # the running command's `timeout` (the leader of the command's process group)
STOPPED=""    # INT or TERM once this script was asked to stop
CUT_AFTER=""  # rehearsal: a line of the command's output after which it is stopped
on_signal() {  # Ctrl-C or SIGTERM: the running command stops as at its limit; no later stage runs
    STOPPED="$1"
    if [ -n "$STAGE_PID" ]; then kill -INT "$STAGE_PID" 2>/dev/null; fi
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM

# run LIMIT CMD...: time-boxed (SIGINT to its process group at LIMIT seconds, SIGKILL KILL_AFTER
# seconds later), its output to the log too; returns its exit status (124: cut at its limit)
run() {
    local limit="$1"; shift
    local shown="$*" left=$((DEADLINE - SECONDS - KILL_AFTER - 10 - CLOSING))
    [ "$left" -lt "$limit" ] && limit=$left
    say "\$ ${shown//"$PYTHON -c $GOODBENCH_MAIN"/goodbench}  (limit ${limit}s)"
    if [ -n "$STOPPED" ]; then say "not started: stopped by SIG$STOPPED"; return 130; fi
    if [ "$left" -lt 10 ]; then say "not started: the budget (SLOT_SECONDS=${BUDGET}s) is spent"; return 125; fi
    local start=$SECONDS from rc again tee_fd tee_pid
    from=$(( $(stat -c %s "$LOG") + 1 ))
    exec {tee_fd}> >(exec tee -ia "$LOG")
    tee_pid=$!
    timeout -s INT -k "$KILL_AFTER" "$limit" "$@" <&0 >&"$tee_fd" 2>&1 &
    STAGE_PID=$!
    exec {tee_fd}>&-
    if [ -n "$CUT_AFTER" ]; then  # rehearsal: stop it REHEARSAL_CUT s after that line, as Ctrl-C does
        while kill -0 "$STAGE_PID" 2>/dev/null && [ -z "$STOPPED" ]; do
            if tail -c "+$from" "$LOG" | grep -q -- "$CUT_AFTER"; then
                sleep "$REHEARSAL_CUT" & local sleeper=$!
                while kill -0 "$sleeper" 2>/dev/null && kill -0 "$STAGE_PID" 2>/dev/null && [ -z "$STOPPED" ]; do
                    sleep 0.1 & wait $!  # `wait`: a Ctrl-C meanwhile is acted on at once
                done
                kill "$sleeper" 2>/dev/null
                if [ -z "$STOPPED" ] && kill -0 "$STAGE_PID" 2>/dev/null; then
                    say "rehearsal: stopping it (SIGINT) ${REHEARSAL_CUT} s after \"$CUT_AFTER\""
                    kill -INT "$STAGE_PID" 2>/dev/null
                fi
                break
            fi
            sleep 0.5 & wait $!
        done
    fi
    while :; do
        wait "$STAGE_PID"; rc=$?
        # a trapped signal ends `wait` early (status > 128) while the command runs on
        if [ "$rc" -gt 128 ] && kill -0 "$STAGE_PID" 2>/dev/null; then continue; fi
        break
    done
    wait "$STAGE_PID" 2>/dev/null; again=$?  # its own status, had a signal ended `wait` above
    [ "$again" -ne 127 ] && rc=$again
    STAGE_PID=""
    for _ in $(seq 50); do kill -0 "$tee_pid" 2>/dev/null || break; sleep 0.1; done  # its output is logged
    local why=""
    [ "$rc" = 124 ] && why=": cut at its limit"
    [ "$rc" = 137 ] && why=": killed (SIGKILL), as it did not stop within ${KILL_AFTER} s of its SIGINT"
    say "exit $rc after $((SECONDS - start)) s$why"
    return "$rc"
}

# rehearsed RC: a rehearsal expects bench and overhead to be cut at their limit on a CPU (124,
# or 137 when the command took longer than KILL_AFTER to stop)
rehearsed() {
    if [ "$REHEARSAL" = 1 ] && { [ "$1" = 124 ] || [ "$1" = 137 ]; } && [ -z "$STOPPED" ]; then
        say "rehearsal: cut at its limit, as expected on a CPU"
        return 0
    fi
    return "$1"
}

# goodbench_run OUT ARGS...: `goodbench run ARGS -o OUT`; says whether it left its results file.
# In a rehearsal it is stopped a few seconds into training and must leave that file.
goodbench_run() {
    local out="$1"; shift
    local rc
    if [ "$REHEARSAL" = 1 ]; then CUT_AFTER="] step "; fi  # past the first steps: compiled by then
    run "${RUN_LIMIT:-$RUN_TIMEOUT}" "${GOODBENCH[@]}" run "$@" "${sign_args[@]+"${sign_args[@]}"}" -o "$out"; rc=$?
    CUT_AFTER=""
    if [ -s "$out" ]; then say "results file $out"
    elif [ -f "$out" ]; then say "no results file written ($out holds only its empty reservation: killed before writing)"
    else say "no results file written ($out)"; fi
    if [ "$rc" = 137 ] && [ -s "$out" ]; then  # written whole (renamed into place), then killed while exiting
        say "killed while exiting, after its results file was written (whole: it is renamed into place)"
        rc=124
    fi
    if [ "$REHEARSAL" = 1 ] && { [ "$rc" = 124 ] || [ "$rc" = 130 ]; } && [ -z "$STOPPED" ]; then
        [ -s "$out" ] || return 1
        say "rehearsal: stopped early, as planned, and its results file was written"
        return 0
    fi
    return "$rc"
}

stage_info() {
    local rc=0
    if command -v nvidia-smi >/dev/null; then run $((60 * SLOW)) nvidia-smi || rc=$?; else say "no nvidia-smi on this machine"; fi
    run $((120 * SLOW)) "${GOODBENCH[@]}" info --device "$DEVICE" || rc=$?
    run $((60 * SLOW)) "$PYTHON" - "${WORKLOADS[*]}" "${MODES[*]}" <<'EOF' || rc=$?
import sys
from workloads import registry
from workloads.pinned import COMPILE_MODES
lists = {"workloads": (sys.argv[1].split(), list(registry.WORKLOADS)),
         "compile modes": (sys.argv[2].split(), list(COMPILE_MODES))}
wrong = [f"{what}: this script has {ours}, the suite {theirs}" for what, (ours, theirs) in lists.items()
         if sorted(ours) != sorted(theirs)]
print("\n".join(wrong) if wrong else "this script's workloads and compile modes are the suite's")
sys.exit(1 if wrong else 0)
EOF
    return $rc
}

stage_check() {
    local from rc
    from=$(( $(stat -c %s "$LOG") + 1 ))
    run $((120 * SLOW)) "${GOODBENCH[@]}" check --device "$DEVICE"; rc=$?
    # a rehearsal checks that the stage runs, not that a shared CPU is quiet
    if [ "$REHEARSAL" = 1 ] && [ "$rc" = 1 ] && [ "$(tail -c "+$from" "$LOG" | grep -c '^fail ')" = 1 ] \
            && tail -c "+$from" "$LOG" | grep -q '^fail  other processes'; then
        say "rehearsal: this CPU is busy, and check said so"; return 0
    fi
    return $rc
}

stage_energy() {
    run $((120 * SLOW)) "$PYTHON" benchmarks/energy_crosscheck.py --seconds 20 --out "$OUT/energy-crosscheck.json"
    local rc=$?
    if [ "$REHEARSAL" = 1 ] && [ "$rc" = 2 ]; then say "rehearsal: status 2, the answer of a machine without a CUDA GPU"; return 0; fi
    return $rc
}

stage_bench() {
    run "$STAGE_TIMEOUT" "$PYTHON" -m pytest benchmarks/test_train_step.py --benchmark-only \
        --scale "$SCALE" --compile-mode "$COMPILE" "${data_args[@]}" \
        --benchmark-json "$OUT/benchmark-train-step$SUFFIX.json" \
        -p no:cacheprovider -q
    local rc=$? json="$OUT/benchmark-train-step$SUFFIX.json"
    if [ "$rc" != 0 ] && [ -e "$json" ]; then  # pytest-benchmark saves a cut round as if it were whole
        rm -f "$json"
        say "no benchmark results kept: it did not end by itself (exit $rc), and an interrupted round is no measurement"
    elif [ ! -s "$json" ]; then  # pytest-benchmark makes it at the start
        rm -f "$json"
        say "no benchmark results written (the file pytest-benchmark opened at the start is removed)"
    fi
    rehearsed $rc
}

stage_overhead_one() {
    contains "$1" "${WORKLOADS[@]}" || { say "unknown workload $1 (one of ${WORKLOADS[*]})"; return 2; }
    run "$STAGE_TIMEOUT" "$PYTHON" benchmarks/overhead.py -w "$1" --scale "$SCALE" --compile "$COMPILE" \
        "${data_args[@]}" --json "$OUT/overhead-$1$SUFFIX.json"
    rehearsed $?
}

stage_compile_one() {
    local mode="$1" out="$OUT/compile-gpt2-124m-$1.json"
    rm -f "$out"  # goodbench never overwrites a results file
    RUN_LIMIT="$COMPILE_TIMEOUT" goodbench_run "$out" -w gpt2-124m --scale "$SCALE" --device "$DEVICE" --compile "$mode"
}

stage_compile_named() {
    if [ "$1" = off ]; then say "compile-off is full-gpt2-124m's run (eager): run that stage instead"; return 2; fi
    contains "$1" "${MODES[@]}" || { say "unknown compile mode $1 (one of ${MODES[*]})"; return 2; }
    stage_compile_one "$1"; local rc=$?
    stage_compile_summary
    return $rc
}

stage_compile_summary() {
    run $((60 * SLOW)) "$PYTHON" - "$OUT" <<'EOF'
import json, pathlib, sys
import pandas as pd
rows = []
paths = [*pathlib.Path(sys.argv[1]).glob("compile-gpt2-124m-*.json"),
         *pathlib.Path(sys.argv[1]).glob("*-gpt2-124m-*T*Z.json")]  # full-gpt2-124m: the eager run
for path in sorted(paths):
    try:
        doc = json.loads(path.read_text())
    except ValueError:  # a placeholder a killed run left
        continue
    for r in doc["runs"]:
        t, m = r["metrics"]["throughput"] or {}, r["metrics"]
        rows.append({"compile": doc["settings"].get("compile", "off"), "status": r["status"],
                     "steps": r["steps"], "compile_warmup s": round(r["phases_s"]["compile_warmup"], 1),
                     "eval s": round(r["phases_s"]["eval"], 1), "tokens/s": t.get("tokens_per_s"),
                     "p50 step ms": 1000 * t["step_time_s"]["p50"] if t else None,
                     "MFU": m["mfu"], "window steps": (t.get("window") or {}).get("steps")})
print(pd.DataFrame(rows).to_string(index=False) if rows else "no gpt2-124m results files here")
EOF
}

stage_full_one() {
    contains "$1" "${WORKLOADS[@]}" || { say "unknown workload $1 (one of ${WORKLOADS[*]})"; return 2; }
    if [ -n "${NO_DATA[$1]:-}" ]; then
        say "not started: $1's data did not arrive: ${NO_DATA[$1]} (carry build/gpu-data: bash benchmarks/gpu_carry.sh)"
        return 126
    fi
    local args=(-w "$1" --scale "$SCALE" --device "$DEVICE" --compile "$COMPILE" "${data_args[@]}")
    [ -n "${GOODBENCH_SEEDS:-}" ] && args+=(--seeds "$GOODBENCH_SEEDS")
    [ -n "${GOODBENCH_SYSTEM_NAME:-}" ] && args+=(--system-name "$GOODBENCH_SYSTEM_NAME")
    goodbench_run "$OUT/$SCALE-$1-$(date -u +%Y%m%dT%H%M%SZ).json" "${args[@]}"
}

stage_own() {
    if [ -z "$DATA_DIR" ] || [ ! -f "$DATA_DIR/tinyshakespeare/input.txt" ]; then
        say "own: skipped, lm-char's data (tinyshakespeare/input.txt) is not in the data folder"; return 0
    fi
    local out="$OUT/own-plain-$(date -u +%Y%m%dT%H%M%SZ).json"
    # checkpoints every 50 steps (run.save on the device), kept outside $OUT: not brought back
    local args=(--device "$DEVICE" --out "$out" --checkpoint-dir "$(mktemp -d)/own-plain.ckpt")
    [ -n "$DATA_DIR" ] && args+=(--data-dir "$DATA_DIR")
    [ "$REHEARSAL" = 1 ] && args+=(--steps 60)  # a CPU's steps are slow: the loop, not the target, is rehearsed
    # run-own stamps its edges on a second clock, signs the file when the script asks, validates it
    run "$RUN_TIMEOUT" "${GOODBENCH[@]}" run-own examples/plain_loop.py "${args[@]}"
}

stage_probe() {
    if [ -z "$DATA_DIR" ] || [ ! -f "$DATA_DIR/tinyshakespeare/input.txt" ]; then
        say "probe: skipped, lm-char's data (tinyshakespeare/input.txt) is not in the data folder"; return 0
    fi
    local repeats=3
    [ "$REHEARSAL" = 1 ] && repeats=1
    run "$RUN_TIMEOUT" "$PYTHON" benchmarks/causality_probe.py --device "$DEVICE" --repeats "$repeats" --data-dir "$DATA_DIR"
}

[ "$REHEARSAL" = 1 ] && say "rehearsal on the CPU at smoke scale: ${stages[*]} (files in $OUT)"
failed=0 summary=()
for stage in "${stages[@]}"; do
    if [ -n "$STOPPED" ]; then say "stopped by SIG$STOPPED: stage $stage and any later one not run"; break; fi
    began=$SECONDS
    left=$((DEADLINE - SECONDS - KILL_AFTER - 10 - CLOSING)) need=$(stage_min "$stage")
    if [ "$left" -lt "$need" ]; then
        say "stage $stage skipped: it needs at least ${need} s and ${left} s are left of the budget (SLOT_SECONDS=${BUDGET})"
        summary+=("$(printf '%-22s %-11s %5d s' "$stage" "SKIPPED (needs ${need} s, ${left} s left)" 0)")
        continue
    fi
    say "stage $stage"
    case "$stage" in
        info) stage_info ;;
        check) stage_check ;;
        energy) stage_energy ;;
        bench) stage_bench ;;
        overhead) rc=0; for w in "${OVERHEAD_WORKLOADS[@]}"; do stage_overhead_one "$w" || rc=1; done; [ $rc = 0 ] ;;
        overhead-*) stage_overhead_one "${stage#overhead-}" ;;
        compile) rc=0; for m in "${COMPILE_MODES[@]}"; do stage_compile_one "$m" || rc=1; done
                 stage_compile_summary || rc=1; [ $rc = 0 ] ;;
        compile-summary) stage_compile_summary ;;
        compile-*) stage_compile_named "${stage#compile-}" ;;
        full) rc=0; for w in "${FULL_WORKLOADS[@]}"; do stage_full_one "$w" || rc=1; done; [ $rc = 0 ] ;;
        full-*) stage_full_one "${stage#full-}" ;;
        own) stage_own ;;
        probe) stage_probe ;;
        *) say "unknown stage $stage (--help lists them)"; false ;;
    esac
    rc=$?
    [ $rc = 0 ] || failed=1
    outcome="FAILED ($rc)"
    [ $rc = 0 ] && outcome=ok
    [ $rc = 125 ] && outcome="NOT RUN (the budget was spent)"
    [ $rc = 126 ] && outcome="NOT STARTED (its data did not arrive)"
    summary+=("$(printf '%-22s %-11s %5d s' "$stage" "$outcome" $((SECONDS - began)))")
done
say "summary (stage, outcome, seconds):"
[ ${#summary[@]} -gt 0 ] && printf '   %s\n' "${summary[@]}" | tee -ia "$LOG"
# Each results file written, and whether goodbench validate accepts it here (a run cut at its
# limit writes the runs it finished: settings.interrupted): one validate of them all.
files=("$OUT"/*.json)
if [ -e "${files[0]}" ]; then
    say "files written to $OUT, and what goodbench validate says of each here:"
    results=()
    for f in "${files[@]}"; do grep -q '"schema_version"' "$f" 2>/dev/null && results+=("$f"); done
    verdicts=""
    [ ${#results[@]} -gt 0 ] && verdicts="$(timeout -k 5 "$((CLOSING - 5))" "$PYTHON" -c "$GOODBENCH_MAIN" validate "${results[@]}" 2>&1)"
    for f in "${files[@]}"; do
        if [ ! -s "$f" ]; then verdict="EMPTY (a name reserved by a run that wrote nothing)"
        elif ! contains "$f" "${results[@]+"${results[@]}"}"; then verdict="a measurement's own JSON"
        elif grep -qxF "$f: ok" <<<"$verdicts"; then verdict="valid"
        else
            codes=$(grep -F "$f: " <<<"$verdicts" | grep -o '\[[a-z0-9-]*\]$' | sort -u | tr -d '[]' | paste -sd, -)
            verdict="NOT VALID HERE: ${codes:-validate did not answer}"
            [ "$codes" = schema-unchecked ] && verdict="valid but for its JSON Schema, not checked here (no jsonschema: carry .whl/)"
        fi
        printf '   %-48s %s\n' "$(basename "$f")" "$verdict" | tee -ia "$LOG"
    done
    if [ ${#results[@]} -gt 0 ]; then
        say "each physical bound's slack on those files (the factor an edit would need; benchmarks/physics_slack.py):"
        timeout -k 5 30 "$PYTHON" benchmarks/physics_slack.py "${results[@]}" --json "$OUT/physics-slack.json" 2>&1 \
            | sed 's/^/   /' | tee -ia "$LOG"
    fi
else
    say "no files written to $OUT"
fi
if [ -n "$STOPPED" ]; then
    say "stopped by SIG$STOPPED"
    exit $([ "$STOPPED" = INT ] && echo 130 || echo 143)
fi
if [ "$REHEARSAL" = 1 ]; then
    say "rehearsal done: $([ $failed = 0 ] && echo 'every stage ran as it should on a CPU' || echo 'a stage failed: see above'); files in $OUT"
else
    say "done: $([ $failed = 0 ] && echo 'every stage exited 0' || echo 'a stage failed: see above')"
fi
exit $failed
