"""The analyzer's user-facing error: one line naming the file, what is wrong and what is allowed."""

from __future__ import annotations

import io
import os
import re

from ..errors import MmpathError

# The first bytes of an input, read to refuse a binary file (a capture, an image, /dev/zero given
# as a log) before the rest is read.
HEAD_BYTES = 8192
# The largest file read whole (an iperf3 -J report, a CSV trace): 4 GiB, the simulator's bound on
# a trace file (docs/traces.md). A day-long iperf3 -J report at 100 ms intervals is ~1 GB a
# stream; a larger file is not one.
MAX_WHOLE_BYTES = 4 << 30



class AnalyzeInputError(MmpathError, ValueError):
    """An input file the analyzer cannot read (exit status 2 in the CLI)."""

    def __init__(self, path, problem: str, allowed: str | None = None, line: int | None = None):
        # FILE:N: for a line of the file, as the scenario and trace readers write it.
        msg = f"{path}:{line}: {problem}" if line is not None else f"{path}: {problem}"
        if allowed:
            msg += f" (allowed: {allowed})"
        super().__init__(" ".join(msg.split()))
        self.path = str(path)


def from_core(path, e: ValueError) -> AnalyzeInputError:
    """A parse error of the simulator core (the CSV trace and wil6210 parsers, which name the file
    and line: FILE:LINE: what (allowed: ...)) as the analyzer's own, in the same form."""
    msg = str(e)
    prefix = f"{path}:"
    msg = msg[len(prefix):].strip() if msg.startswith(prefix) else msg
    at = re.match(r"(\d+): ", msg)
    return AnalyzeInputError(path, msg[at.end():] if at else msg, line=int(at.group(1)) if at else None)


def _head(path, f, allowed: str | None, what: str, utf8: bool) -> bytes:
    """The file's first bytes, or the one error for a binary file seen in them: with `utf8`,
    bytes that are not UTF-8 (but a character cut at the end), named by line; a NUL byte."""
    head = f.read(HEAD_BYTES)
    if utf8:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as e:
            if e.reason != "unexpected end of data":
                raise AnalyzeInputError(path, f"not UTF-8 text{what}", allowed,
                                        line=head[:e.start].count(b"\n") + 1) from None
    nul = head.find(b"\0")
    if nul >= 0:
        raise AnalyzeInputError(path, f"binary data, not text{what} (a NUL byte at offset {nul})", allowed)
    return head


def read_text(path, allowed: str, what: str = "") -> str:
    """A whole UTF-8 file's text, or the one error saying why it cannot be read (`what` names
    what the file should have been, e.g. ", so not an iperf3 -J report"). A binary file is
    refused on its first bytes, a file above MAX_WHOLE_BYTES by its size, before the rest is read."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_WHOLE_BYTES:
                raise AnalyzeInputError(path, f"{size} bytes: too large{what}",
                                        f"at most {MAX_WHOLE_BYTES} bytes, 4 GiB; {allowed}")
            data = _head(path, f, allowed, what, utf8=True)
            data += f.read(MAX_WHOLE_BYTES + 1 - len(data))  # a pipe has no size to check first
        if len(data) > MAX_WHOLE_BYTES:
            raise AnalyzeInputError(path, f"more than {MAX_WHOLE_BYTES} bytes: too large{what}",
                                    f"at most {MAX_WHOLE_BYTES} bytes, 4 GiB; {allowed}")
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AnalyzeInputError(path, f"not UTF-8 text{what}", allowed,
                                line=data[:e.start].count(b"\n") + 1) from None
    except OSError as e:
        raise AnalyzeInputError(path, f"cannot read: {e.strerror}") from None


class _Rejoined(io.RawIOBase):
    """The bytes already read from a stream that cannot seek back (a pipe), then the rest of it."""

    def __init__(self, head: bytes, rest) -> None:
        self._head, self._rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._rest.read1(len(b))  # what the pipe has now, not a full buffer's worth
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._rest.close()
        super().close()


def open_text(path, allowed: str | None = None):
    """A text log opened for line-by-line reading (undecodable bytes replaced, as the logs'
    readers only parse ASCII fields), or the one error saying why it cannot be read; a binary
    file is refused on its first bytes (`allowed`: what the file should have been)."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise AnalyzeInputError(path, f"cannot read: {e.strerror}") from None
    try:
        head = _head(path, f, allowed, "", utf8=False)
        if f.seekable():
            f.seek(0)
            raw = f
        else:
            raw = io.BufferedReader(_Rejoined(head, f))
        return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
    except OSError as e:
        f.close()
        raise AnalyzeInputError(path, f"cannot read: {e.strerror}") from None
    except BaseException:
        f.close()
        raise
