#!/usr/bin/env bash
# The compile figures of docs/performance.md: a fresh clone of this checkout and a fresh venv,
# then each row in turn (CPU seconds of the command: user + sys from /usr/bin/time; first steps
# from getrusage in the process). Takes about 10 minutes on 2 vCPUs.
#     bash tests/replay/compile_figures.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/repo" && cd "$work/repo" || exit 1
python3 -m venv .venv && .venv/bin/pip install -q -e . >/dev/null 2>&1 || { echo "pip install failed"; exit 1; }
. .venv/bin/activate
timed() {  # timed LABEL COMMAND...: the command's last line and its CPU seconds and wall time
    local label=$1; shift
    /usr/bin/time -f "%U %S %e" -o "$work/time" "$@" >"$work/out" 2>&1
    printf '%s: %s\n    ' "$label" "$(tail -1 "$work/out")"
    awk '{printf "%.1f CPU-s, %.1f s wall, wall/CPU %.2f\n", $1 + $2, $3, $3 / ($1 + $2)}' "$work/time"
}
first_step() {  # first_step OPTIONS [ENV=VALUE...]: CPU seconds at the default env's first step
    local options=$1; shift
    env NUMBA_CACHE_DIR="$(mktemp -d -p "$work")" "$@" python -c "
import resource, numpy as np, gymnasium as gym, crowdsteer.envs
e = gym.make('crowdsteer/CrowdNav-v0', $options); e.reset(seed=0); e.step(np.zeros(2, np.float32))
u = resource.getrusage(resource.RUSAGE_SELF); print(round(u.ru_utime + u.ru_stime, 2), end=' ')" \
        2>"$work/err"
    echo "(compile notices: $(grep -c 'is compiling' "$work/err"))"
}
fresh() { echo "NUMBA_CACHE_DIR=$(mktemp -d -p "$work") CROWDSTEER_PRECOMPILED_DIR=$(mktemp -d -p "$work")"; }
timed "crowdsteer compile, fresh clone" crowdsteer compile
timed "again" crowdsteer compile
for i in 1 2 3; do echo -n "first step after it: "; first_step ""; done
for i in 1 2; do timed "from nothing" env $(fresh) crowdsteer compile; done
for i in 1 2 3; do echo -n "first step without it: "; first_step "" CROWDSTEER_PRECOMPILED_DIR="$work/none"; done
timed "crowdsteer compile --all after it" crowdsteer compile --all
timed "crowdsteer compile --all from nothing" env $(fresh) crowdsteer compile --all
echo "# a comment" >> envs/steering/orca.py
echo -n "after an edit of orca.py, the default env's first step: "; first_step ""
echo -n "the same edit, an ORCA crowd's first step: "; first_step "pedestrian_behaviour='orca'"
timed "the same edit, crowdsteer compile" crowdsteer compile
timed "the same edit, crowdsteer compile --all" crowdsteer compile --all
