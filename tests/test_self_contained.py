"""The repository stands on its own: no tracked file cites a document a clone does not have (the
design notes and seed papers the project was started from lived outside it), and every section of
docs/facts.md that code cites by name exists.

The patterns are built from pieces so that this file does not match them itself."""

from __future__ import annotations

import re
import subprocess

import pytest

from conftest import REPO

_DOTS = "." * 2
_SHARED = "shared"
# What a citation of the outside documents looks like: a path up and out of the repository, the
# design and seed folders, and the design notes by name (upper case: docs/facts.md is ours).
FORBIDDEN = (
    _DOTS + "/" + _SHARED,
    _SHARED + "/" + "design",
    _SHARED + "/" + "seeds",
    "FACTS" + ".md",
    "TARGETS" + ".md",
    "INTERFACE" + ".md",
    "ARCHITECTURE" + ".md",
)
FACTS_MD = REPO / "docs" / "facts.md"
# A citation of one section of docs/facts.md: the path, a space, then the heading in double quotes.
SECTION_CITATION = re.compile(r"docs/facts\.md \"([^\"\n]+)\"")


def _tracked_text_files() -> dict[str, str]:
    """Path -> text of every tracked file that is text (no NUL byte, valid UTF-8)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    files: dict[str, str] = {}
    for name in out.decode().split("\0"):
        path = REPO / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            files[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return files


def _headings(md: str) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6} +(.+?) *$", md, re.M)}


def offending_lines(files: dict[str, str]) -> list[str]:
    """`path:line: text` of every line that cites an outside document."""
    bad = []
    for name, text in sorted(files.items()):
        for no, line in enumerate(text.splitlines(), 1):
            if any(p in line for p in FORBIDDEN):
                bad.append(f"{name}:{no}: {line.strip()[:160]}")
    return bad


def dangling_section_citations(files: dict[str, str], facts_md: str) -> list[str]:
    """`path:line: "SECTION"` of every section citation of docs/facts.md whose heading does not exist."""
    headings = _headings(facts_md)
    bad = []
    for name, text in sorted(files.items()):
        if name == "docs/facts.md":
            continue
        for no, line in enumerate(text.splitlines(), 1):
            for m in SECTION_CITATION.finditer(line):
                if m.group(1) not in headings:
                    bad.append(f'{name}:{no}: "{m.group(1)}"')
    return bad


def test_no_tracked_file_cites_documents_outside_the_repository():
    bad = offending_lines(_tracked_text_files())
    assert bad == [], (
        "these lines cite documents a clone of the repository does not have; cite docs/facts.md "
        "(facts and the papers' references), docs/reproduce.md (the claims and criteria) or the "
        "paper's full reference instead:\n" + "\n".join(bad))


def test_every_cited_section_of_facts_md_exists():
    files = _tracked_text_files()
    cited = [m.group(1) for text in files.values() for m in SECTION_CITATION.finditer(text)]
    assert cited, "the code cites sections of docs/facts.md by heading; none found: is the pattern stale?"
    bad = dangling_section_citations(files, FACTS_MD.read_text())
    assert bad == [], "docs/facts.md has no section with these headings:\n" + "\n".join(bad)


def test_facts_md_lists_the_five_seed_papers():
    text = FACTS_MD.read_text()
    assert "## Sources" in text.splitlines()
    sources = text.split("## Sources", 1)[1]
    for n in range(5):
        assert f"**seed 00{n}:**" in sources, f"seed 00{n} has no entry in docs/facts.md, Sources"


def test_the_checks_catch_a_planted_citation():
    # The two checks above on made-up files: each finds what it is for, and passes clean text.
    planted = {
        "a.rs": "// see " + "FACTS" + ".md for the rate\nfn f() {}\n",
        "b.py": '"""Criteria follow ' + _DOTS + "/" + _SHARED + "/design/x.md" + '"""\n',
        "c.md": "Rates: docs/facts.md" + ' "No Such Section".\n',
        "d.md": "Rates: docs/facts.md" + ' "802.11ad (DMG) PHY".\n',
    }
    assert [line.split(":")[0] for line in offending_lines(planted)] == ["a.rs", "b.py"]
    assert dangling_section_citations(planted, FACTS_MD.read_text()) == ['c.md:1: "No Such Section"']


def test_reproduce_md_lists_every_claim_with_its_text():
    # docs/reproduce.md holds the claims (the code's criteria print with the results): each
    # registered claim has its own `#### ID` entry whose text is the claim as registered.
    from mmpath.reproduce import catalog, registry  # noqa: F401 (catalog registers every claim)

    md = (REPO / "docs" / "reproduce.md").read_text()
    entries = dict(re.findall(r"^#### (\S+)\n\n- \*\*Claim:\*\* (.*?)\n- \*\*", md, re.M | re.S))
    claims = registry.CLAIMS.values() if isinstance(registry.CLAIMS, dict) else registry.CLAIMS
    missing = [c.id for c in claims if c.id not in entries]
    assert missing == [], f"claims without an entry in docs/reproduce.md: {missing}"
    differ = [c.id for c in claims if " ".join(entries[c.id].split()) != " ".join(c.claim.split())]
    assert differ == [], f"docs/reproduce.md states these claims otherwise than the code: {differ}"
