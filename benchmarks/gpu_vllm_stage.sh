#!/usr/bin/env bash
# Stage what benchmarks/gpu_vllm.sh needs on the GPU machine, HERE (where PyPI is reachable).
#
# The `device` machine (docs/gpu.md) reaches no network: its image has CUDA torch 2.11.0,
# transformers, peft and numpy, but not vLLM, tracerl's own dependencies or the SmolLM2
# weights. Everything missing travels as wheels in the working tree, and a call carries at
# most 64 MiB, so this script downloads them (cp312, manylinux x86-64), packs them into one
# tar and splits it into 56 MiB parts (a call carries the working tree too):
#
#   .gpu-carry/part-00 .. part-NN   carried one per device call, in order
#   .gpu-carry/SHA256SUMS           carried with every part (checked before unpacking)
#
# vllm==0.24.0 is the last release pinned to torch 2.11.0 (the image's); its wheel alone is
# 279 MB. The wheel list (benchmarks/gpu_vllm_wheels.txt) is what `import vllm`, its V1
# engine and tracerl import at start-up that the image lacks, found by importing them with
# nothing else installed; vLLM's optional kernels (flashinfer, tilelang, cutlass-dsl, ...)
# stay behind: for a Llama model on Hopper vLLM uses its own FlashAttention 3.
#
#   bash benchmarks/gpu_vllm_stage.sh          # then the device calls docs/gpu.md lists
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}  # any Python with pip; the wheels are for the GPU machine's 3.12
D=.gpu-carry
rm -rf "$D"
mkdir -p "$D/wheels"
mapfile -t WHEELS < <(grep -v '^\s*#' benchmarks/gpu_vllm_wheels.txt | grep -v '^\s*$')
PLATFORMS=()
for n in 39 35 34 31 28 27 24 17; do PLATFORMS+=(--platform "manylinux_2_${n}_x86_64"); done
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp "${PLATFORMS[@]}" --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 -d "$D/wheels" "${WHEELS[@]}"
tar -C "$D" -cf "$D/carry.tar" wheels
split -b 56M -d "$D/carry.tar" "$D/part-"
rm -rf "$D/carry.tar" "$D/wheels"
(cd "$D" && sha256sum part-* > SHA256SUMS)
n=$(ls "$D"/part-* | wc -l)
echo "staged $(du -sh "$D" | cut -f1) in $n parts under $D:"
ls -l "$D"
echo
echo "device calls, back to back (a machine stays warm 30 s after each):"
for p in "$D"/part-*; do
  last=$([ "$p" = "$(ls "$D"/part-* | tail -1)" ] && echo yes || echo no)
  if [ "$last" = yes ]; then
    echo "  run carry=[\"$p\", \"$D/SHA256SUMS\"] command=\"bash benchmarks/gpu_vllm.sh\""
  else
    echo "  run carry=[\"$p\", \"$D/SHA256SUMS\"] command=\"bash benchmarks/gpu_vllm.sh keep\""
  fi
done
