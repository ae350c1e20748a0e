"""The manual and the man pages: the MkDocs site builds with --strict (broken links, missing pages
and a command reference that the CLI cannot generate fail it), every repository path the manual
names exists, the README keeps its two commands first, no user-facing text names its sources by
seed number, and set-up installed man pages that man finds from PATH."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bandwall import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# Pages that name repository paths in backticks: the manual, the README and CONTRIBUTING.md.
PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
PATH_PREFIXES = ("native/", "python/", "tests/", "bench/", "docs/")
TOP_FILES = {"pyproject.toml", "mkdocs.yml", "CMakeLists.txt", "bootstrap", ".clang-format"}
MAN1 = Path(sys.prefix) / "share" / "man" / "man1"


def repo_paths(text: str) -> set[str]:
    """Every word inside `backticks` (outside fenced code blocks) that names a repository path."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    found = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            word = word.rstrip(",;:)")
            if word in TOP_FILES or (
                word.startswith(PATH_PREFIXES) and re.fullmatch(r"[\w./*-]+", word) and "<" not in word
            ):
                found.add(word)
    return found


def exists(path: str) -> bool:
    if "*" in path:
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


def test_repo_paths_are_found_in_a_sample():
    text = (
        "see `native/stream/chunks.hpp` and `native/<name>/`, run `python3 bench/isa_variants.py --rounds 5`"
    )
    assert repo_paths(text) == {"native/stream/chunks.hpp", "bench/isa_variants.py"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_the_manual_names_exists(page):
    missing = sorted(p for p in repo_paths(page.read_text()) if not exists(p))
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_architecture_page_has_a_recipe_for_each_kind():
    text = (DOCS / "architecture.md").read_text()
    for recipe in (
        "A STREAM kernel",
        "A binding or placement policy",
        "A copy engine",
        "An instruction-set variant",
        "An MPI call in the profiler",
        "A report section",
        "A subcommand",
        "A native tool",
    ):
        assert f"### {recipe}" in text
    assert "`native/stream/chunks.hpp`" in text


def test_readme_opens_with_the_two_commands_and_stays_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 120
    start = lines.index("```")
    assert lines[start : start + 4] == ["```", "./bootstrap report", "./bootstrap test", "```"]
    assert all(not line.strip() or line.startswith("#") for line in lines[:start])


def test_no_user_facing_text_names_a_seed_number():
    """Sources are named by what they are (Intel's NUMA 3DFD and DSA articles, the T2K study, PGI's
    MP_* variables), not by the numbers of the documents bandwall started from."""
    files = [*PAGES, ROOT / "bench" / "README.md", *(ROOT / "bench" / "results").glob("*.md")]
    files += [
        p for p in (ROOT / "python" / "bandwall").rglob("*") if p.suffix in (".py", ".j2", ".txt", ".md")
    ]
    pattern = re.compile(r"\bseeds? ?0\d\d|\bthe seed'?s?\b", re.I)
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in files
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install '.[docs]'; ./bootstrap setup installs it)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    commands = (tmp_path / "site" / "reference" / "commands" / "index.html").read_text()
    # The command reference is generated from the CLI: every subcommand and its options are there.
    for name, cmd in cli._build().commands.items():
        assert f'id="bandwall-{name}"' in commands, name
        for param in cmd.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in commands, f"{name} {opt}"
    records = (tmp_path / "site" / "reference" / "records" / "index.html").read_text()
    assert "provenance.topology_digest" in records and "<!-- record-fields -->" not in records


def _native_executables() -> list[Path]:
    return sorted(
        p
        for p in Path(sys.executable).parent.glob("bandwall-*")
        if os.access(p, os.X_OK) and ".so" not in p.name
    )


def _man_page_names() -> list[str]:
    names = ["bandwall"]
    for name, cmd in cli._build().commands.items():
        names.append(f"bandwall-{name}")
        names += [f"bandwall-{name}-{sub}" for sub in getattr(cmd, "commands", {})]
    return names + [p.name for p in _native_executables()]


def test_set_up_installed_the_man_pages():
    missing = [n for n in _man_page_names() if not (MAN1 / f"{n}.1").is_file()]
    assert not missing, (
        f"no man page in {MAN1} for {missing}: ./bootstrap setup makes them "
        f"(or {sys.executable} docs/gen_man.py {MAN1})"
    )
    iso = (MAN1 / "bandwall-iso3dfd.1").read_text()
    assert "NATIVE EXECUTABLE bandwall-iso3dfd" in iso and "\\-\\-grid" in iso


def test_man_finds_the_pages_from_path():
    if shutil.which("man") is None:
        pytest.skip("man is not installed (Debian: man-db)")
    env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    r = subprocess.run(["man", "-w", "bandwall", "bandwall-iso3dfd"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(MAN1 / "bandwall.1"), str(MAN1 / "bandwall-iso3dfd.1")]
