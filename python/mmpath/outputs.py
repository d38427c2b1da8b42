"""Write a run's output folder: summary.json, intervals.csv, timeline.parquet, iperf3.json, report.

Files are written into a temporary folder beside the target and moved in only once all of them
were written, so a run that fails (or is interrupted) never leaves a half-written output folder.
The column schema of each file is documented in docs/outputs.md.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .errors import OutputError
from .lazy import numpy as np  # on first use (start-up time): lazy.py
from .report import PLOT_FILES, write_report

if TYPE_CHECKING:
    from .api import Result

BIN_S = 0.1  # intervals.csv bin width (the core's 100 ms aggregation)
IPERF_INTERVAL_S = 1.0  # iperf3's default reporting interval (-i 1)
IPERF_TCP_BLKSIZE = 131072  # iperf3's default TCP write size (128 KiB)
IPERF_FIRST_SOCKET = 5  # iperf3's first data socket fd on Linux, what parsers usually see


# --------------------------------------------------------------------------- summary.json


def _jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars -> Python, NaN/inf -> null (JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(obj: Any) -> str:
    """JSON as written to disk: insertion order kept, 2-space indent, trailing newline."""
    return json.dumps(_jsonable(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def summary_json(result: "Result") -> str:
    return dumps(result.summary)


# --------------------------------------------------------------------------- intervals.csv


def interval_batches(result: "Result") -> Any:
    """A pass over the run's intervals: one DataFrame, or a streamed run's file a batch at a
    time (Result.intervals would read them all)."""
    src = getattr(result, "_intervals", None)
    if isinstance(src, TimelineFile):
        return src.groups()
    return iter([result.intervals])


def write_intervals_csv(result: "Result", path: Path) -> None:
    cols = ["t_s", "flow", "subflow", "path", "bytes", "mbps"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        first = True
        for df in interval_batches(result):
            if not first and not len(df):
                continue
            df = df.copy()
            # Bin starts are multiples of 100 ms in integer nanoseconds in the core; round away float
            # noise (0.30000000000000004) so the CSV is readable and stable.
            df["t_s"] = df["t_s"].to_numpy(dtype=np.float64).round(9)
            # A batch at a time, the header once: the same text as the whole frame's to_csv.
            df[cols].to_csv(f, index=False, header=first, lineterminator="\n")
            first = False


# --------------------------------------------------------------------------- timeline.parquet


def write_timeline_parquet(result: "Result", path: Path) -> None:
    src = result.timeline_file
    if src is not None:  # streamed while it ran: copied file to file, never loaded
        if not path.exists() or not path.samefile(src):
            shutil.copyfile(src, path)
        return
    # Categorical columns (flow, path, cc_state) become Parquet dictionary columns: compact, and
    # pandas/pyarrow/polars read them back as categories.
    result.timeline.to_parquet(path, engine="pyarrow", index=False)


@contextmanager
def system_arrow_pool() -> Iterator[None]:
    """pyarrow allocates from the C library's allocator meanwhile, not its default pool
    (mimalloc here), which keeps the pages a streamed run's chunks and read-backs free: measured
    on a 400 s `blockage` run, a peak of 176 MiB against 224 (bench/README.md "Memory of long
    runs"). Buffers remember their pool, so setting it back afterwards is safe."""
    import pyarrow as pa

    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(before)


# Batches read (TimelineFile.groups) and whole-file reads (TimelineFile.read) since the process
# started: tests/test_streaming.py checks that writing a run's folder reads its files only a
# batch at a time (a whole read is what made memory grow with the run).
GROUPS_READ = [0]
WHOLE_READS = [0]

# A row group of timeline.parquet (or of the intervals) is closed once it holds this many
# encoded bytes or rows. The open group is held in memory, encoded, until then: the bound on what
# writing costs; a reader here (ParquetSource) holds one group's selected column chunks, so the
# rows bound matters for columns that compress well (the intervals: ~4 bytes a row). Each closed
# group costs every reader of the file some metadata (pyarrow: ~27 KB for 23 columns) for as long
# as it has the file open: at ~40 bytes a row (the `blockage` scenario's timeline, Snappy), 4 MiB
# is ~100 000 rows, ~5 simulated minutes, and a day ~270 groups against ~1 600 chunk-sized ones
# (bench/README.md "Memory of long runs").
GROUP_BYTES = 4 << 20
GROUP_ROWS = 1 << 18
# The most a data page of the file holds (the Parquet libraries' usual 1 MiB: pyarrow, reading
# a column of a big row group batch by batch, held more the smaller the pages: +8.4 MiB at 1 MiB,
# +16 MiB at 64 KiB, +20 MiB at 8 KiB, reading a day's intervals; bench/README.md).
PAGE_BYTES = 1 << 20
# Rows per batch when a file is read back (groups()): what a reader holds of it at a time.
READ_ROWS = 1 << 14
# The category names of each categorical column, stored in the file (a Parquet dictionary
# holds only the names a row group uses, in the order it met them; readers here put them back).
_CATEGORIES_KEY = "mmpath:categories"


def _column_kind(series: Any) -> str:
    from .lazy import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        return "category"
    kind = str(series.dtype)
    if kind not in ("float64", "uint64", "int32", "int8", "bool"):
        raise TypeError(f"column {series.name!r}: dtype {kind} cannot be streamed to Parquet")
    return kind


class TimelineFile:
    """timeline.parquet (or a run's intervals, .intervals.parquet) written as a run goes: each
    chunk of rows the core hands over is appended to an open row group, encoded and compressed as
    it arrives (the core's ParquetSink, parquet_sink.rs), which is closed at GROUP_BYTES encoded
    bytes: the run holds one chunk and at most one encoded row group, not its timeline, and the
    file has few row groups, so its readers' metadata stays small too. groups() reads it back
    READ_ROWS rows at a time: what every consumer after the run does (summary metrics,
    iperf3.json, intervals.csv, the report's plots), so none of them holds more than that.

    The rows go to a temporary name in the same folder (`.timeline.parquet.<pid>.part`), renamed
    to `path` by close() once the last chunk is in: a reader never sees a half-written
    timeline.parquet, and a run that fails or is interrupted removes its part file (abandon());
    one killed outright leaves only the hidden part file, never `path`. read() reads the file
    back as the DataFrame an in-memory run holds (same columns, dtypes and categories)."""

    def __init__(self, path: str | os.PathLike, group_bytes: int = GROUP_BYTES, group_rows: int = GROUP_ROWS) -> None:
        self.path = Path(path)
        self._part = self.path.with_name(f".{self.path.name}.{os.getpid()}.part")
        self._writer: Any = None
        self._kinds: list[tuple[str, str]] = []  # (column, kind) as ParquetSink takes them
        self._group = (int(group_rows), int(group_bytes))
        self._closed = False

    def write(self, frame: Any) -> None:
        import pyarrow as pa

        from . import _core

        if self._writer is None:
            kinds = [(str(c), _column_kind(frame[c])) for c in frame.columns]
            cats = {c: [str(x) for x in frame[c].cat.categories] for c, k in kinds if k == "category"}
            # pandas' own metadata (what pyarrow stores), so pandas reads the columns back as
            # they were; and the category names.
            meta = pa.Schema.from_pandas(frame.iloc[:0], preserve_index=False).metadata or {}
            kv = [(k.decode(), v.decode()) for k, v in meta.items()]
            kv.append((_CATEGORIES_KEY, json.dumps(cats)))
            self._kinds = kinds
            self._writer = _core.ParquetSink(str(self._part), kinds, cats, kv, *self._group, PAGE_BYTES)
        self._writer.write([np.ascontiguousarray(frame[c].cat.codes.to_numpy(), dtype=np.int64) if k == "category"
                            else np.ascontiguousarray(frame[c].to_numpy()) for c, k in self._kinds])

    def close(self) -> None:
        """The last chunk was written: finish the file and give it its name."""
        if self._writer is None:  # a run without a single row: an empty file of the same schema
            from .lazy import pandas as pd

            pd.DataFrame().to_parquet(self._part, engine="pyarrow", index=False)
        else:
            self._writer.close()
            self._writer = None  # (a Result holding this pickles: process pools, Dask)
        os.replace(self._part, self.path)
        self._closed = True

    def abandon(self) -> None:
        """The run did not finish: no file is left (nothing once close() ran)."""
        if self._closed:
            return
        self._writer = None  # (the part file's handle closes with it)
        self._part.unlink(missing_ok=True)

    def moved_to(self, path: Path) -> None:
        """The file now lives at `path` (its staging folder was moved into the output folder)."""
        self.path = path

    def _unreadable(self, e: Exception) -> OutputError:
        """The core reader's error (a file deleted or damaged since the run) as one line naming
        the file."""
        if not self.path.exists():
            return OutputError(f"{self.path}: the run's {self.path.name.strip('.')} file is gone (moved or deleted "
                               f"since the run); it cannot be read back")
        return OutputError(f"{' '.join(str(e).split())} (not the Parquet file the run wrote)")

    def columns(self) -> list[str]:
        from . import _core

        try:
            return list(_core.ParquetSource.describe(str(self.path))[0])
        except OSError as e:
            raise self._unreadable(e) from None

    def _frames(self, columns: list[str] | None) -> Iterator[Any]:
        """The rows as DataFrames of at most READ_ROWS rows, in order, each categorical column
        with the run's categories in the run's order. Read by the core's ParquetSource
        (parquet_source.rs), which holds one row group's selected column chunks and one batch:
        pyarrow, reading these files batch by batch, held several times that."""
        from . import _core
        from .lazy import pandas as pd

        try:
            source = _core.ParquetSource(str(self.path), columns, READ_ROWS)
        except OSError as e:
            raise self._unreadable(e) from None
        cats = source.categories
        while True:
            try:
                batch = next(source)
            except StopIteration:
                return
            except (OSError, ValueError) as e:  # (damaged past its footer, or not a run's columns)
                raise self._unreadable(e) from None
            yield pd.DataFrame({c: pd.Categorical.from_codes(v, categories=cats[c]) if c in cats else v
                                for c, v in batch.items()})

    def groups(self, columns: list[str] | None = None) -> Any:
        """The rows (these columns of them) as DataFrames of at most READ_ROWS rows, in order;
        each with the dtypes and categories read() gives."""
        for frame in self._frames(columns):
            GROUPS_READ[0] += 1
            yield frame

    def read(self, columns: list[str] | None = None) -> Any:
        """The timeline (or these columns of it) as a DataFrame, read a batch at a time:
        pandas.read_parquet's whole-file read held several times the frame's size on the way."""
        from .lazy import pandas as pd

        WHOLE_READS[0] += 1
        frames = list(self._frames(columns))
        if not frames:
            return pd.read_parquet(self.path, engine="pyarrow", columns=columns)
        if len(frames) == 1:
            return frames[0]
        # Every batch carries the run's categories (_frames), so the columns stay Categoricals.
        frame = pd.concat(frames, ignore_index=True)
        del frames
        return frame


# --------------------------------------------------------------------------- iperf3.json


def _num(x: float) -> float | int:
    """Whole numbers as ints (iperf3 prints `"duration": 10`), others as floats."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _cookie(name: str, seed: int) -> str:
    # iperf3's cookie is 36 random [a-z2-7] characters; derive it from the run so the file is
    # deterministic for a given scenario and seed.
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    digest = hashlib.sha512(f"{name}\0{seed}".encode()).digest()
    return "".join(alphabet[b % 32] for b in digest[:36])


def _flow_window(flow: dict[str, Any], duration: float) -> tuple[float, float]:
    start = float(flow.get("start_s") or 0.0)
    stop = flow.get("stop_s")
    stop = duration if stop is None else min(float(stop), duration)
    start = min(start, stop)
    return start, stop


def _per_second_bytes(result: "Result", n_flows: int, n_int: int) -> np.ndarray:
    """bytes[flow, interval] from the 100 ms connection-level bins (vectorized, a batch of the
    intervals at a time: the bytes are whole numbers, so the sums are exact in any order)."""
    by = np.zeros(n_flows * n_int)
    for iv in interval_batches(result):
        conn = iv[iv["subflow"].to_numpy() < 0]
        flow = conn["flow"].cat.codes.to_numpy().astype(np.int64)
        # A bin belongs to the second it starts in; bins start on multiples of 100 ms, so a bin
        # never straddles a second boundary. The epsilon guards 2.9999999 -> 2.
        sec = np.floor(conn["t_s"].to_numpy(dtype=np.float64) / IPERF_INTERVAL_S + 1e-9).astype(np.int64)
        sec = np.clip(sec, 0, n_int - 1)
        keep = flow >= 0
        idx = flow[keep] * n_int + sec[keep]
        by += np.bincount(idx, weights=conn["bytes"].to_numpy(dtype=np.float64)[keep], minlength=n_flows * n_int)
    return by.reshape(n_flows, n_int)


def timeline_batches(result: "Result", columns: list[str]) -> Any:
    """A pass over the timeline with at least `columns` (those it has): a streamed run's read
    from its file a batch at a time, only these; an in-memory one as one batch."""
    src = getattr(result, "_timeline", None)
    if isinstance(src, TimelineFile):
        return src.groups(columns)
    return iter([result.timeline])


def _timeline_at(result: "Result", n_flows: int, ends: np.ndarray,
                 columns: list[str]) -> tuple[dict[str, np.ndarray | None], np.ndarray]:
    """Value of each timeline column for each flow at each interval end: {column: [flow,
    interval]} (None: no such column), and each flow's largest cwnd_bytes (0: none).

    The last sample at or before the end, like iperf3 reading TCP_INFO when the interval closes.
    One pass over the timeline's batches: time never decreases from one batch to the next,
    so a later batch's sample at or before an end is the later one and replaces what an earlier
    batch found."""
    out: dict[str, np.ndarray | None] = {}
    max_cwnd = np.full(n_flows, np.nan)
    seen = False
    for tl in timeline_batches(result, ["flow", "t_s", *columns]):
        if not len(tl):
            continue
        if not seen:
            out = {c: (np.full((n_flows, len(ends)), np.nan) if c in tl.columns else None) for c in columns}
            seen = True
        codes = tl["flow"].cat.codes.to_numpy()
        t = tl["t_s"].to_numpy(dtype=np.float64)
        values = {c: tl[c].to_numpy(dtype=np.float64) for c in columns if out[c] is not None}
        for fi in range(n_flows):  # one searchsorted per flow, not a loop over samples
            sel = codes == fi
            if not sel.any():
                continue
            tf = t[sel]
            order = np.argsort(tf, kind="stable")
            tf = tf[order]
            i = np.searchsorted(tf, ends + 1e-9, side="right") - 1
            ok = i >= 0
            for c, v in values.items():
                out[c][fi, ok] = v[sel][order][i[ok]]
            if "cwnd_bytes" in values:
                vals = values["cwnd_bytes"][sel]
                if vals.size and np.isfinite(vals).any():
                    max_cwnd[fi] = np.fmax(max_cwnd[fi], np.nanmax(vals))
    if not seen:
        out = {c: None for c in columns}
    return out, max_cwnd


def _int_or_zero(x: float) -> int:
    return 0 if x is None or not math.isfinite(x) else int(round(x))


def iperf3_doc(result: "Result") -> dict[str, Any]:
    """The run in the layout of `iperf3 -J` (client side), one stream per flow (write_iperf3_json
    writes it without holding its intervals).
    """
    doc, intervals = _iperf3_parts(result)
    return {**doc, "intervals": list(intervals)}


_INTERVALS_MARK = "\0intervals\0"


def write_iperf3_json(result: "Result", path: Path) -> None:
    """iperf3.json, the same text as dumps(iperf3_doc(result)), its intervals (one per simulated
    second: 86,400 for a day) written one at a time as they are made."""
    doc, intervals = _iperf3_parts(result)
    text = dumps({**doc, "intervals": [_INTERVALS_MARK]})
    mark = json.dumps(_INTERVALS_MARK)
    head, tail = text.split(mark)
    indent = head[head.rindex("\n") + 1:]  # the list's items' indent
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        for k, interval in enumerate(intervals):
            if k:
                f.write(",\n" + indent)
            f.write(dumps(interval)[:-1].replace("\n", "\n" + indent))
        f.write(tail)


def _iperf3_parts(result: "Result") -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """iperf3_doc without its intervals (key order kept), and the intervals as a generator.

    iperf3 reports from the client; mmpath's client is the station, so a download flow is what
    iperf3 calls reverse mode (-R). TCP sender statistics (retransmits, cwnd, RTT) are included for
    every TCP stream because the simulator sees both ends.
    """
    s = result.summary
    flows: list[dict[str, Any]] = s["flows"]
    paths = {p["name"]: p for p in s["paths"]}
    duration = float(s["sim_s"])
    n_flows = len(flows)
    n_int = max(1, math.ceil(duration / IPERF_INTERVAL_S - 1e-9))
    starts = np.arange(n_int) * IPERF_INTERVAL_S
    ends = np.minimum(starts + IPERF_INTERVAL_S, duration)

    tcp = [f["kind"] != "udp" for f in flows]
    all_udp = n_flows > 0 and not any(tcp)
    reverse = n_flows > 0 and all(f.get("direction") == "download" for f in flows)
    sockets = [IPERF_FIRST_SOCKET + i for i in range(n_flows)]
    is_sender = [f.get("direction") != "download" for f in flows]

    by = _per_second_bytes(result, n_flows, n_int) if n_flows else np.zeros((0, n_int))
    at, max_cwnd_of = _timeline_at(result, n_flows, ends, ["cwnd_bytes", "srtt_ms", "rttvar_ms", "retransmits"])
    cwnd, srtt, rttvar = at["cwnd_bytes"], at["srtt_ms"], at["rttvar_ms"]
    # Per-interval retransmits need a cumulative counter in the timeline; without one iperf3's
    # per-interval field is left out (as iperf3 does on a receiving client) rather than invented.
    cum_retx = at["retransmits"]
    retx = None
    if cum_retx is not None:
        filled = np.nan_to_num(cum_retx, nan=0.0)
        retx = np.diff(np.concatenate([np.zeros((n_flows, 1)), filled], axis=1), axis=1)

    # UDP: datagram counts as iperf3 reports them, and the datagram size to turn bytes into
    # packets (intervals) and packets into sent bytes (the core counts UDP in datagrams).
    cfg_flows = s.get("scenario_config", {}).get("flow", [])
    udp_pkt: dict[int, dict[str, Any]] = {}
    for fi, f in enumerate(flows):
        if tcp[fi]:
            continue
        packets = int(f.get("packets_sent") or 0)
        if "packets_lost" in f:
            lost = int(f["packets_lost"])
        else:
            lost = int(round(packets * float(f.get("loss_pct") or 0.0) / 100.0))
        got = int(f.get("packets_received", max(packets - lost, 0)))
        cfg = cfg_flows[fi] if fi < len(cfg_flows) else {}
        mtu = int(paths.get(f.get("path"), {}).get("mtu_bytes") or 1500)
        if cfg.get("packet_bytes"):
            size = float(cfg["packet_bytes"])
        elif got:
            size = f["bytes_delivered"] / got
        else:
            size = float(mtu - 28)  # the core's default payload: MTU - IPv4 - UDP headers
        sent = int(f["bytes_sent"]) if "bytes_sent" in f else int(round(packets * size))
        udp_pkt[fi] = {"packets": packets, "lost": lost, "size": size, "bytes_sent": sent}

    def interval(k: int) -> dict[str, Any]:
        secs = float(ends[k] - starts[k])
        streams = []
        for fi in range(n_flows):
            b = int(by[fi, k])
            st: dict[str, Any] = {
                "socket": sockets[fi],
                "start": _num(starts[k]),
                "end": _num(ends[k]),
                "seconds": secs,
                "bytes": b,
                "bits_per_second": b * 8 / secs if secs > 0 else 0.0,
            }
            if tcp[fi]:
                if retx is not None:
                    st["retransmits"] = int(retx[fi, k])
                st["snd_cwnd"] = _int_or_zero(cwnd[fi, k]) if cwnd is not None else 0
                st["rtt"] = _int_or_zero(srtt[fi, k] * 1000) if srtt is not None else 0  # µs
                if rttvar is not None:
                    st["rttvar"] = _int_or_zero(rttvar[fi, k] * 1000)
                path = paths.get(flows[fi].get("path"), {})
                st["pmtu"] = int(path.get("mtu_bytes") or 0)
            else:
                st["packets"] = int(round(b / udp_pkt[fi]["size"])) if udp_pkt[fi]["size"] else 0
            st["omitted"] = False
            st["sender"] = is_sender[fi]
            streams.append(st)
        total = sum(st["bytes"] for st in streams)
        ssum: dict[str, Any] = {
            "start": _num(starts[k]),
            "end": _num(ends[k]),
            "seconds": secs,
            "bytes": total,
            "bits_per_second": total * 8 / secs if secs > 0 else 0.0,
        }
        if retx is not None and any(tcp):
            ssum["retransmits"] = sum(st.get("retransmits", 0) for st in streams)
        if all_udp:
            ssum["packets"] = sum(st["packets"] for st in streams)
        ssum["omitted"] = False
        ssum["sender"] = not reverse
        return {"streams": streams, "sum": ssum}


    end_streams = []
    for fi, f in enumerate(flows):
        t0, t1 = _flow_window(f, duration)
        secs = t1 - t0
        sent = _bytes_sent(f, udp_pkt.get(fi))
        got = int(f.get("bytes_delivered") or 0)

        def rate(nbytes: int, secs: float = secs) -> float:
            return nbytes * 8 / secs if secs > 0 else 0.0

        base = {"socket": sockets[fi], "start": _num(t0), "end": _num(t1), "seconds": secs}
        if tcp[fi]:
            rtt = f.get("rtt_ms") or {}
            max_cwnd = 0
            if cwnd is not None and np.isfinite(max_cwnd_of[fi]):
                max_cwnd = int(max_cwnd_of[fi])
            sender = {
                **base,
                "bytes": sent,
                "bits_per_second": rate(sent),
                "retransmits": int(f.get("retransmits") or 0),
                "max_snd_cwnd": max_cwnd,
                "max_rtt": _int_or_zero(_ms_to_us(rtt.get("max"))),
                "min_rtt": _int_or_zero(_ms_to_us(rtt.get("min"))),
                "mean_rtt": _int_or_zero(_ms_to_us(rtt.get("mean"))),
                # iperf3 marks both halves with this end's role (a -R client writes false).
                "sender": is_sender[fi],
            }
            receiver = {**base, "bytes": got, "bits_per_second": rate(got), "sender": is_sender[fi]}
            end_streams.append({"sender": sender, "receiver": receiver})
        else:
            u = udp_pkt[fi]
            end_streams.append({"udp": {
                **base,
                "bytes": sent,
                "bits_per_second": rate(sent),
                "jitter_ms": float(f.get("jitter_ms") or 0.0),
                "lost_packets": u["lost"],
                "packets": u["packets"],
                "lost_percent": float(f.get("loss_pct") or 0.0),
                "out_of_order": int(f.get("out_of_order") or 0),
                "sender": is_sender[fi],
            }})

    whole = {"start": 0, "end": _num(duration), "seconds": duration}
    total_sent = sum(_bytes_sent(f, udp_pkt.get(fi)) for fi, f in enumerate(flows))
    total_got = sum(int(f.get("bytes_delivered") or 0) for f in flows)
    end: dict[str, Any] = {"streams": end_streams}
    if any(not t for t in tcp):
        # UDP summary as iperf3 prints it under end.sum (receiver-reported loss and jitter).
        udp_flows = [fi for fi in range(n_flows) if not tcp[fi]]
        pk = sum(udp_pkt[fi]["packets"] for fi in udp_flows)
        lost = sum(udp_pkt[fi]["lost"] for fi in udp_flows)
        ubytes = sum(udp_pkt[fi]["bytes_sent"] for fi in udp_flows)
        end["sum"] = {
            **whole,
            "bytes": ubytes,
            "bits_per_second": ubytes * 8 / duration if duration > 0 else 0.0,
            "jitter_ms": max((float(flows[fi].get("jitter_ms") or 0.0) for fi in udp_flows), default=0.0),
            "lost_packets": lost,
            "packets": pk,
            "lost_percent": (100.0 * lost / pk) if pk else 0.0,
            "sender": not reverse,
        }
    end["sum_sent"] = {
        **whole,
        "bytes": total_sent,
        "bits_per_second": total_sent * 8 / duration if duration > 0 else 0.0,
        **({"retransmits": sum(int(f.get("retransmits") or 0) for f in flows)} if any(tcp) else {}),
        "sender": not reverse,
    }
    end["sum_received"] = {
        **whole,
        "bytes": total_got,
        "bits_per_second": total_got * 8 / duration if duration > 0 else 0.0,
        "sender": not reverse,
    }
    # The simulator models no CPU; zeros keep tools that read these keys working.
    end["cpu_utilization_percent"] = {
        "host_total": 0.0, "host_user": 0.0, "host_system": 0.0,
        "remote_total": 0.0, "remote_user": 0.0, "remote_system": 0.0,
    }
    ccs = sorted({f["cc"] for f in flows if f.get("cc")})
    if len(ccs) == 1:
        end["sender_tcp_congestion"] = ccs[0]
        end["receiver_tcp_congestion"] = ccs[0]

    first_path = paths.get(flows[0].get("path"), {}) if flows else {}
    if all_udp:
        blksize = int(round(udp_pkt[0]["size"])) if udp_pkt else 1472
    else:
        blksize = IPERF_TCP_BLKSIZE
    path_index = {name: i for i, name in enumerate(paths)}
    start = {
        "connected": [
            {
                "socket": sockets[fi],
                # Made-up private addresses, one /24 per path, so per-path tools can group streams.
                "local_host": f"10.0.{path_index.get(f.get('path'), 0)}.2",
                "local_port": 50000 + fi,
                "remote_host": f"10.0.{path_index.get(f.get('path'), 0)}.1",
                "remote_port": 5201,
            }
            for fi, f in enumerate(flows)
        ],
        "version": f"mmpath {s.get('mmpath_version', '')} (iperf3 -J layout)",
        "system_info": f"mmpath simulator, scenario {s['scenario']}, seed {s['seed']}",
        # Simulated time starts at 0: the Unix epoch keeps the file deterministic for a given seed.
        "timestamp": {"time": "Thu, 01 Jan 1970 00:00:00 GMT", "timesecs": 0},
        "connecting_to": {"host": "10.0.0.1", "port": 5201},
        "cookie": _cookie(str(s["scenario"]), int(s["seed"])),
        "tcp_mss_default": int(next((m for f in flows if (m := _mss(f))), 0) or first_path.get("mss_bytes") or 0),
        "test_start": {
            "protocol": "UDP" if all_udp else "TCP",
            "num_streams": n_flows,
            "blksize": blksize,
            "omit": 0,
            "duration": _num(duration),
            "bytes": 0,
            "blocks": 0,
            "reverse": int(reverse),
            "tos": 0,
        },
    }
    doc = {"start": start, "intervals": None, "end": end, "title": f"mmpath {s['scenario']} seed {s['seed']}"}
    return doc, (interval(k) for k in range(n_int))


def _bytes_sent(flow: dict[str, Any], udp: dict[str, Any] | None) -> int:
    if udp is not None:
        return int(udp["bytes_sent"])
    if "bytes_sent" not in flow and flow.get("subflows"):
        # An MPTCP connection's own summary has no bytes_sent: what its subflows sent.
        return sum(int(sf.get("bytes_sent") or 0) for sf in flow["subflows"])
    return int(flow.get("bytes_sent") or 0)


def _mss(flow: dict[str, Any]) -> int:
    """A TCP flow's MSS; an MPTCP connection's is its first subflow's (the MP_CAPABLE one)."""
    if flow.get("mss_bytes"):
        return int(flow["mss_bytes"])
    return int(next((sf["mss_bytes"] for sf in flow.get("subflows") or [] if sf.get("mss_bytes")), 0))


def _ms_to_us(x: Any) -> float:
    return float("nan") if x is None else float(x) * 1000.0


# --------------------------------------------------------------------------- the folder


def safe_name(name: str, empty: str = "path") -> str:
    """A name (a path's, a variant's) as a file-name part: letters, digits, '-', '_', '.' kept, the
    rest '_'; `empty` for an empty name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or empty


def safe_dir_name(name: str) -> str:
    """A scenario name as a single folder name (names come from files; keep them harmless)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "scenario"


def check_out_folder(out: Path) -> None:
    """OutputError now, not after every run, when `out` cannot become the output folder: a file
    is in the way, or its parent cannot be created or written. Creates no folder but the parents."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"cannot write outputs to {out}: it exists and is not a folder")
    probe = out if out.is_dir() else out.parent
    above = probe
    while not above.exists() and above != above.parent:
        above = above.parent
    if above.exists() and not above.is_dir():
        raise OutputError(f"cannot create output folder {out}: {above} is a file, not a folder")
    try:
        probe.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryDirectory(dir=probe).cleanup()
    except OSError as e:
        raise OutputError(f"cannot create output folder {out}: {e.strerror or e}") from None


def _remove_orphans(out: Path) -> None:
    """Staging folders of `out` left by a process that is gone (killed outright mid-run: nothing
    could clean up after it); their names carry the writer's pid. Another live writer's stays."""
    for old in out.parent.glob(f".{glob.escape(out.name)}.tmp-*-*"):
        pid = old.name[len(out.name) + 6:].split("-", 1)[0]
        if not pid.isdigit() or not old.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except OSError:  # alive, another user's
            pass


@contextmanager
def staged_folder(out: Path, stale: tuple[str, ...] = ()) -> Iterator[Path]:
    """A sibling temporary folder to write a result into. On success each of its entries
    replaces the same name in `out` (created if needed) by a rename on the same file system, so
    readers never see a half-written file; on any failure nothing of it is left behind and `out`
    is as it was. File-system errors become one OutputError naming the folder.

    stale  names or glob patterns of files the writer owns but does not always write (a
           sweep's sweep.png, a run's channel-*.csv): one that this result did not write is
           removed from `out`, so an earlier result's copy does not stay beside this one's
           files as if it were theirs."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _remove_orphans(out)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
    except OSError as e:
        raise OutputError(f"cannot create output folder {out}: {e.strerror or e}") from None
    try:
        yield tmp
        out.mkdir(parents=True, exist_ok=True)
        for pattern in stale:
            for old in out.glob(pattern):
                if not (tmp / old.name).exists() and old.is_file():
                    old.unlink()
        for f in sorted(tmp.iterdir()):
            dest = out / f.name
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            os.replace(f, dest)
    except OSError as e:
        raise OutputError(f"cannot write outputs to {out}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stale_files(out: Path) -> tuple[str, ...]:
    """Files a run writes only sometimes (a channel record per path, a plot with data, the
    report): an earlier run's copy in the same folder goes, so e.g. one scenario's power.png
    or channel-11ac.csv does not stay beside another's results. Only in a folder that holds a
    run already (its summary.json): a user's own files elsewhere are never touched."""
    return ("channel-*.csv", "report.html", ".intervals.parquet", *PLOT_FILES) if (out / "summary.json").is_file() else ()


def write_run_files(result: "Result", tmp: Path, report: bool = True) -> None:
    """Every output file of a run into the (staging) folder `tmp`; a timeline streamed there
    already stays as it is."""
    (tmp / "summary.json").write_text(summary_json(result), encoding="utf-8")
    spooled = getattr(result, "_intervals", None)
    if isinstance(spooled, TimelineFile):
        # The intervals streamed to a file (INTERVALS_FILE), for the Result to read back: copied
        # beside the rest, unless they were written here.
        dest = tmp / spooled.path.name
        if not dest.exists() or not dest.samefile(spooled.path):
            shutil.copyfile(spooled.path, dest)
    write_intervals_csv(result, tmp / "intervals.csv")
    write_timeline_parquet(result, tmp / "timeline.parquet")
    write_iperf3_json(result, tmp / "iperf3.json")
    for path_name, csv_text in sorted(getattr(result, "channel", {}).items()):
        (tmp / f"channel-{safe_name(path_name)}.csv").write_text(csv_text, encoding="utf-8")
    if report:
        write_report(result, tmp)


def write_outputs(result: "Result", out_dir: str | os.PathLike, report: bool = True) -> Path:
    """Write every output file of a run into out_dir (created if needed); return its path."""
    out = Path(out_dir)
    with staged_folder(out, stale=stale_files(out)) as tmp:
        write_run_files(result, tmp, report=report)
    return out
