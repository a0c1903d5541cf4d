# tests/gpu/pystack_wild.py — run by tests/unit/cupti/test_gpu_pystack.c
# under every installed CPython: the injection's launch-site capture
# (trec_cupti_test_capture_stack, through ctypes, GIL released) where
# process_vm_readv is refused, as under gVisor: a seccomp filter makes it
# answer EPERM in this process.  First from a function whose code
# object's co_filename points nowhere for the length of the call (the
# walker must refuse it without a fault: the call is recorded flagged
# UNREADABLE, and counted in a LOSS), then from a sound one (the walker
# still reads this thread's stack).  Usage: python pystack_wild.py LIB OUT
# (OUT: the wild capture's trace; OUT.good: the sound one's).  Exit 0
# when both behaved, 77 where the filter cannot be installed.
import ctypes
import errno
import platform
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.trec_cupti_test_capture_stack.argtypes = [ctypes.c_char_p]
libc = ctypes.CDLL(None, use_errno=True)
WILD = 0x7FF0DEADBEE0   # no mapping there in a 47-bit address space


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def refuse_process_vm_readv():
    """seccomp: process_vm_readv (x86_64: 310) answers EPERM, on this thread."""
    if platform.machine() != "x86_64":
        sys.exit(77)
    ld_abs, jeq, ret = 0x20, 0x15, 0x06
    prog = (SockFilter * 6)(
        SockFilter(ld_abs, 0, 0, 4),              # seccomp_data.arch
        SockFilter(jeq, 0, 3, 0xC000003E),        # AUDIT_ARCH_X86_64, else allow
        SockFilter(ld_abs, 0, 0, 0),              # seccomp_data.nr
        SockFilter(jeq, 0, 1, 310),
        SockFilter(ret, 0, 0, 0x00050000 | errno.EPERM),   # SECCOMP_RET_ERRNO
        SockFilter(ret, 0, 0, 0x7FFF0000),        # SECCOMP_RET_ALLOW
    )
    fprog = SockFprog(len(prog), prog)
    ul = ctypes.c_ulong
    if libc.prctl(38, ul(1), ul(0), ul(0), ul(0)) != 0:   # PR_SET_NO_NEW_PRIVS
        sys.exit(77)
    if libc.prctl(22, ul(2), ctypes.byref(fprog), ul(0), ul(0)) != 0:   # SECCOMP_MODE_FILTER
        sys.exit(77)
    # it is refused now
    buf = ctypes.create_string_buffer(8)
    iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
    libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ul, ctypes.c_void_p, ul, ul]
    if libc.process_vm_readv(libc.getpid(), iov, 1, iov, 1, 0) != -1 or \
            ctypes.get_errno() != errno.EPERM:
        sys.exit(3)


def wild_site(path):
    """Captures with this function's co_filename pointing nowhere."""
    code = wild_site.__code__
    base, want = id(code), id(code.co_filename)
    slot = next(base + 8 * k for k in range(2, 64)
                if ctypes.c_void_p.from_address(base + 8 * k).value == want)
    ctypes.c_void_p.from_address(slot).value = WILD
    try:
        return lib.trec_cupti_test_capture_stack(path.encode())
    finally:
        ctypes.c_void_p.from_address(slot).value = want


def good_site(path):
    return lib.trec_cupti_test_capture_stack(path.encode())  # line 74


refuse_process_vm_readv()
wild = wild_site(sys.argv[2])
good = good_site(sys.argv[2] + ".good")  # line 79
print(wild, good)
sys.exit(0 if wild == 0 and good == 1 else 1)
