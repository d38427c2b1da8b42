"""Timestamp lines of shell-loop logs (`ss` and `iw` in a `while` loop): the styles people record.

A sample of a periodic log starts with a line giving the wall-clock time, in any of these styles
(each may also follow a ``#``, as in ``echo "# $(date +%s.%N)"``):

    # mmpath-capture ss t=1795328936.835196      `mmpath capture` (ss) / `... iw t=...` (iw)
    1795328936 | 1795328936.835196123            date +%s | date +%s.%N (a Unix time in seconds)
    1795328936835 | 1795328936835196123          date +%s%3N | date +%s%N (ms, µs or ns: 13, 16, 19 digits)
    Sun Dec  6 00:06:50 UTC 2026                 date (C/POSIX locale, `date`'s default output)
    Sun 06 Dec 2026 12:06:50 AM UTC              date (en_US / en_GB locales: glibc's date_fmt)
    Sun, 06 Dec 2026 00:06:50 +0000              date -R (RFC 5322)
    2026-12-06T00:06:50+00:00                    date -Iseconds (also -Iminutes, -Ins: ",123456789")
    2026-12-06T00:06:50.123456789                date +%FT%T.%N (ISO 8601 without a timezone)
    2026-12-06 00:06:50.123                      date '+%F %T.%3N' (a space instead of the T)

A timezone is a numeric offset (``+01:00``, ``+0100``, ``-05``), ``Z``, or the name ``UTC``/``GMT``/
``UT`` (a name such as ``CET`` or ``EST`` is not unique worldwide, so it is refused with a hint).
A time without a timezone is read as UTC: the caller records that (``naive``) so the log's source
says so and ``--offset NAME=SECONDS`` can shift it.

``parse(line)`` -> ``Stamp`` or None (not a timestamp line); ``StampError`` for a line that is
clearly meant as a time but is not one of the forms above (the caller names file and line).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .errors import AnalyzeInputError

FORMS = ("a Unix time (`date +%s`, `date +%s.%N`, or ms/µs/ns digits), `date`'s default output "
         "(`Sun Dec  6 00:06:50 UTC 2026`), `date -R`, ISO 8601 (`date -Iseconds`, `date -Ins`, "
         "`date +%FT%T.%N`, with or without a timezone), each optionally after `#`")

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                       "nov", "dec"), 1)}
_DAYS = r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?"
_ZONE = r"(?P<zone>Z|UTC|GMT|UT|[A-Z]{2,5}|[+-]\d{2}(?::?\d{2})?)"
_FRAC = r"(?:[.,](?P<frac>\d+))?"
_HMS = r"(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})" + _FRAC + r")?"

_MARK = re.compile(r"^#\s*mmpath-capture\s+\w+\s+t=(?P<num>[0-9]+(?:\.[0-9]+)?)\s*$")
_UNIX = re.compile(r"^(?P<num>\d{9,20}(?:\.\d+)?)$")
# ISO 8601 / RFC 3339 as `date -I...` and `date +%F...` write them.
_ISO = re.compile(r"^(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})(?:[T ]" + _HMS + r")?\s*" + _ZONE + r"?$", re.I)
# `date`'s default output in the C locale: %a %b %e %H:%M:%S %Z %Y (zone optional: TZ unset on
# some systems prints none), and `date -R`: %a, %d %b %Y %H:%M:%S %z.
_CDATE = re.compile(r"^" + _DAYS + r"\s+(?P<mon>[a-z]{3})[a-z]*\s+(?P<d>\d{1,2})\s+" + _HMS
                    + r"(?:\s*(?P<ampm>AM|PM))?(?:\s+" + _ZONE + r")?\s+(?P<y>\d{4})$", re.I)
# `date -R` and the en_US / en_GB locales' default: %a %d %b %Y %r %Z (12-hour clock with AM/PM).
_DMY = re.compile(r"^(?:" + _DAYS + r"\s+)?(?P<d>\d{1,2})\s+(?P<mon>[a-z]{3})[a-z]*\s+(?P<y>\d{4})\s+" + _HMS
                  + r"(?:\s*(?P<ampm>AM|PM))?(?:\s+" + _ZONE + r")?$", re.I)
# What a time was probably meant to be: hh:mm[:ss] or a date somewhere on the line.
_TIMELIKE = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?![\d])|\d{4}-\d{2}-\d{2}")

# The two forms a loop's reader meets on nearly every sample, read without the general parser:
# what `mmpath capture` writes for TOOL and a bare Unix time in seconds (`date +%s[.%N]`).
_BARE_SECONDS = re.compile(r"^\s*([0-9]{9,11}(?:\.[0-9]+)?)\s*$")
_CAPTURE_MARKS = {tool: re.compile(rf"^#\s*mmpath-capture\s+{tool}\s+t=([0-9.]+)") for tool in ("ss", "iw")}


def quick(line: str, tool: str) -> float | None:
    """The time of `mmpath capture`'s mark for `tool` ("ss" or "iw") or of a bare Unix time in
    seconds; None for any other line (which the caller then gives to `LineClock.at`)."""
    m = _CAPTURE_MARKS[tool].match(line) or _BARE_SECONDS.match(line)
    return float(m.group(1)) if m else None


def is_capture_mark(line: str, tool: str) -> bool:
    return _CAPTURE_MARKS[tool].match(line) is not None
_NUMLIKE = re.compile(r"^\d+(?:[.,]\d+)?$")


class StampError(ValueError):
    """A line meant as a timestamp in a form that is not understood (message: what and why)."""


@dataclass(frozen=True)
class Stamp:
    t: float            # Unix seconds
    naive: bool = False  # no timezone in the line: read as UTC


def _zone(z: str | None) -> tuple[timezone, bool]:
    if z is None:
        return timezone.utc, True
    zu = z.upper()
    if zu in ("Z", "UTC", "GMT", "UT"):
        return timezone.utc, False
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})?", z)
    if m:
        off = timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return timezone(-off if m.group(1) == "-" else off), False
    raise StampError(f"timezone name {z!r} is not unique worldwide; record UTC (`TZ=UTC date`) or a "
                     f"numeric offset (`date -R`, `date -Iseconds`, `date +%s.%N`)")


def _at(y: int, mo: int, d: int, g: dict, ampm: str | None = None) -> Stamp:
    h = int(g.get("H") or 0)
    if ampm:
        if not 1 <= h <= 12:
            raise StampError(f"hour {h} with {ampm}")
        h = h % 12 + (12 if ampm.upper() == "PM" else 0)
    tz, naive = _zone(g.get("zone"))
    try:
        dt = datetime(y, mo, d, h, int(g.get("M") or 0), int(g.get("S") or 0), tzinfo=tz)
    except ValueError as e:
        raise StampError(f"not a valid date or time ({e})") from None
    frac = g.get("frac")
    return Stamp(dt.timestamp() + (float("0." + frac) if frac else 0.0), naive)


def parse(line: str) -> Stamp | None:
    """The time a timestamp line gives, None when the line is no timestamp line at all."""
    s = line.strip()
    m = _MARK.match(s)
    if m:
        return Stamp(float(m.group("num")))
    if s.startswith("#"):
        s = s[1:].strip()
    if not s:
        return None
    m = _UNIX.match(s)
    if m:
        num = m.group("num")
        whole = num.partition(".")[0]
        if len(whole) <= 11:
            return Stamp(float(num))
        if "." not in num:
            scale = {13: 1e3, 16: 1e6, 19: 1e9}.get(len(whole))
            if scale:
                return Stamp(int(whole) / scale)
        raise StampError(f"{len(whole)}-digit number is not a Unix time in s (up to 11 digits) "
                         f"or ms/µs/ns (13, 16, 19 digits)")
    m = _ISO.match(s)
    if m:
        g = m.groupdict()
        return _at(int(g["y"]), int(g["mo"]), int(g["d"]), g)
    for rx in (_CDATE, _DMY):
        m = rx.match(s)
        if m:
            g = m.groupdict()
            mo = _MONTHS.get(g["mon"][:3].lower())
            if mo is None:
                raise StampError(f"month {g['mon']!r} is not an English month name")
            return _at(int(g["y"]), mo, int(g["d"]), g, g.get("ampm"))
    return None


_LEAD = re.compile(r"^(?:\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)",
                   re.I)


def looks_like_time(line: str) -> bool:
    """A line that is no timestamp `parse` understands but was probably meant as one: it starts
    with a digit, a day or a month name and holds a clock time hh:mm, a yyyy-mm-dd date, or is a
    bare number; so it gets an error instead of being skipped (a comment such as ``# run 3 at
    12:00`` does not start so and stays a comment)."""
    s = line.strip().lstrip("#").strip()
    return bool(_LEAD.match(s) and (_TIMELIKE.search(s) or _NUMLIKE.match(s)))


class LineClock:
    """A log reader's timestamp lines: ``at(lineno, line)`` -> Unix seconds or None, raising the
    reader's one-line error (file, line, the accepted forms) for a time it cannot read; counts the
    lines and those without a timezone (``facts()`` for the source's meta, ``warn()`` says so)."""

    def __init__(self, path, what: str):
        self.path = path
        self.what = what  # "ss" / "iw", for the messages
        self.count = 0
        self.naive = 0
        self.last: float | None = None

    def _error(self, lineno: int, problem: str):
        return AnalyzeInputError(self.path, problem, f"timestamp lines before each {self.what} sample: {FORMS}",
                                 line=lineno)

    def at(self, lineno: int, line: str, strict: bool = True) -> float | None:
        """The line's time, or None for no timestamp line; with ``strict`` a line that looks like a
        time (hh:mm, a date, a bare number) but is none of the forms is an error, not skipped."""
        try:
            st = parse(line)
        except StampError as e:
            raise self._error(lineno, f"timestamp {line.strip()!r} not understood: {e}") from None
        if st is None:
            if strict and looks_like_time(line):
                raise self._error(lineno, f"timestamp line not understood: {line.strip()[:60]!r}")
            return None
        self.count += 1
        self.naive += st.naive
        self.last = st.t
        return st.t

    def facts(self) -> dict:
        """What the source's meta records about its clock (nothing for the usual Unix/zoned times)."""
        if self.naive:
            return {"timezone": "none in the timestamp lines: read as UTC"}
        return {}

    def warn(self) -> None:
        if self.naive:
            print(f"mmpath analyze: warning: {self.path}: its timestamp lines name no timezone, so they are "
                  f"read as UTC (record `date -Ins` or `date +%s.%N`, or shift it with --offset "
                  f"{self.path}=SECONDS)", file=sys.stderr)
