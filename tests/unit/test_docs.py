"""The repository's Markdown explains itself: every relative link and `#anchor` resolves, and no page states how
many operations, route keys, relays, checks, tools or endpoints there are (the catalog says; a new operation
must not make a document wrong)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")
FENCE = re.compile(r"^(```|~~~)")
COUNTED = re.compile(
    r"(?<!Route )\b(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
    r"(lookup operations|operations|route keys|relay groups|relays|direct checks|direct operations|"
    r"health checks|checks|tools|lookup endpoints|endpoints|lookups? contracts?)\b",
    re.IGNORECASE,
)
"""A number of the catalog's things: the code knows how many there are, a page would drift."""


NOT_DOCS = {"node_modules", "cdk.out", "build", "results"}
"""Folders whose Markdown is not the project's pages (bench/results/ is the record of one `make bench` run)."""


def markdown_files() -> list[Path]:
    return sorted(
        path
        for path in REPO_ROOT.rglob("*.md")
        if not any(part.startswith(".") or part in NOT_DOCS for part in path.relative_to(REPO_ROOT).parts)
    )


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    found: list[str] = []
    fenced = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            base = slug(match.group(2))
            found.append(base if base not in found else f"{base}-{found.count(base)}")
    return frozenset(found)


def prose(path: Path) -> list[tuple[int, str]]:
    """The page's lines outside code blocks, numbered."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for number, line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            linked = (page.parent / path_part).resolve() if path_part else page
            if not linked.exists():
                broken.append(f"{number}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{number}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_no_page_states_how_many_of_the_catalogs_things_there_are(page: Path) -> None:
    counted = [f"{number}: {line.strip()}" for number, line in prose(page) if COUNTED.search(line)]
    assert not counted, "\n".join(counted)


def test_the_readme_is_a_front_page() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    commands = re.findall(r"^make \w+", readme, flags=re.MULTILINE)
    assert commands[:2] == ["make run", "make test"]  # the two set-up commands, first
