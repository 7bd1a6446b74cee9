#!/usr/bin/env bash
# Builds the simulator twice over:
#   sim/target/release/commchar-sim  a plain release build (cargo test and clippy use it);
#   sim/target/pgo/commchar-sim      the same code optimized from a profile of its own runs
#                                    (profile-guided optimization, as rustc and CPython ship),
#                                    11-13% fewer instructions; what commchar runs when it is the newer.
# The profile comes from the workloads below, chosen to cross every hot path: each collective
# algorithm, the large runs of bench/sim_bench.py scaled down, both congestion models, an
# application, a GOAL file, a timeline and a trace replay (written by the project's Python). Results do not depend on the build (same code, same
# integer arithmetic); tests/test_sim_build.py checks that both binaries print the same.
# The optimized build needs llvm-profdata, from rustup's llvm-tools component; without it the
# plain build is all there is. COMMCHAR_SIM_PGO=0 skips it. A stamp of the sources and the
# compiler skips it when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
PYTHON=${PYTHON:-.venv/bin/python}
MANIFEST=sim/Cargo.toml
OUT=sim/target/pgo

"$CARGO" build --release --quiet --manifest-path "$MANIFEST"
[ "${COMMCHAR_SIM_PGO:-1}" = 0 ] && exit 0

stamp=$( { rustc -vV; cat "$0" sim/Cargo.toml sim/Cargo.lock; find sim/src -type f -name '*.rs' | sort | xargs cat; } \
         | sha256sum | cut -d' ' -f1)
if [ -x "$OUT/commchar-sim" ] && [ "$(cat "$OUT/stamp" 2>/dev/null)" = "$stamp" ]; then
    # built from these very sources: made the newer again, as commchar runs the newer build
    # (a plain build redone since, of the same sources, would shadow it otherwise)
    touch "$OUT/commchar-sim"
    exit 0
fi

find_profdata() {
    find "$(rustc --print sysroot)" -name llvm-profdata -type f 2>/dev/null | head -1
}
profdata=$(find_profdata)
if [ -z "$profdata" ] && command -v rustup >/dev/null; then
    rustup component add llvm-tools >/dev/null 2>&1 || true
    profdata=$(find_profdata)
fi
if [ -z "$profdata" ]; then
    echo "build-sim: no llvm-profdata (rustup component add llvm-tools): commchar runs the plain build" >&2
    rm -f "$OUT/commchar-sim"
    exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RUSTFLAGS="-Cprofile-generate=$work/raw" \
    "$CARGO" build --release --quiet --manifest-path "$MANIFEST" --target-dir sim/target/pgo-generate
sim=sim/target/pgo-generate/release/commchar-sim
mib=1048576
for alg in $("$sim" --list); do
    "$sim" --collective "$alg" --p 64 --n 4096 >/dev/null
done
"$sim" --collective allreduce:rabenseifner --p 65536 --n $mib >/dev/null
"$sim" --collective allreduce:rabenseifner --p 16384 --n $mib --rendezvous match >/dev/null
"$sim" --collective allreduce:ring --p 256 --n $mib >/dev/null
"$sim" --collective bcast:binomial --p 65536 --n 1024 >/dev/null
for model in on flow; do
    "$sim" --collective allreduce:rabenseifner --p 16384 --n $mib --topology torus:128x128 \
        --congestion $model --hop 50 >/dev/null
done
"$sim" --collective alltoall:pairwise --p 512 --n 4096 --topology torus:16x32 --congestion on --hop 50 >/dev/null
"$sim" --app jacobi --p 64 --unknowns 4096 --iterations 20 >/dev/null
"$sim" --collective allreduce:rabenseifner --p 4096 --n $mib --emit-goal "$work/schedule.goal" >/dev/null
"$sim" --goal "$work/schedule.goal" --json >/dev/null
"$sim" --collective allgather:ring --p 16 --n 4096 --trace "$work/timeline.json" >/dev/null
# a replay of a traced program, synthetic (commchar.trace.synthetic) as bench/replay_bench.py's:
# trained on collectives alone, the optimized build replayed with 11% more instructions than the plain one
if "$PYTHON" -c 'import commchar.trace.synthetic' 2>/dev/null; then
    "$PYTHON" - "$work" <<'TRACE'
import sys
from pathlib import Path
from commchar.trace.synthetic import exchange_program, write_allreduce_costs
work = Path(sys.argv[1])
exchange_program(work / "trace", p=8, iterations=25_000, allreduce_every=100)
write_allreduce_costs(work / "costs.json", 8)
TRACE
    "$sim" --replay "$work/trace" --unit us --S 65535 >/dev/null
    "$sim" --replay "$work/trace" --unit us --S 65535 --collectives charged --replay-costs "$work/costs.json" >/dev/null
else
    echo "build-sim: $PYTHON cannot import commchar (make python): the profile has no replay" >&2
fi

"$profdata" merge -o "$work/merged.profdata" "$work/raw"
RUSTFLAGS="-Cprofile-use=$work/merged.profdata" \
    "$CARGO" build --release --quiet --manifest-path "$MANIFEST" --target-dir sim/target/pgo-use
mkdir -p "$OUT"
cp sim/target/pgo-use/release/commchar-sim "$OUT/commchar-sim.new"
mv "$OUT/commchar-sim.new" "$OUT/commchar-sim"
echo "$stamp" >"$OUT/stamp"
