#!/usr/bin/env bash
# The GPU check of the vLLM sampler (docs/gpu.md), run ON the GPU machine from the repo root.
#
#   bash benchmarks/gpu_vllm.sh keep     # a call that only brings one staged part
#   bash benchmarks/gpu_vllm.sh [PHASES] # the last call: unpack, install, then PHASES
#                                        # (default: tests throughput train)
#
# Parts come from benchmarks/gpu_vllm_stage.sh (.gpu-carry/part-NN, one per call, each
# copied to /root/gpu-carry, which lives as long as the machine stays warm). The last
# call checks every part against SHA256SUMS, installs the wheels into /tmp/site (the
# image's own packages stay; nothing is fetched), then runs:
#
#   tests       tests/policy/test_vllm_sampler.py and test_vllm_io.py (on the GPU)
#   throughput  benchmarks/gpu_vllm.py --phase throughput (tokens/s both samplers,
#               log-prob mismatch)
#   train       benchmarks/gpu_vllm.py --phase train (STEPS RL steps, default 30)
#
# Figures go to $OUT/gpu_vllm.json, logs to $OUT/*.log (the device tool brings $OUT back).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-vllm-out}
STASH=/root/gpu-carry
mkdir -p "$OUT" "$STASH"
export PYTHONUNBUFFERED=1

for part in .gpu-carry/part-*; do
  [ -f "$part" ] && cp "$part" "$STASH/" && echo "stashed $part"
done
[ -f .gpu-carry/SHA256SUMS ] && cp .gpu-carry/SHA256SUMS "$STASH/"
ls -l "$STASH"
if [ "${1:-}" = keep ]; then
  exit 0
fi

phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(tests throughput train)

if [ ! -d /tmp/site/vllm ]; then
  (cd "$STASH" && sha256sum -c SHA256SUMS) || { echo "a staged part is missing or damaged"; exit 3; }
  rm -rf /tmp/carry && mkdir -p /tmp/carry
  cat "$STASH"/part-* | tar -C /tmp/carry -xf - || exit 3
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site /tmp/carry/wheels/*.whl || exit 3
fi
export PYTHONPATH=$PWD/src:/tmp/site
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch, transformers, vllm; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'vllm', vllm.__version__)"
} 2>&1 | tee "$OUT/env.log"

status=0
for phase in "${phases[@]}"; do
  echo "== $phase"
  case $phase in
    tests)
      python3 -m pytest tests/policy/test_vllm_sampler.py tests/policy/test_vllm_io.py \
        -p no:cacheprovider -q -rs 2>&1 | tee "$OUT/tests.log" || status=1 ;;
    throughput)
      python3 benchmarks/gpu_vllm.py --phase throughput --out "$OUT/gpu_vllm.json" 2>&1 \
        | tee "$OUT/throughput.log" || status=1 ;;
    train)
      python3 benchmarks/gpu_vllm.py --phase train --steps "${STEPS:-30}" --runs /tmp/runs \
        --out "$OUT/gpu_vllm.json" 2>&1 | tee "$OUT/train.log" || status=1 ;;
    *) echo "unknown phase $phase (tests, throughput, train)"; status=2 ;;
  esac
done
exit $status
