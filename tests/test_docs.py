"""The documentation against the code: every scenario field the core accepts is in
docs/scenario.md (in the right table, and nothing the core refuses is), every output column and
summary key the code writes is in docs/outputs.md, and the docs' Python and TOML examples run."""

from __future__ import annotations

import json
import re

import pytest

import mmpath
from mmpath import _core
from mmpath.scenario import load_scenario

from conftest import REPO

SCENARIO_MD = (REPO / "docs" / "scenario.md").read_text()
OUTPUTS_MD = (REPO / "docs" / "outputs.md").read_text()


def _spans(md: str) -> str:
    """The text of a Markdown file's code: its fenced blocks and its `code spans` (fences are
    taken out first, or their backticks would pair with the spans')."""
    fenced = re.findall(r"```[a-z]*\n(.*?)```", md, re.S)
    rest = re.sub(r"```.*?```", " ", md, flags=re.S)
    return " ".join(fenced + re.findall(r"`([^`\n]+)`", rest))

WIRED = {"rate_mbps": 100.0}
FLOW: dict = {}


def _probe(doc: dict) -> list[str]:
    """The fields the core's struct at the unknown field `zzz` accepts, from serde's own error
    ("unknown field `zzz`, expected one of `a`, `b`" or "expected `a`")."""
    with pytest.raises(_core.ScenarioError) as e:
        _core.normalize_scenario(json.dumps(doc))
    msg = str(e.value)
    assert "unknown field `zzz`" in msg, msg
    return re.findall(r"`([^`]+)`", msg.split("expected", 1)[1])


def _scenario(path: dict | None = None, flow: dict | None = None, **top) -> dict:
    return {"path": [{**WIRED, **(path or {})}], "flow": [{**FLOW, **(flow or {})}], **top}


RADIO = {"technology": "11ad"}
MPTCP = {"kind": "mptcp"}

# Each section of the scenario format: a document with an unknown field `zzz` in that section.
SECTIONS = {
    "top": _scenario(zzz=1),
    "backbone": _scenario(backbone={"zzz": 1}),
    "timeline": _scenario(timeline={"zzz": 1}),
    "path": _scenario(path={"zzz": 1}),
    "path.trace": _scenario(path={"trace": {"file": "x.csv", "zzz": 1}}),
    "path.schedule": _scenario(path={"schedule": [{"t_s": 1.0, "zzz": 1}]}),
    "path.event": {"path": [{**RADIO, "event": [{"kind": "blockage", "t_s": 1.0, "duration_s": 1.0, "zzz": 1}]}],
                   "flow": [{}]},
    "path.interferer": {"path": [{**RADIO, "interferer": [{"channel": "same", "zzz": 1}]}], "flow": [{}]},
    "flow": _scenario(flow={"zzz": 1}),
    "flow.tcp": _scenario(flow={"tcp": {"zzz": 1}}),
    "flow.amuse": _scenario(flow={**MPTCP, "scheduler": "amuse", "amuse": {"zzz": True}}),
    "flow.prio": _scenario(flow={**MPTCP, "prio": [{"t_s": 1.0, "path": "path0", "backup": True, "zzz": 1}]}),
}
# Taken by the Python front end before the core sees the scenario (scenario.py `_pop_variants`).
FRONT_END_FIELDS = {"top": {"variant"}}


def _accepted(section: str) -> set[str]:
    return set(_probe(SECTIONS[section])) | FRONT_END_FIELDS.get(section, set())


def _doc_tables() -> dict[str, set[str]]:
    """Section -> the field names of docs/scenario.md's tables marked `<!-- fields: SECTION -->`."""
    out: dict[str, set[str]] = {}
    lines = SCENARIO_MD.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| field | type | default | meaning |"):
            m = re.match(r"<!-- fields: (\S+)", lines[i - 1])
            assert m, f"docs/scenario.md line {i + 1}: a field table without a `<!-- fields: SECTION -->` marker"
            names = out.setdefault(m.group(1), set())
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                first = row.split("|")[1]
                # `name`, `[backbone]`, `[[path]]`, `[flow.tcp]`, `start_s`, `stop_s`
                names |= {n.strip("[]").split(".")[-1] for n in re.findall(r"`([^`]+)`", first)}
    return out


def test_every_field_table_matches_the_core():
    tables = _doc_tables()
    assert set(tables) <= set(SECTIONS), set(tables) - set(SECTIONS)
    for section, documented in tables.items():
        accepted = _accepted(section)
        assert documented - accepted == set(), f"{section}: documented but refused by the core"
        assert accepted - documented == set(), f"{section}: accepted by the core but not in its table"


@pytest.mark.parametrize("section", [s for s in SECTIONS if s not in ("top",)])
def test_every_field_is_named_in_scenario_md(section):
    # Sections without a table of their own (schedule steps, events, AMuSe, MP_PRIO) describe
    # their fields in prose or in a `kind` table: each name must appear in a code span.
    spans = _spans(SCENARIO_MD)
    missing = [f for f in _accepted(section) if not re.search(rf"\b{re.escape(f)}\b", spans)]
    assert missing == [], f"{section}: {missing} not in docs/scenario.md"


def test_every_device_preset_is_named_in_scenario_md():
    spans = _spans(SCENARIO_MD)
    for tech in ("11ad", "11ac", "11n"):
        with pytest.raises(_core.ScenarioError) as e:
            _core.normalize_scenario(json.dumps({"path": [{"technology": tech, "device": "zzz"}], "flow": [{}]}))
        known = re.search(r"known: ([^)]*)\)", str(e.value)).group(1).split(", ")
        missing = [d for d in known if not re.search(rf"(?<![\w-]){re.escape(d)}(?![\w-])", spans)]
        assert missing == [], f"{tech} presets not in docs/scenario.md: {missing}"


def test_scenario_md_toml_examples_validate():
    blocks = re.findall(r"```toml\n(.*?)```", SCENARIO_MD, re.S)
    import tomllib

    full = [b for b in blocks if "[[flow]]" in b]
    assert full, "docs/scenario.md has a complete example scenario"
    for b in full:
        load_scenario(tomllib.loads(b))
    for b in blocks:
        if "[[variant]]" in b and "[[flow]]" not in b:  # a variant snippet: on the default scenario
            base = tomllib.loads((REPO / "scenarios" / "default.toml").read_text())
            base["variant"] = tomllib.loads(b)["variant"]
            assert load_scenario(base).variants


# --------------------------------------------------------------------------- outputs.md


def _table_after(heading: str) -> list[str]:
    """First-column names of the first table after `heading` in docs/outputs.md."""
    lines = OUTPUTS_MD.splitlines()
    i = lines.index(heading)
    while not lines[i].startswith("|"):
        i += 1
    names = []
    for row in lines[i + 2:]:
        if not row.startswith("|"):
            break
        names += re.findall(r"`([^`]+)`", row.split("|")[1])
    return names


@pytest.fixture(scope="module")
def runs():
    """Small runs that between them write every kind of flow, path and meter."""
    tcp_udp = mmpath.run({
        "duration_s": 0.5,
        "path": [{"name": "w", "rate_mbps": 200.0}, {"name": "r", "technology": "11ad"}],
        "flow": [{"name": "t", "path": "w"}, {"name": "u", "kind": "udp", "path": "r", "rate_mbps": 50.0}],
    })
    mptcp = mmpath.run("phone-energy", variant="energy", overrides={"duration_s": 0.5})
    return [tcp_udp, mptcp]


def test_timeline_and_intervals_columns_are_documented_in_order(runs):
    for res in runs:
        assert _table_after("## timeline.parquet") == list(res.timeline.columns)
        assert _table_after("## intervals.csv") == list(res.intervals.columns)
        assert _table_after("## Link events (Result.events)") == list(res.events.columns)


def test_summary_top_level_keys_are_documented_in_order(runs):
    for res in runs:
        assert _table_after("## summary.json") == list(res.summary)


def test_every_summary_key_is_documented(runs):
    spans = _spans(OUTPUTS_MD)
    keys: set[str] = set()

    def walk(obj, depth=0):
        if isinstance(obj, dict):
            for k, v in obj.items():
                keys.add(k)
                if depth < 4 and k not in ("scenario_config", "detail"):
                    walk(v, depth + 1)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, depth)

    for res in runs:
        s = {k: v for k, v in res.summary.items() if k != "scenario_config"}
        walk(s)
    missing = sorted(k for k in keys if not re.search(rf"\b{re.escape(k)}\b", spans))
    assert missing == [], f"summary.json keys not in docs/outputs.md: {missing}"


# --------------------------------------------------------------------------- the Python examples


def _python_blocks(path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_schedulers_md_example_runs(monkeypatch):
    # The example as written, on a 2 s scenario (the bundled one is 12 s, ~8 s of Python calls).
    real_run = mmpath.run

    def short_run(*args, **kw):
        kw["overrides"] = {"duration_s": 2.0, **(kw.get("overrides") or {})}
        return real_run(*args, **kw)

    monkeypatch.setattr(mmpath, "run", short_run)
    (block,) = _python_blocks(REPO / "docs" / "schedulers.md")
    ns: dict = {}
    exec(compile(block, "docs/schedulers.md", "exec"), ns)
    assert ns["res"].summary["flows"][0]["scheduler"] == "prefer-11ad"


def test_readme_python_example_runs():
    # README's snippet, less its last call (MyScheduler is the reader's own, as the comment says).
    text = (REPO / "README.md").read_text()
    snippet = re.search(r"From Python:\n\n((?:    .*\n)+)", text).group(1)
    lines = [line[4:] for line in snippet.splitlines() if "MyScheduler" not in line]
    lines = [line for line in lines if not line.lstrip().startswith("#")]
    ns: dict = {}
    exec(compile("\n".join(lines), "README.md", "exec"), ns)
    assert ns["res"].summary["seed"] == 3
    assert ns["res"].summary["flows"][0]["scheduler"] == "musher"
