#!/usr/bin/env bash
# kvref's GPU check, one script, under 5 minutes on one GPU (docs/performance.md quotes its output):
#   1. the CUDA and Triton tests (pytest -m cuda tests/kvref);
#   2. benchmarks/zeroing.py on CUDA at 8 GiB (target: >= 70% of a contiguous zero_() at 1/10/50% of blocks);
#   3. a grid-limit case: one Triton launch would need more than 65,535 programs in grid y.
# Without a CUDA device it says so, runs step 1 to show the tests skip cleanly, and skips 2 and 3.
# Exit status: 0 when every step that ran passed, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
LOG=$(mktemp -d)
declare -a SUMMARY=()
FAILED=0

step() {  # step NAME LIMIT_S CMD...: run, keep its output, record PASS/FAIL and seconds
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  echo "== $name"
  timeout "$limit" "$@" 2>&1 | tee "$LOG/$name.log"
  local rc=${PIPESTATUS[0]}
  local verdict=PASS
  if [ "$rc" = 124 ]; then verdict="FAIL (over ${limit}s)"; elif [ "$rc" = 77 ]; then verdict="SKIP (see its log)"
  elif [ "$rc" != 0 ]; then verdict="FAIL (exit $rc)"; fi
  case $verdict in FAIL*) FAILED=1 ;; esac
  SUMMARY+=("$(printf '%-12s %-22s %4ss' "$name" "$verdict" $((SECONDS - t0)))")
}

"$PY" - <<'PY' | tee "$LOG/env"
import torch
try:
    import triton
    tv = triton.__version__
except Exception as e:  # triton absent or broken: the Triton tests skip
    tv = f"not importable ({type(e).__name__})"
cuda = torch.cuda.is_available()
name = torch.cuda.get_device_name(0) if cuda else "none"
print(f"torch {torch.__version__}; triton {tv}; CUDA devices: {torch.cuda.device_count() if cuda else 0} ({name})")
print("CUDA=" + ("yes" if cuda else "no"))
PY
HAVE_CUDA=$(grep -q '^CUDA=yes' "$LOG/env" && echo yes || echo no)

step tests 150 "$PY" -m pytest -m cuda -rs tests/kvref
if [ "$HAVE_CUDA" = yes ]; then
  step zeroing 120 "$PY" benchmarks/zeroing.py --device cuda --mib 8192 --reps 20
  step grid-limit 60 "$PY" - <<'PY'
import torch
from kvref import KVBlockZeroer, KVLayer
from kvref.zeroer import plan_launches
try:
    from kvref import triton_zero
except ImportError as e:
    print(f"triton not importable ({e}): the grid-limit case needs the Triton path")
    raise SystemExit(77)

words = 68 * 2**20  # a 272 MiB page: 69,632 chunks of 1024 words, past grid y's 65,535
t = torch.ones(3, words, dtype=torch.int32, device="cuda")
z = KVBlockZeroer([KVLayer(t, block_dim=0)], use_triton=True)
launches = plan_launches(1, words, triton_zero.CHUNK)
z.zero([1])
torch.cuda.synchronize()
ok = bool((t[1] == 0).all()) and bool((t[0] == 1).all()) and bool((t[2] == 1).all())
print(f"page {words * 4 / 2**20:.0f} MiB, {len(launches)} launches {[tuple(x) for x in launches]}: "
      f"block 1 zero and blocks 0, 2 untouched: {ok}")
raise SystemExit(0 if ok else 1)
PY
else
  SUMMARY+=("$(printf '%-12s %-22s' zeroing 'SKIP (no CUDA device)')")
  SUMMARY+=("$(printf '%-12s %-22s' grid-limit 'SKIP (no CUDA device)')")
fi

echo "== summary"
head -1 "$LOG/env"
printf '%s\n' "${SUMMARY[@]}"
grep -E "(passed|skipped|failed).* in [0-9.]+s" "$LOG/tests.log" | tail -1
if [ -f "$LOG/zeroing.log" ]; then
  grep -E '^ +[0-9]+%' "$LOG/zeroing.log" | awk '{r=$NF; sub("%","",r); print "zeroing " $1 " of blocks: " $NF " of a contiguous zero_() (target 70%): " (r+0 >= 70 ? "met" : "NOT met")}'
fi
[ "$HAVE_CUDA" = yes ] || echo "no CUDA device here: nothing was measured on a GPU"
exit $FAILED
