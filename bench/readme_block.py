"""Rewrites one marked block of bench/README.md (the benches' --update-readme)."""

from __future__ import annotations

from pathlib import Path


def replace_block(readme: Path, start: str, end: str, body: str, heading: str) -> None:
    """Puts `body` between the `start` and `end` markers, or appends it under `heading`."""
    text = readme.read_text(encoding="utf-8")
    block = f"{start}\n{body}\n{end}"
    if start in text:
        pre, _, rest = text.partition(start)
        _, _, post = rest.partition(end)
        text = pre + block + post
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n" + block + "\n"
    readme.write_text(text, encoding="utf-8")
