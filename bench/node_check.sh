#!/usr/bin/env bash
# The many-core node check: a model, Jacobi and Gaussian elimination measured
# in the same minutes on one node, then fitted and predicted there, with the
# collective laws fitted from p <= 8 checked at p = 12 and 16.  Every figure
# comes from commchar's own commands and bench scripts; this script only runs
# them in order and gathers what they print.
#
#   bash bench/node_check.sh prepare          # here: .dev/ gets MPICH's wheel and the simulator
#   bash bench/node_check.sh run [--out DIR]  # on the node (../shared/node16.md), ~7 minutes at 16 cores
#   bash bench/node_check.sh run --small --no-wheel --out /tmp/nc   # the same steps at p <= 3, ~2 minutes
#   bash bench/node_check.sh run --here --no-wheel --out /tmp/nc    # a 2-core machine: p <= 2, both libraries
#
# `prepare` needs the package registries and cargo; `run` needs Python 3.11+
# with numpy, scipy and rich, a C compiler, and either the wheel in .dev/ or
# an MPICH on PATH (--no-wheel).  The simulator is .dev/commchar-sim, else
# the newest build under sim/target (as commchar finds it).  What comes back
# lies in --out (default $OUT when set, else out/node-check): log.txt,
# model.json, predictions.txt, app_accuracy.txt, laws.txt and store.db.gz (the
# store with its samples emptied, and its traces dropped if it would still
# exceed 15 MB; app predict has already run on them).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEV=$ROOT/.dev
MPICH_VERSION=${MPICH_VERSION:-5.0.2}

usage() {
    sed -n '8,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

die() {
    echo "node_check: $*" >&2
    exit 1
}

prepare() {
    mkdir -p "$DEV"
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 -d "$DEV" "mpich==$MPICH_VERSION"
    (cd "$ROOT/sim" && cargo build --release --quiet)
    cp "$ROOT/sim/target/release/commchar-sim" "$DEV/"
    ls -l "$DEV"
}

# the wheel's MPICH on PATH: its mpicc, mpiexec and libraries are relocatable
use_wheel() {
    local wheel prefix
    wheel=$(ls "$DEV"/mpich-"$MPICH_VERSION"-*.whl 2>/dev/null | head -n 1)
    [ -n "$wheel" ] || die "no MPICH wheel in $DEV (run: bash bench/node_check.sh prepare, or pass --no-wheel)"
    prefix=$(mktemp -d /tmp/node-check-mpich.XXXXXX)
    python3 -m zipfile -e "$wheel" "$prefix"
    local m=$prefix/mpich-$MPICH_VERSION.data/data
    chmod +x "$m"/bin/*
    export PATH=$m/bin:$PATH LD_LIBRARY_PATH=$m/lib:$m/lib/mpich${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# `commchar` from this checkout when no installed one is found
use_checkout() {
    if ! command -v commchar >/dev/null 2>&1; then
        local bin
        bin=$(mktemp -d /tmp/node-check-bin.XXXXXX)
        printf '#!/bin/sh\nexec python3 -m commchar "$@"\n' >"$bin/commchar"
        chmod +x "$bin/commchar"
        export PATH=$bin:$PATH PYTHONPATH=$ROOT/src${PYTHONPATH:+:$PYTHONPATH}
    fi
    # the prepared simulator; else commchar finds the newest build under sim/target itself
    if [ -z "${COMMCHAR_SIM:-}" ] && [ -f "$DEV/commchar-sim" ]; then
        chmod +x "$DEV/commchar-sim"
        export COMMCHAR_SIM=$DEV/commchar-sim
    fi
}

# one step: its command, its wall time and its output, into the log and into FILE
# ("-": the log only); a step that fails is counted and the rest still run
step() {
    local file=$1 t0=$SECONDS rc
    shift
    echo "== $*" | tee -a "$OUTDIR/log.txt"
    set +e
    if [ "$file" = - ]; then
        "$@" 2>&1 | tee -a "$OUTDIR/log.txt"
    else
        "$@" 2>&1 | tee "$OUTDIR/$file" | tee -a "$OUTDIR/log.txt"
    fi
    rc=${PIPESTATUS[0]}
    set -e
    echo "== ${SECONDS}s in all, $((SECONDS - t0))s this step, exit $rc" | tee -a "$OUTDIR/log.txt"
    [ "$rc" = 0 ] || FAILED=$((FAILED + 1))
    return 0
}

# the store with its samples emptied (and its traces dropped when still too large), gzipped
pack_store() {
    python3 - "$DB" "$OUTDIR/store.db.gz" <<'EOF'
import gzip, os, shutil, sqlite3, sys, tempfile
src, dst = sys.argv[1], sys.argv[2]
limit = 15 * 1024 * 1024
with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "store.db")
    with sqlite3.connect(src) as a, sqlite3.connect(copy) as b:
        a.backup(b)
    def shrink(tables):
        con = sqlite3.connect(copy)
        have = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
        for t in tables:
            if t in have:
                con.execute(f"delete from {t}")
        con.commit()
        con.execute("vacuum")
        con.close()
    def pack():
        with open(copy, "rb") as f, gzip.open(dst, "wb", compresslevel=6) as g:
            shutil.copyfileobj(f, g)
        return os.path.getsize(dst)
    shrink(["samples"])
    size = pack()
    if size > limit:
        shrink(["traces", "trace_ranks", "trace_phases"])
        size = pack()
        print(f"store: traces dropped to fit, {size / 1e6:.1f} MB")
    else:
        print(f"store: {size / 1e6:.1f} MB with its traces")
EOF
}

run() {
    local small=0 here=0 wheel=1
    OUTDIR=${OUT:-$ROOT/out/node-check}
    while [ $# -gt 0 ]; do
        case $1 in
            --small) small=1 ;;
            --here) here=1 ;;
            --no-wheel) wheel=0 ;;
            --out) [ $# -ge 2 ] || die "--out needs a folder"; OUTDIR=$2; shift ;;
            *) die "unknown option $1 (options: --small, --here, --no-wheel, --out DIR)" ;;
        esac
        shift
    done
    [ "$small" = 1 ] && [ "$here" = 1 ] && die "--small and --here are two different runs: give one"
    [ -L "$OUTDIR" ] && die "$OUTDIR is a symbolic link; give a folder of its own"
    mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"
    [ -d "$OUTDIR" ] || die "$OUTDIR is not a folder"
    : >"$OUTDIR/log.txt"
    DB=$(mktemp -d /tmp/node-check-db.XXXXXX)/node.db
    [ "$wheel" = 1 ] && use_wheel
    use_checkout
    cd "$ROOT"
    export COLUMNS=${COLUMNS:-160} # the prediction tables are wide

    local nproc_ coll_np app_np gauss_np sizes gauss_sizes p2 touch max big from_p lib=mpich laws=1
    nproc_=$(nproc)
    if [ "$small" = 1 ]; then
        coll_np=2,3; app_np=1,2,3; gauss_np=2,3; sizes=64,128; p2=0:64K; touch=64K:256K:x4; max=0:64K; big=""; from_p=2
    elif [ "$here" = 1 ]; then
        # both of this machine's libraries at p <= 2, Jacobi from communication-bound (N = 128)
        # to computation-bound (N = 2048); no laws in p from one p
        coll_np=2; app_np=1,2; gauss_np=2; sizes=128,512,2048; gauss_sizes=256,1024; p2=0:4M; touch=64K:64M:x4
        max=0:1M; big=""; from_p=1; lib=mpich,openmpi; laws=0
    else
        coll_np=2,3,4,6,8,12,16; app_np=1,4,8,12,16; gauss_np=4,8,12,16; sizes=768,1536,3072; p2=0:4M; touch=64K:64M:x4; max=0:1M
        big=4M:128M; from_p=4
    fi
    gauss_sizes=${gauss_sizes:-${sizes%,*}}
    echo "node_check: $nproc_ cores, $(command -v mpiexec), store $DB, results in $OUTDIR" | tee -a "$OUTDIR/log.txt"

    FAILED=0
    step - commchar build
    [ "$FAILED" = 0 ] || die "commchar build failed (log: $OUTDIR/log.txt)"
    step - commchar run --db "$DB" --library "$lib" --np 2 --max-time 0.2 --sizes "$p2" \
        --ops pingpong,loggp,rndv,bw,bibw,coldstart,exchange
    step - commchar run --db "$DB" --library "$lib" --np 2 --ops touch --sizes "$touch" --max-time 0.2 --no-refine
    step - commchar run --db "$DB" --library "$lib" --np "$coll_np" --max-time 0.2 --sizes "$max" \
        --ops noise,collstart,mbw,barrier,bcast,scatter,gather,allgather,alltoall,reduce,allreduce,reduce_scatter
    if [ -n "$big" ]; then
        step - commchar run --db "$DB" --library mpich --np 4,8,12,16 --ops scatter,bcast --sizes "$big" --max-time 0.2
    fi
    step - commchar app jacobi --db "$DB" --library "$lib" --np "$app_np" --sizes "$sizes"
    step - commchar app gauss --db "$DB" --library "$lib" --np "$gauss_np" --sizes "$gauss_sizes"
    step - commchar fit --db "$DB" -o "$OUTDIR/model.json"
    step predictions.txt commchar app predict --db "$DB" --model "$OUTDIR/model.json"
    step app_accuracy.txt python3 bench/app_accuracy.py --db "$DB" --model model.json --from-p "$from_p"
    if [ "$laws" = 0 ]; then
        echo "== laws in p: skipped, one p" | tee -a "$OUTDIR/log.txt"
    elif [ "$small" = 1 ] && [ "$nproc_" -lt 3 ]; then
        echo "== laws in p: skipped, p = 3 is oversubscribed on $nproc_ cores" | tee -a "$OUTDIR/log.txt"
    elif [ "$small" = 1 ]; then
        step laws.txt python3 bench/laws_extrapolation.py --db "$DB" --fit-np 2 --predict-np 3
    else
        step laws.txt python3 bench/laws_extrapolation.py --db "$DB" --fit-np 2:8 --predict-np 12,16
    fi
    step - pack_store
    echo "node_check: done in ${SECONDS}s, $FAILED step(s) failed; $(ls "$OUTDIR" | tr '\n' ' ')" | tee -a "$OUTDIR/log.txt"
    [ "$FAILED" = 0 ]
}

case ${1:-} in
    prepare) shift; [ $# -eq 0 ] || usage; prepare ;;
    run) shift; run "$@" ;;
    *) usage ;;
esac
