"""Every relative link in the tracked Markdown files points at a file or folder of this
repository: no dead link, no link that leaves the repository (http(s) and mailto links and
pure #anchors are not checked)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = ("http://", "https://", "mailto:", "#")


def broken_links(root: Path) -> list[str]:
    """'file:line: target' for each relative link that is dead or resolves outside root."""
    listed = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True, check=True
    )
    broken = []
    for name in listed.stdout.split():
        document = root / name
        in_code = False
        for number, line in enumerate(document.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if target.startswith(EXTERNAL):
                    continue
                path = (document.parent / target.split("#", 1)[0]).resolve()
                if not path.is_relative_to(root) or not path.exists():
                    broken.append(f"{name}:{number}: {target}")
    return broken


def test_every_relative_link_resolves_inside_the_repository():
    assert broken_links(ROOT) == []


def test_a_dead_link_and_one_outside_the_repository_are_found(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        "[ok](../README.md#top) [web](https://example.org) [anchor](#x)\n"
        "`[code](nowhere.md)`\n[dead](gone.md#part)\n[out](../../shared/notes.md)\n"
    )
    (tmp_path / "README.md").write_text("[page](docs/page.md)\n")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    assert broken_links(tmp_path) == [
        "docs/page.md:3: gone.md#part",
        "docs/page.md:4: ../../shared/notes.md",
    ]
