# Sourced by the run and test scripts: makes nvcc 13.0 from PyPI available as $NVCC when the
# build needs it: when the kernel sources differ from cuda/prebuilt's, or other architectures
# are asked for (PROVETOP_CUDA_ARCHS), or PROVETOP_NEED_NVCC is set. The pins keep ptxas and
# nvvm on the same PTX version. Without Python or a network the build goes on without kernels
# (the cpu backend still works).
needs_nvcc=1
if [ -z "${PROVETOP_CUDA_ARCHS:-}${PROVETOP_NEED_NVCC:-}" ] &&
  "$(dirname "${BASH_SOURCE[0]}")/kernel-digest.sh" --current; then
  needs_nvcc=
fi
if [ -z "${NVCC:-}" ] && [ -n "$needs_nvcc" ]; then
  nvcc_dir=$(python3 - 2>/dev/null <<'PY'
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
if spec and spec.submodule_search_locations:
    for p in spec.submodule_search_locations:
        if os.path.exists(os.path.join(p, "cu13", "bin", "nvcc")):
            print(os.path.join(p, "cu13", "bin"))
            break
PY
  ) || true
  if [ -z "$nvcc_dir" ] && command -v python3 >/dev/null; then
    echo "== installing nvcc 13.0 from PyPI (once)" >&2
    python3 -m pip install --quiet --disable-pip-version-check \
      'nvidia-cuda-nvcc==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*' \
      'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-cccl==13.0.*' >&2 || echo "nvcc install failed; building without CUDA kernels" >&2
    nvcc_dir=$(python3 -c 'import nvidia, os; print([os.path.join(p, "cu13", "bin") for p in nvidia.__path__][0])' 2>/dev/null) || true
  fi
  if [ -n "$nvcc_dir" ] && [ -x "$nvcc_dir/nvcc" ]; then
    export NVCC="$nvcc_dir/nvcc"
  fi
fi
