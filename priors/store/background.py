"""Work done in a second process while this one does its own: `verify` replays the protocol over a
large ledger (core/ledger_replay.py) in a child while it checks the ledger's lines itself, so the
two passes take the time of the longer one, not their sum, on a machine with two cores.

Only where that is safe and pays: a POSIX `fork` (the child shares the parent's memory, nothing is
sent to it), a process with one thread (forking a threaded one, such as an MCP server's event loop,
can deadlock the child), and work big enough to be worth a process (PRIORS_PARALLEL_MIN_BYTES,
default 8 MB of ledger; tests set 0). Anywhere else — Windows, a thread running, a small ledger, a
child that fails in any way — the work runs in this process when its result is asked for: the
answer is the same, only slower.

The child sends its result back through a pipe with `marshal` (plain values only: tuples, lists,
strings, numbers) and leaves with `os._exit`, so it never runs the parent's clean-up or writes to
its streams.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable

DEFAULT_MIN_BYTES = 8 << 20


def min_bytes(least: int = DEFAULT_MIN_BYTES) -> int:
    """How much work (bytes of ledger) a second process takes to pay for itself: `least` for the work
    at hand, unless PRIORS_PARALLEL_MIN_BYTES says otherwise."""
    raw = os.environ.get("PRIORS_PARALLEL_MIN_BYTES", "")
    try:
        return max(0, int(raw)) if raw.strip() else least
    except ValueError:
        return least


def core_free() -> bool:
    """Whether a core is free for more work now: fewer tasks running at this moment (Linux's
    `/proc/loadavg`, whose count includes this process) than the cores this process may run on.
    True where that cannot be read (not Linux): the work is shared as it always was.

    Asked by work of tens of milliseconds (`relevant`'s verify list), which a second process speeds
    up only on a core nobody else uses: with the other core busy the two halves wait for each other's
    turns and both pay for the pages the fork copies — `relevant` at 10k took 0.166 s split against
    0.150 s alone, with another program's work running on the machine's other core."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            running = int(fh.read().split()[3].split(b"/")[0])
        cores = len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError, AttributeError):
        return True
    return running < cores


def can_fork() -> bool:
    """A POSIX fork in a process running one thread. (A process that never imported `threading` runs
    no other: it is not imported for the question, which `relevant` asks on every call.)"""
    threading = sys.modules.get("threading")
    return (hasattr(os, "fork") and sys.platform != "win32"
            and (threading is None or threading.active_count() == 1))


def worth_it(size: int, least: int = DEFAULT_MIN_BYTES, short: bool = False) -> bool:
    """Whether `start` would begin `size` bytes of work in a second process (it pays, and is safe).
    `short`: work of milliseconds, which pays only on a free core (`core_free`) — unless
    PRIORS_PARALLEL_MIN_BYTES is set, which decides alone (tests force the split with it)."""
    if size < min_bytes(least) or not can_fork():
        return False
    return not short or bool(os.environ.get("PRIORS_PARALLEL_MIN_BYTES", "").strip()) or core_free()


def start(work: Callable[[], Any], size: int, least: int = DEFAULT_MIN_BYTES, short: bool = False) -> Callable[[], Any]:
    """Begin `work` (returning plain values) in a child when `size` bytes of work pay for one (`least`:
    the bytes that do, for this work; `short`: see `worth_it`); the returned function gives its
    result (waiting for the child, or running `work` here)."""
    if not worth_it(size, least, short):
        return work
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return work
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return work
    if pid == 0:  # the child: do the work, send it, leave without running anything of the parent's
        code = 1
        try:
            os.close(read_end)
            body = marshal.dumps(work())
            view = memoryview(body)
            while view:
                view = view[os.write(write_end, view):]
            code = 0
        except BaseException:  # any failure: the parent does the work itself
            pass
        finally:
            os._exit(code)
    os.close(write_end)
    return _Child(work, pid, read_end)


class _Child:
    """The result of work begun in a child: called, it waits for the child and gives the result (or
    does the work here when the child failed); `cancel` stops the child instead."""

    def __init__(self, work: Callable[[], Any], pid: int, read_end: int) -> None:
        self.work, self.pid, self.read_end = work, pid, read_end

    def __call__(self) -> Any:
        if self.read_end < 0:
            return self.work()
        chunks = []
        try:
            while True:
                chunk = os.read(self.read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self.read_end)
            self.read_end = -1
        _, status = os.waitpid(self.pid, 0)
        if status != 0:
            return self.work()
        try:
            return marshal.loads(b"".join(chunks))
        except (EOFError, ValueError, TypeError):
            return self.work()

    def cancel(self) -> None:
        if self.read_end < 0:
            return
        try:
            os.kill(self.pid, 9)  # SIGKILL: the child runs nothing of ours that needs a clean end
        except OSError:
            pass
        os.close(self.read_end)
        self.read_end = -1
        os.waitpid(self.pid, 0)


def cancel(result: Callable[[], Any]) -> None:
    """Forget work `start` began, when the caller fails before it needs the result: its child (if it
    has one) is stopped and reaped — never left blocked on a pipe nobody reads."""
    if isinstance(result, _Child):
        result.cancel()
