"""atomic_write's kernel-copied prefix and ranges: exact bytes, a fallback where the kernel cannot, no write on a change."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from priors.core.errors import MachineError
from priors.store import files

pytestmark = pytest.mark.one_cache_mode

OLD = b"".join(b'{"n":%d}\n' % i for i in range(50000))  # ~500 KB: several copy_file_range rounds at most


def _ledger(tmp_path: Path) -> Path:
    d = tmp_path / ".priors"
    d.mkdir()
    p = d / "ledger.jsonl"
    p.write_bytes(OLD)
    return p


def test_keep_copies_the_prefix_then_appends(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    files.atomic_write(p, [b'{"n":"new"}\n'], keep=len(OLD))
    assert p.read_bytes() == OLD + b'{"n":"new"}\n'
    assert [x.name for x in p.parent.iterdir()] == ["ledger.jsonl"]


@pytest.mark.parametrize("how", ["absent", "EXDEV", "ENOSYS", "zero"])
def test_without_kernel_copy_the_plain_loop_gives_the_same_bytes(tmp_path: Path, monkeypatch, how: str) -> None:
    p = _ledger(tmp_path)
    if how == "absent":
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    elif how == "zero":
        monkeypatch.setattr(os, "copy_file_range", lambda *a, **k: 0, raising=False)
    else:
        code = getattr(errno, how)

        def fail(*a, **k):
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(os, "copy_file_range", fail, raising=False)
    files.atomic_write(p, [b"tail\n"], keep=len(OLD))
    assert p.read_bytes() == OLD + b"tail\n"


def test_a_half_done_kernel_copy_is_finished_by_the_loop(tmp_path: Path, monkeypatch) -> None:
    p = _ledger(tmp_path)
    real = getattr(os, "copy_file_range", None)
    calls = []

    def once(src, dst, count, *rest):
        calls.append(count)
        if len(calls) == 1 and real is not None:
            return real(src, dst, 1000)
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(os, "copy_file_range", once, raising=False)
    files.atomic_write(p, [b"tail\n"], keep=len(OLD))
    assert p.read_bytes() == OLD + b"tail\n"


def test_a_ledger_that_changed_length_is_not_written(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    with pytest.raises(MachineError, match="changed while this verb ran"):
        files.atomic_write(p, [b"tail\n"], keep=len(OLD) - 1)
    assert p.read_bytes() == OLD
    assert [x.name for x in p.parent.iterdir()] == ["ledger.jsonl"]  # the temp file is gone too


def test_other_copy_errors_are_not_swallowed(tmp_path: Path, monkeypatch) -> None:
    p = _ledger(tmp_path)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "copy_file_range", full, raising=False)
    with pytest.raises(OSError) as exc:
        files.atomic_write(p, [b"tail\n"], keep=len(OLD))
    assert exc.value.errno == errno.ENOSPC
    assert p.read_bytes() == OLD
    assert [x.name for x in p.parent.iterdir()] == ["ledger.jsonl"]


@pytest.mark.parametrize("kernel", [True, False])
def test_ranges_of_the_old_file_are_copied_between_new_bytes(tmp_path: Path, monkeypatch, kernel: bool) -> None:
    """redact's rewrite: spans of the old ledger kept as they are, a few lines replaced."""
    if not kernel:
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    p = _ledger(tmp_path)
    a, b = OLD.index(b'{"n":7}'), OLD.index(b'{"n":40000}')
    chunks = [(0, a), b'{"n":"seven"}', (a + len(b'{"n":7}'), b), b"", (b, len(OLD)), b'{"n":"end"}\n']
    files.atomic_write(p, chunks, size=len(OLD))
    want = OLD[:a] + b'{"n":"seven"}' + OLD[a + len(b'{"n":7}'):] + b'{"n":"end"}\n'
    assert p.read_bytes() == want
    assert [x.name for x in p.parent.iterdir()] == ["ledger.jsonl"]


def test_ranges_from_a_file_that_changed_are_refused(tmp_path: Path) -> None:
    p = _ledger(tmp_path)
    with pytest.raises(MachineError, match="changed while this verb ran"):
        files.atomic_write(p, [(0, 10), b"x"], size=len(OLD) + 1)
    with pytest.raises(MachineError, match="shrank"):
        files.atomic_write(p, [(0, len(OLD) + 10)], size=len(OLD))  # a range past its end
    assert p.read_bytes() == OLD
    assert [x.name for x in p.parent.iterdir()] == ["ledger.jsonl"]


def test_chunks_that_come_as_they_are_made_are_written_as_they_come(tmp_path: Path) -> None:
    """An iterator's chunks are written one by one, so a large file (PRIORS.md's whole table) is never
    held whole: each chunk is on disk before the next is asked for; a range after them still copies."""
    p = tmp_path / "ledger.jsonl"
    p.write_bytes(OLD)
    tmp = tmp_path / f".ledger.jsonl.{os.getpid()}.tmp"

    def pieces():
        yield b"one\n"
        assert tmp.read_bytes() == b"one\n"  # written before the next piece is made
        yield b"two\n"
        assert tmp.read_bytes() == b"one\ntwo\n"
        yield (0, 4)

    files.atomic_write(p, pieces(), size=len(OLD))
    assert p.read_bytes() == b"one\ntwo\n" + OLD[:4]


def test_the_whole_table_is_written_in_pieces_that_make_the_full_render(tmp_path: Path) -> None:
    from priors.core.fold import fold
    from priors.core.views import markdown_lines, markdown_pieces, table_row

    st = fold([{"t": "prior", "id": f"P-{i:04d}", "ns": "web", "type": "conclusion", "claim": f"claim {i}",
                "born": "run-001", "facets": {"scope": "repo-wide", "activation": "verify-phase"}}
               for i in range(1, 2500)])
    pieces = list(markdown_pieces(st))
    assert len(pieces) == 3 and all(piece.endswith("\n") for piece in pieces)
    whole = "\n".join(markdown_lines(True, (table_row(p) for p in st.priors.values()))) + "\n"
    assert "".join(pieces) == whole and whole.count("| P-") == 2499
