# Sourced by the e2e tests that run a Python program under the real trec
# over the fake CUPTI (tests/gpu/fake_native_launch.c, loaded with
# ctypes): sets so (the injection), fake (the library the program
# loads), py and tmp (removed at exit); exits 77 where that cannot run.
set -u
so="$BUILD/libtrec-cupti.so"
fake="$BUILD/tests/libfake-native-launch.so"
[ -f "$so" ] || { echo "libtrec-cupti.so not built (no CUDA headers)"; exit 77; }
[ -f "$fake" ] || { echo "FAIL: $fake not built"; exit 1; }
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: python cannot load an ASan-built library"; exit 77; }
py=$(command -v python3) || { echo "no python3"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
