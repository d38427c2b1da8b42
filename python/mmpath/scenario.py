"""Find and load scenarios, apply ``--set`` overrides, validate them in the core.

Python only parses TOML and applies overrides; every default and limit lives in the Rust validator
(``_core.normalize_scenario``), so this module never checks field names, types or ranges itself.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import importlib.resources
import json
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import _core
from .errors import OverrideError, ScenarioError, ScenarioNotFoundError
from .spelling import CLI, Spelling

# A scenario as accepted by load_scenario / mmpath.run.
ScenarioSpec = str | os.PathLike | Mapping[str, Any]
# Overrides: ["flow.0.cc=reno", ...] (CLI style, values parsed as TOML) or {"flow.0.cc": "reno"}
# (API style, values used as they are).
Overrides = Iterable[str] | Mapping[str, Any] | None


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: the normalized dict (every default filled in) and its JSON."""

    name: str
    config: dict[str, Any]
    json: str
    source: str  # file path, "NAME.toml (bundled)" or "<dict>", for error messages
    # [[variant]] entries: (name, overrides) pairs `mmpath run` compares side by side
    # (compare.py); the scenario itself is the base they override.
    variants: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()

    @property
    def seed(self) -> int:
        return int(self.config["seed"])

    @property
    def duration_s(self) -> float:
        return float(self.config["duration_s"])


# --------------------------------------------------------------------------- bundled scenarios


def _package_scenario_dir():
    """`mmpath/scenarios` shipped as package data (installed wheel), or None."""
    try:
        d = importlib.resources.files("mmpath") / "scenarios"
        return d if d.is_dir() else None
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return None


def _checkout_scenario_dir() -> Path | None:
    """`<repo>/scenarios` when running from a source checkout (python/mmpath -> ../../scenarios)."""
    d = Path(__file__).resolve().parent.parent.parent / "scenarios"
    return d if d.is_dir() else None


def bundled_scenarios() -> dict[str, Any]:
    """Name -> file (a Path or importlib Traversable) of every bundled scenario, sorted by name.

    Package data wins over the checkout folder, so an installed mmpath never picks up files from
    some unrelated directory that happens to sit two levels above it.
    """
    found: dict[str, Any] = {}
    for d in (_package_scenario_dir(), _checkout_scenario_dir()):
        if d is None:
            continue
        for entry in d.iterdir():
            if entry.name.endswith(".toml") and entry.is_file():
                found.setdefault(entry.name[: -len(".toml")], entry)
    return dict(sorted(found.items()))


def _not_found(spec: str) -> ScenarioNotFoundError:
    names = ", ".join(bundled_scenarios()) or "none found"
    if Path(spec).is_dir():
        # It exists: "not found" would send the user looking for it.
        return ScenarioNotFoundError(f"{spec} is a folder, not a scenario file: give a .toml file in it or a "
                                     f"bundled scenario ({names})")
    return ScenarioNotFoundError(f"scenario file not found: {spec} (bundled scenarios: {names})")


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # tomllib's message already ends with "(at line N, column M)"; keep it to one line.
        msg = " ".join(str(e).split())
        raise ScenarioError(f"{where}: invalid TOML: {msg}") from None


def read_scenario_file(spec: str | os.PathLike) -> tuple[dict[str, Any], str]:
    """Parse a scenario given as a path or a bundled name. Returns (raw dict, source label)."""
    text_spec = os.fspath(spec)
    path = Path(text_spec)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ScenarioError(f"{text_spec}: cannot read scenario file: {e}") from None
        doc = _parse_toml(text, text_spec)
        doc.setdefault("name", path.stem)
        resolve_trace_files(doc, path.resolve().parent)
        return doc, text_spec
    # A bare name ("default", "blockage") selects a bundled scenario; anything that looks like a
    # path (has a separator or a .toml suffix) must exist as a file.
    looks_like_path = path.suffix == ".toml" or os.sep in text_spec or "/" in text_spec
    bundled = bundled_scenarios()
    if not looks_like_path and text_spec in bundled:
        entry = bundled[text_spec]
        source = f"{entry.name} (bundled)"
        doc = _parse_toml(entry.read_text(encoding="utf-8"), source)
        doc.setdefault("name", text_spec)
        resolve_trace_files(doc, Path(str(entry)).parent)
        return doc, source
    raise _not_found(text_spec)


def resolve_trace_files(doc: dict[str, Any], base: Path) -> None:
    """Make `path.N.trace.file` absolute, relative to the scenario file's folder, so a scenario
    and its traces move together and the core (which reads the file) needs no working dir. The
    same for the trace files a `[[variant]]`'s `set` names: they are written in the scenario file
    too (a `--set` on the command line is a path from the current directory, as any argument)."""
    paths = doc.get("path")
    if isinstance(paths, list):  # else the validator reports the shape error
        for p in paths:
            _resolve_path_entry(p, base)
    variants = doc.get("variant")
    if not isinstance(variants, list):
        return
    for v in variants:
        sets = v.get("set") if isinstance(v, dict) else None
        if not isinstance(sets, dict):
            continue
        for key, value in sets.items():
            sets[key] = resolve_override_files(str(key), value, base)


def resolve_override_files(key: str, value: Any, base: Path) -> Any:
    """The value of override `key` with any trace file it names taken from `base` (the folder
    of the file the override is written in: a `[[variant]]`'s `set`, a sweep's `[set]` or
    `[grid]`): `path.N.trace.file`, or a `path.N.trace`, `path.N` or `path` table holding one.
    Tables are changed in place; the value is returned for the `file` key itself."""
    parts = key.split(".")
    if len(parts) == 4 and parts[0] == "path" and parts[2:] == ["trace", "file"]:
        return _from(base, value)
    if len(parts) == 3 and parts[0] == "path" and parts[2] == "trace" and isinstance(value, dict):
        if "file" in value:
            value["file"] = _from(base, value["file"])
    elif len(parts) == 2 and parts[0] == "path":
        _resolve_path_entry(value, base)
    elif parts == ["path"] and isinstance(value, list):
        for p in value:
            _resolve_path_entry(p, base)
    return value


def _resolve_path_entry(p: Any, base: Path) -> None:
    trace = p.get("trace") if isinstance(p, dict) else None
    if isinstance(trace, dict) and "file" in trace:
        trace["file"] = _from(base, trace["file"])


def _from(base: Path, file: Any) -> Any:
    """`file` taken from `base` when it is a relative path, `~` expanded (anything else is left
    for the validator to report)."""
    if not isinstance(file, str) or not file:
        return file
    f = Path(file).expanduser()
    return str(f) if f.is_absolute() else str(base / f)


# --------------------------------------------------------------------------- overrides


def _toml_value(raw: str) -> Any:
    """Parse VALUE of --set KEY=VALUE as a TOML value ("5", "true", "[1, 2]", "\"x\"").

    Anything that is not valid TOML is taken as a plain string, so `--set flow.0.cc=reno` works
    without quoting. TOML dates/times have no JSON form, so they stay strings too.
    """
    try:
        value = tomllib.loads("v = " + raw)["v"]
    except tomllib.TOMLDecodeError:
        return raw
    if isinstance(value, (_dt.date, _dt.time, _dt.datetime)):
        return raw
    return value


def parse_overrides(overrides: Overrides, spelling: Spelling = CLI) -> list[tuple[str, Any]]:
    """Normalize either override style to an ordered list of (dotted key, value). `spelling`:
    whether errors name the command line's ``--set`` or the Python API's ``overrides``."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        pairs = [(str(k), v) for k, v in overrides.items()]
    elif isinstance(overrides, (str, bytes)):
        raise TypeError("overrides must be a list of 'KEY=VALUE' strings or a dict, not a string")
    else:
        pairs = []
        for item in overrides:
            if not isinstance(item, str):
                raise TypeError(f"overrides: expected 'KEY=VALUE' strings, got {item!r}")
            key, sep, raw = item.partition("=")
            if not sep:
                if spelling.cli:
                    raise OverrideError(
                        f"--set {item}: expected KEY=VALUE (e.g. --set duration_s=5 or --set flow.0.cc=reno)"
                    )
                raise OverrideError(f"overrides: {item!r}: expected 'KEY=VALUE' (e.g. 'duration_s=5'), "
                                    "or give a dict ({'duration_s': 5})")
            pairs.append((key.strip(), _toml_value(raw.strip())))
    for key, _ in pairs:
        if not key:
            raise OverrideError("--set: empty KEY in KEY=VALUE (e.g. --set duration_s=5)" if spelling.cli else
                                "overrides: an empty key (keys are dotted field paths, e.g. 'duration_s' or 'flow.0.cc')")
        if any(part.strip() == "" for part in key.split(".")):
            raise OverrideError(f"{spelling.override(key)}: empty part in the dotted path (e.g. flow.0.cc)")
    return pairs


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


def _entries(n: int) -> str:
    if n == 0:
        return "no entries"
    if n == 1:
        return "1 entry (index 0)"
    return f"{n} entries (index 0-{n - 1})"


def apply_override(doc: dict[str, Any], key: str, value: Any, spelling: Spelling = CLI) -> None:
    """Set doc[dotted.key] = value in place.

    Missing table keys are created (the Rust validator then names unknown fields); list indexes
    must already exist, because silently growing a list of paths or flows is never what a user
    means.
    """
    parts = key.split(".")
    named = spelling.override(key)
    cur: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[:i]) or "the scenario"
        if isinstance(cur, list):
            if not part.isdigit():
                raise OverrideError(
                    f"{named}: `{where}` is a list; expected a number after it, got `{part}`"
                )
            idx = int(part)
            if idx >= len(cur):
                raise OverrideError(f"{named}: `{where}` has {_entries(len(cur))}")
            if last:
                cur[idx] = value
            else:
                cur = cur[idx]
        elif isinstance(cur, dict):
            if last:
                cur[part] = value
            elif part in cur:
                cur = cur[part]
            else:
                if parts[i + 1].isdigit():
                    here = ".".join(parts[: i + 1])
                    raise OverrideError(f"{named}: the scenario has no `{here}` list to index")
                cur[part] = {}
                cur = cur[part]
        else:
            raise OverrideError(
                f"{named}: `{where}` is {_kind(cur)}, not a table or list, so it has no `{part}`"
            )


# --------------------------------------------------------------------------- loading


def _json_default(value: Any) -> Any:
    # TOML dates/times inside a scenario file: hand them to the validator as ISO strings.
    if isinstance(value, (_dt.date, _dt.time, _dt.datetime)):
        return value.isoformat()
    raise TypeError(f"cannot express {type(value).__name__} {value!r} in a scenario")


def _blame(message: str, overridden: Mapping[str, str]) -> str:
    """The blame suffix (`overridden`: field -> spelling.blame's " (from --set KEY)" or the
    Python API's words) when the core's error names a field an override set, else ""."""
    field = message.split(":", 1)[0].strip()
    for key, suffix in overridden.items():
        if field == key or field.startswith(key + ".") or key.startswith(field + "."):
            return suffix
    return ""


def _say_what_is_allowed(doc: Mapping[str, Any], msg: str) -> str:
    """The core's message, completed where it leaves out what a scenario file may give: a
    top-level field's list gains `variant` (taken out before the core sees the file,
    _pop_variants), and an integer field given a fraction names the range the field takes
    (`mtu_bytes = 1500.5`: 576..65535) instead of its type's (0..4294967295): the core says
    that range when the field is given its type's largest value, which is tried here."""
    field, _, rest = msg.partition(": ")
    if "." not in field and "unknown field" in rest and "expected one of" in rest and "`variant`" not in rest:
        return f"{msg}, `variant`"
    m = re.fullmatch(r"invalid type: number `([^`]*)`, expected an integer from 0 to (\d+)", rest)
    if not m:
        return msg
    probe = copy.deepcopy(dict(doc))
    try:
        apply_override(probe, field, int(m.group(2)))
        _core.normalize_scenario(json.dumps(probe, default=_json_default))
    except Exception as e:  # noqa: BLE001 - any failure of the probe leaves the message as it was
        said = re.fullmatch(re.escape(field) + r": must be between (\d+) and (\d+) \(got \d+\)", " ".join(str(e).split()))
        if said:
            return f"{field}: must be an integer from {said.group(1)} to {said.group(2)} (got {m.group(1)})"
    return msg


def normalize(doc: Mapping[str, Any], source: str, overridden: Mapping[str, str] | None = None) -> Scenario:
    """Validate a raw scenario dict in the core and return the normalized Scenario."""
    core = _core
    try:
        raw_json = json.dumps(doc, default=_json_default)
    except (TypeError, ValueError) as e:
        raise ScenarioError(f"{source}: {e}") from None
    try:
        norm_json = core.normalize_scenario(raw_json)
    except core.ScenarioError as e:
        msg = _say_what_is_allowed(doc, " ".join(str(e).split()))
        raise ScenarioError(f"{source}: {msg}{_blame(msg, overridden or {})}") from None
    config = json.loads(norm_json)
    name = str(config.get("name") or "scenario")
    return Scenario(name=name, config=config, json=norm_json, source=source)


def load_scenario(spec: ScenarioSpec, overrides: Overrides = None, *, seed: int | None = None,
                  spelling: Spelling = CLI) -> Scenario:
    """Load a scenario from a .toml path, a bundled name or a dict; apply overrides; validate.

    ``seed`` (``--seed``) is applied last as the override ``seed=N``, so the normalized config
    always records the seed that actually ran. ``spelling`` (spelling.py): whether errors name
    the command line's flags or the Python API's arguments.
    """
    if isinstance(spec, Mapping):
        doc, source = copy.deepcopy(dict(spec)), "<dict>"
    elif isinstance(spec, (str, os.PathLike)):
        doc, source = read_scenario_file(spec)
    else:
        raise TypeError(f"scenario must be a path, a bundled scenario name or a dict, not {type(spec).__name__}")
    pairs = parse_overrides(overrides, spelling)
    # Which option set each field, so a core error about it can say so.
    overridden = {key: spelling.blame(key) for key, _ in pairs}
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ScenarioError(f"seed: must be an integer in 0..{2**64 - 1} (got {seed!r})")
        # Both given: one would silently win over the other.
        twice = [v for k, v in pairs if k == "seed"]
        if twice:
            raise ScenarioError(f"seed: given twice, as the seed ({seed}) and as the override seed={twice[-1]!r}; "
                                "give only one")
        pairs.append(("seed", seed))
        overridden["seed"] = f" (from {spelling.seed})"
    variants = _pop_variants(doc, source)
    for key, value in pairs:
        apply_override(doc, key, value, spelling)
    sc = normalize(doc, source, overridden)
    if variants:
        sc = Scenario(name=sc.name, config=sc.config, json=sc.json, source=sc.source, variants=variants)
    return sc


def _pop_variants(doc: dict[str, Any], source: str) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """Takes the optional ``[[variant]]`` list out of a raw scenario: each entry is a ``name``
    and a ``set`` table of overrides (the ``--set`` keys), compared side by side by `mmpath run`."""
    raw = doc.pop("variant", None)
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(f"{source}: variant: must be a non-empty list of tables ([[variant]])")
    out = []
    for i, v in enumerate(raw):
        if not isinstance(v, Mapping):
            raise ScenarioError(f"{source}: variant.{i}: must be a table with `name` and `set`")
        extra = sorted(set(v) - {"name", "set"})
        if extra:
            raise ScenarioError(f"{source}: variant.{i}.{extra[0]}: unknown field (allowed: name, set)")
        name = v.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{source}: variant.{i}.name: required, a non-empty string")
        if any(name == n for n, _ in out):
            raise ScenarioError(f"{source}: variant.{i}.name: duplicate variant name {name!r}")
        sets = v.get("set", {})
        if not isinstance(sets, Mapping):
            raise ScenarioError(f"{source}: variant.{i}.set: must be a table of overrides (\"flow.0.cc\" = \"reno\")")
        out.append((name, tuple((str(k), val) for k, val in sets.items())))
    return tuple(out)


def describe(entry: Any) -> str:
    """One-line description of a bundled scenario file (for `mmpath scenarios`)."""
    try:
        doc = tomllib.loads(entry.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return f"(unreadable: {' '.join(str(e).split())})"
    return " ".join(str(doc.get("description", "")).split())


# --------------------------------------------------------------------------- variants
# (`mmpath run --variant`, mmpath.run(variant=...), the comparison of every variant: compare.py)


def variant_scenarios(base: Scenario, spec: ScenarioSpec, overrides: Overrides = None,
                      seed: int | None = None, spelling: Spelling = CLI) -> list[tuple[str, Scenario]]:
    """Each variant as a validated Scenario: its overrides first, then the user's (which win)."""
    user = dict(parse_overrides(overrides, spelling))
    out = []
    for name, pairs in base.variants:
        merged = {**dict(pairs), **user}
        try:
            sc = load_scenario(spec, merged, seed=seed, spelling=spelling)
        except ScenarioError as e:
            # load_scenario blames every override on the user's; say when the variant set it.
            msg = str(e)
            for key in merged:
                blame = spelling.blame(key)
                if key not in user and msg.endswith(blame):
                    msg = f"{msg[:-len(blame)]} (from the variant's set {key})"
                    break
            raise ScenarioError(f"variant {name!r}: {msg}") from None
        out.append((name, sc))
    return out


def one_variant(spec: ScenarioSpec, overrides: Overrides = None, seed: int | None = None,
                variant: str = "", spelling: Spelling = CLI) -> Scenario:
    """The scenario's variant named `variant` as a plain scenario: its overrides, then the
    user's. Only that variant is loaded, so a user override that suits it alone is fine.
    ScenarioError when the scenario has no variants or none of that name."""
    # The base only lists the variants: the user's overrides are checked on the variant they
    # apply to (one that only the variant allows, e.g. max_rates_mbps beside its
    # scheduler = "energy", would fail on the base).
    base = load_scenario(spec, None, seed=seed, spelling=spelling)
    names = [n for n, _ in base.variants]
    named = spelling.variant(variant)
    if not names:
        raise ScenarioError(f"{named}: {base.source} has no [[variant]] entries ({spelling.no_variant})")
    if variant not in names:
        raise ScenarioError(f"{named}: no such variant in {base.source} (allowed: {', '.join(names)})")
    picked = dataclasses.replace(base, variants=tuple(v for v in base.variants if v[0] == variant))
    sc = variant_scenarios(picked, spec, overrides, seed, spelling)[0][1]
    return dataclasses.replace(sc, variants=())
