# tests/gpu/real_preflight.py — the Python side of the real check's
# preflight (tests/gpu/run_real_check.sh), run by the Python the check
# uses.  Prints "preflight: ..." lines:
#   python   its path and version
#   torch    its version, the CUDA it was built for, and whether a GPU is
#            usable (import failures said in words)
#   CUPTI    the libcupti.so.13 the injection would load in a torch
#            process (lib/cupti/cupti_api.c's order: $TREC_CUPTI_LIB, the
#            loader's path, $CUDA_HOME/lib64, /usr/local/cuda, the pip
#            wheels' nvidia/*/lib beside torch) and cuptiGetVersion's answer
# Exit 0 when a GPU is usable through torch, 77 when not.
import ctypes
import glob
import os
import sys

print("preflight: python: %s %s" % (sys.executable, sys.version.split()[0]))
gpu = False
torch_dir = None
try:
    import torch

    torch_dir = os.path.dirname(torch.__file__)
    gpu = bool(torch.cuda.is_available())
    print("preflight: torch: %s (CUDA %s), GPU usable: %s" %
          (torch.__version__, torch.version.cuda, "yes" if gpu else "no"))
except Exception as e:  # no torch: a stub or a plain Python
    print("preflight: torch: not importable (%s)" % str(e).splitlines()[0][:100])

SONAME = "libcupti.so.13"
cands = []
env = os.environ.get("TREC_CUPTI_LIB")
if env:
    cands.append(env)
cands.append(SONAME)
if os.environ.get("CUDA_HOME"):
    cands.append(os.path.join(os.environ["CUDA_HOME"], "lib64", SONAME))
cands += ["/usr/local/cuda/lib64/" + SONAME, "/usr/local/cuda/extras/CUPTI/lib64/" + SONAME]
if torch_dir:
    site = os.path.dirname(torch_dir)
    for sub in ("cuda_cupti/lib", "cu13/lib"):
        cands += glob.glob(os.path.join(site, "nvidia", sub, SONAME))

found = None
for c in cands:
    try:
        lib = ctypes.CDLL(c)
    except OSError:
        continue
    v = ctypes.c_uint32(0)
    try:
        r = lib.cuptiGetVersion(ctypes.byref(v))
    except AttributeError:
        r = -1
    found = "%s (cuptiGetVersion %s)" % (c, v.value if r == 0 else "failed")
    break
print("preflight: CUPTI: %s" % (found or "%s not found (looked in: %s)" % (SONAME, ", ".join(cands))))
sys.exit(0 if gpu else 77)
