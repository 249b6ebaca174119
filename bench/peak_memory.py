"""Peak resident memory of one process, without its child processes.

Germanium starts Z3 as a child process. The usual measures mix the two: `/usr/bin/time -f %M`
and `wait4`'s `ru_maxrss` give the maximum over the process and its waited-for descendants, so
a Z3 larger than Germanium would be reported as Germanium's peak. Instead, the measured
process is started under `ptrace` with only `PTRACE_O_TRACEEXIT`: the kernel stops it just
before it releases its memory, and `VmHWM` in `/proc/PID/status` is then its own peak
resident set (children have their own address spaces and never count). Its children are not
traced, and the process is stopped only at its start and its exit, so it runs at full speed.

Where `ptrace` is not allowed, `VmHWM` is sampled every millisecond while the process runs;
since it only grows, the last sample is a lower bound (memory taken in the final millisecond
can be missed), and the result says which method was used.
"""

import ctypes
import os
import signal
import subprocess
import threading
import time

PTRACE_TRACEME = 0
PTRACE_CONT = 7
PTRACE_SETOPTIONS = 0x4200
PTRACE_O_TRACEEXIT = 0x40
PTRACE_O_EXITKILL = 0x100000
PTRACE_EVENT_EXIT = 6

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def _ptrace(request, pid, addr, data):
    return _libc.ptrace(request, pid, ctypes.c_void_p(addr), ctypes.c_void_p(data))


def _trace_me():
    # Runs in the child between fork and exec; on failure the child simply runs untraced
    # and the parent notices (no stop at exec).
    _ptrace(PTRACE_TRACEME, 0, 0, 0)


def _vm_hwm_kb(pid):
    """VmHWM of `pid` in KiB, or None when it cannot be read (process gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def measure(command, timeout, cwd=None):
    """Runs `command` (output discarded) and returns a dict with
    - `own_peak_kb`: the process alone (None if it was killed before its exit stop);
    - `tree_peak_kb`: wait4's ru_maxrss, the largest of the process, its waited-for
      descendants and the copy of this Python process it was forked from (the kernel counts
      the address space an exec replaces), so only meaningful when far above Python's size;
    - `method`: "ptrace-exit", or "untraced" when ptrace was refused;
    - `exit_code` and `timed_out`."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_trace_me,
        start_new_session=True,
    )
    pid = process.pid
    timed_out = threading.Event()

    def kill_group():
        timed_out.set()
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass

    timer = threading.Timer(timeout, kill_group)
    timer.start()
    own_peak = None
    method = "ptrace-exit"
    try:
        _, status, usage = os.wait4(pid, 0)
        traced = os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGTRAP
        if traced:
            _ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
            _ptrace(PTRACE_CONT, pid, 0, 0)
            while True:
                _, status, usage = os.wait4(pid, 0)
                if not os.WIFSTOPPED(status):
                    break
                if status >> 16 == PTRACE_EVENT_EXIT:
                    own_peak = _vm_hwm_kb(pid)
                    _ptrace(PTRACE_CONT, pid, 0, 0)
                else:
                    # An ordinary signal: deliver it as if nobody were watching.
                    _ptrace(PTRACE_CONT, pid, 0, os.WSTOPSIG(status))
        elif os.WIFSTOPPED(status):
            raise RuntimeError("unexpected stop of the measured process")
        else:
            method = "untraced"  # ptrace was refused: the process ran to its end unwatched
    finally:
        timer.cancel()
        timer.join()
    # The child is reaped here; keep Popen from trying again.
    process.returncode = _exit_code(status)
    return {
        "own_peak_kb": own_peak,
        "tree_peak_kb": usage.ru_maxrss,
        "method": method,
        "exit_code": process.returncode,
        "timed_out": timed_out.is_set(),
    }


def measure_sampled(command, timeout, cwd=None, interval=0.001):
    """The fallback: samples VmHWM while the process runs (a lower bound)."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    pid = process.pid
    deadline = time.monotonic() + timeout
    own_peak = None
    timed_out = False
    while True:
        reaped, status, usage = os.wait4(pid, os.WNOHANG)
        if reaped == pid:
            break
        sample = _vm_hwm_kb(pid)
        if sample is not None:
            own_peak = max(own_peak or 0, sample)
        if time.monotonic() > deadline and not timed_out:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
        time.sleep(interval)
    process.returncode = _exit_code(status)
    return {
        "own_peak_kb": own_peak,
        "tree_peak_kb": usage.ru_maxrss,
        "method": "sampled",
        "exit_code": process.returncode,
        "timed_out": timed_out,
    }


def own_peak(command, timeout, cwd=None):
    """`measure`, falling back to `measure_sampled` where ptrace is refused (the command then
    runs twice)."""
    result = measure(command, timeout, cwd)
    if result["method"] == "untraced":
        return measure_sampled(command, timeout, cwd)
    return result  # own_peak_kb is None when the run was killed (no exit stop then)


def _exit_code(status):
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return None
