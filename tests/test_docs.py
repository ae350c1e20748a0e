"""The manual and the man pages: the MkDocs site builds with --strict (broken links, missing pages
and a command reference that the CLI cannot generate fail it), every repository path the manual
names exists (and every recipe of the architecture page names its files), the home page and the
nav link every guide, the manifest table generated from bandwall-manifest shows every key and has a
description for each top-level one, the README keeps its two commands first, no user-facing text
names its sources by seed number, and set-up installed man pages that man finds from PATH."""

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
from bandwall.core import manifest

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
        "A recommendation",
        "A stencil radius",
        "A survey figure",
        "A subcommand",
        "A native tool",
    ):
        assert f"### {recipe}" in text
    assert "`native/stream/chunks.hpp`" in text
    # the two recipes another part of the tree reworks are marked, so they can be found and updated
    assert "<!-- recipe: variant -->\n### An instruction-set variant" in text
    assert "<!-- recipe: radius -->\n### A stencil radius" in text


def recipes() -> dict[str, str]:
    """The architecture page's recipes: heading, body."""
    text = (DOCS / "architecture.md").read_text().split("## Recipes", 1)[1]
    parts = re.split(r"^### (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.mark.parametrize("recipe", list(recipes()))
def test_every_recipe_names_the_files_it_touches_and_they_exist(recipe):
    """Each recipe names its files by their repository paths (in backticks, so the page test above
    checks them); a bare path outside backticks is checked here too."""
    body = recipes()[recipe]
    named = repo_paths(body)
    assert named, f"the recipe {recipe!r} names no repository path"
    prose = re.sub(r"^```.*?^```", "", body, flags=re.S | re.M)
    prose = re.sub(r"`[^`\n]+`", "", prose)
    bare = {
        w.rstrip(",;:.)")
        for w in re.findall(r"(?<![\w/<])(?:native|python|tests|bench|docs)/[\w./*-]+", prose)
    }
    missing = sorted(p for p in named | bare if not exists(p))
    assert not missing, f"the recipe {recipe!r} names paths that do not exist: {missing}"


def test_the_home_page_and_the_nav_link_every_guide():
    """docs/index.md's "What to read" table is the manual's entry point: a guide added under
    docs/guides/ must be linked from it (and from the nav of mkdocs.yml)."""
    home = (DOCS / "index.md").read_text()
    linked = set(re.findall(r"\]\((guides/[^)#\s]+\.md)", home))
    nav = (ROOT / "mkdocs.yml").read_text()
    guides = sorted(f"guides/{p.name}" for p in (DOCS / "guides").glob("*.md"))
    assert guides, "no guides found under docs/guides/"
    unlinked = [g for g in guides if g not in linked]
    assert not unlinked, f"docs/index.md does not link {unlinked}"
    off_nav = [g for g in guides if g not in nav]
    assert not off_nav, f"the nav of mkdocs.yml does not list {off_nav}"


def manifest_hook():
    """docs/manifest_hook.py, the MkDocs hook that writes the manifest table of reference/native.md."""
    spec = importlib.util.spec_from_file_location("bandwall_docs_manifest_hook", DOCS / "manifest_hook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_top_level_manifest_key_has_a_description():
    """The table is generated from bandwall-manifest; a top-level key it prints without a
    description in docs/manifest_hook.py would reach the manual as "(no description yet)"."""
    hook = manifest_hook()
    doc = manifest.manifest()
    missing = [key for key in doc if key not in hook.DESCRIPTIONS]
    assert not missing, (
        f"add these top-level manifest keys to DESCRIPTIONS in docs/manifest_hook.py: {missing}"
    )
    shown = {path for path, *_ in hook.rows(doc)}
    assert set(doc) <= shown


def test_the_manifest_table_shows_keys_it_has_no_description_for():
    hook = manifest_hook()
    facts = {"tool": "t", "executable": "bandwall-t", "arrays": [], "isa_built": ["generic"]}
    doc = {
        "manifest_version": 1,
        "kernels": {
            "stream": {**facts, "stores": [{"name": "nt", "help": "h"}]},
            "iso3dfd": {**facts, "inits": [{"name": "first-touch", "help": "h"}], "sweep_teams": ["auto"]},
        },
        "words": {"schedules": ["static", "dynamic"]},
    }
    rows = {path: (what, form) for path, what, form, _ in hook.rows(doc)}
    assert rows["kernels.*.isa_built"][0] == hook.DESCRIPTIONS["kernels.*.isa_built"][0]
    assert rows["kernels.stream.stores"][1] == "rows of `name`, `help`"
    assert rows["kernels.iso3dfd.inits"] == (hook.UNDESCRIBED, "rows of `name`, `help`")
    assert rows["kernels.iso3dfd.sweep_teams"] == (hook.UNDESCRIBED, "list of strings")
    assert rows["words"][0] == hook.UNDESCRIBED and "words.schedules" in rows
    table = hook.manifest_table(doc)
    assert "| `kernels.iso3dfd.inits` | (no description yet) |" in table


def test_the_manifest_descriptions_name_paths_that_exist():
    hook = manifest_hook()
    named = {p for text, source in hook.DESCRIPTIONS.values() for p in repo_paths(f"{text} {source}")}
    assert "native/manifest/main.cpp" in named
    missing = sorted(p for p in named if not exists(p))
    assert not missing, f"docs/manifest_hook.py names paths that do not exist: {missing}"


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
    # The manifest table is generated from bandwall-manifest: every key it shows is on the page.
    native_page = (tmp_path / "site" / "reference" / "native" / "index.html").read_text()
    assert "<!-- manifest-keys -->" not in native_page
    for path, *_ in manifest_hook().rows(manifest.manifest()):
        assert f"<code>{path}</code>" in native_page, path


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
