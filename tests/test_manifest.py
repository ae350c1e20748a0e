"""The manifest of the native tables (bandwall-manifest): its shape, and that the front end's choices
and help for kernels, policies, engines, instruction sets and CPU lists come from it, so that a row
added to a native table reaches every command without a word typed in Python."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import click
import pytest

from bandwall.cli import _build
from bandwall.core import manifest, native
from bandwall.output import ManifestChoice, TableHelp

PYTHON = Path(__file__).resolve().parent.parent / "python" / "bandwall"


@pytest.fixture(scope="module")
def doc() -> dict:
    return manifest.manifest()


def test_the_manifest_has_every_table(doc):
    assert doc["manifest_version"] == 1
    isa = doc["isa"]
    assert isa["choices"][:2] == ["auto", "measure"] and isa["choices"][2:] == isa["names"]
    assert set(isa["offered"]) <= set(isa["names"]) and "generic" in isa["offered"]
    for name in ("stream", "pipeline", "iso3dfd", "peak"):
        kernel = doc["kernels"][name]
        assert kernel["executable"].startswith("bandwall-")
        assert set(kernel["isa_built"]) <= set(isa["names"]) and "generic" in kernel["isa_built"]
        assert kernel["tool"] and kernel["unit"] and kernel["figure"] and kernel["variant_key"]
    assert doc["kernels"]["pipeline"]["helper_cpus"] and not doc["kernels"]["stream"]["helper_cpus"]
    assert doc["kernels"]["iso3dfd"]["steps_are_reps"]
    assert [a["name"] for a in doc["kernels"]["iso3dfd"]["arrays"]] == ["prev", "next", "vel"]
    rows_by_name = {r["name"]: r for r in doc["kernels"]["stream"]["rows"]}
    # nstream reads the array it writes; copy does not; dot writes nothing
    assert {a["name"]: (a["read"], a["written"]) for a in rows_by_name["nstream"]["arrays"]}["a"] == (
        True,
        True,
    )
    assert {a["name"]: (a["read"], a["written"]) for a in rows_by_name["copy"]["arrays"]}["c"] == (
        False,
        True,
    )
    assert not any(a["written"] for a in rows_by_name["dot"]["arrays"])
    assert [k["name"] for k in doc["kernels"]["stream"]["stores"]][0] == "nt"
    assert {s["name"] for s in doc["kernels"]["pipeline"]["strategies"]} == {"all", "split"}
    assert {p["name"] for p in doc["pages"]} == {"huge", "base", "system"}
    assert set(doc["decision"]) == {
        "confidence",
        "margin",
        "tolerance",
        "rounds",
        "rounds_when_unsettled",
        "thresholds",
    }
    assert all({"value", "why"} <= set(t) for t in doc["decision"]["thresholds"].values())
    # every ISO3DFD variant built in lists its register shapes, the default first, each named once
    shapes = doc["kernels"]["iso3dfd"]["row_shapes"]
    assert set(shapes) == set(doc["kernels"]["iso3dfd"]["isa_built"])
    for isa, rows in shapes.items():
        names = [r["name"] for r in rows]
        assert names and len(set(names)) == len(names), isa
        assert all(r["split"] for r in rows if r["ring"]), isa
    assert sum(e["default"] for e in doc["engines"]) == 1
    rows = doc["kernels"]["stream"]["rows"]
    assert {"copy", "scale", "add", "triad"} <= {r["name"] for r in rows}
    assert all(r["bytes_per_element"] > 0 for r in rows)
    for kind in ("placement", "binding"):
        for row in doc["policies"][kind]:
            assert row["arg"] in ("none", "node", "nodes-or-every") and row["syntax"].startswith(row["name"])
    engines = {e["name"]: e for e in doc["engines"]}
    assert engines["dsa-model"]["hidden"] and not engines["helper"]["hidden"]
    assert engines["helper"]["takes_cpus"] and engines["helper"]["modes"] == ["copy", "touch"]
    assert engines["none"]["modes"] == ["touch"] and engines["dsa"]["hardware"]
    for e in doc["engines"]:
        assert e["modes"] and isinstance(e["available"], bool) and (e["available"] or e["reason"])
    forms = doc["cpu_lists"]["forms"]
    assert {f["name"] for f in forms} == {"taskset", "range-stride", "domain", "chain", "expression"}
    assert all(f["example"] in doc["cpu_lists"]["help"] for f in forms)
    assert [d["letter"] for d in doc["cpu_lists"]["domains"]] == ["N", "S", "D", "M", "C"]


def test_every_example_of_the_grammar_resolves_natively(doc):
    for form in doc["cpu_lists"]["forms"]:
        proc = subprocess.run(
            [
                native.executable("bandwall-topo"),
                "--topology",
                "pack:2 core:4 pu:2",
                "--cpus",
                form["example"],
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["result"]["order"]


def test_the_topology_record_leaves_test_only_engines_out():
    proc = subprocess.run([native.executable("bandwall-topo")], capture_output=True, text=True, check=True)
    engines = json.loads(proc.stdout)["result"]["engines"]
    hidden = {e["name"] for e in manifest.engines(hidden=True) if e["hidden"]}
    assert engines and not hidden & set(engines)


@pytest.fixture
def grown(doc, monkeypatch):
    """The manifest with a row more in each table, as if a native table had grown."""
    more = json.loads(json.dumps(doc))
    more["isa"]["choices"].append("sse9")
    more["policies"]["binding"].append({"name": "zigzag", "arg": "none", "syntax": "zigzag", "help": "-"})
    more["policies"]["placement"].append({"name": "mirror", "arg": "none", "syntax": "mirror", "help": "-"})
    more["engines"].append({**more["engines"][0], "name": "teleport", "modes": ["beam"], "hidden": False})
    more["kernels"]["stream"]["rows"].append({**more["kernels"]["stream"]["rows"][0], "name": "swirl"})
    more["cpu_lists"]["help"] += ", Q0:spiral (spiral)"
    more["kernels"]["stream"]["stores"].append({"name": "streaming", "nt": True, "help": "-"})
    more["kernels"]["pipeline"]["strategies"].append(
        {"name": "halves", "cpu_streams_first_input": False, "help": "-"}
    )
    more["pages"].append({"name": "gigantic", "help": "-"})
    words = more["kernels"]["iso3dfd"]["words"]
    words["init"].append({"name": "lukewarm", "help": "-"})
    words["schedule"].append({"name": "guided", "help": "-"})
    words["sweep_team"].append({"name": "pairs", "help": "-"})
    more["mpi"]["rank_bindings"].append({"name": "socket", "help": "-"})
    more["mpi"]["scalings"].append({"name": "gustafson", "help": "-"})
    more["sensitivity"]["bandit_patterns"].append({"name": "gather", "bandit": True, "help": "-"})
    more["sensitivity"]["bandit_patterns"].append({"name": "idle", "bandit": False, "help": "-"})
    monkeypatch.setattr(manifest, "manifest", lambda: more)
    return more


# Options of the same name for another concept: mpi-stream's --bind is the MPI tools' rank binding
# (the manifest's mpi.rank_bindings), not the thread binding table.
OTHER_CONCEPT = {("mpi-stream", "bind")}


def options(name: str):
    """(command name, option) of every command's option called name."""
    for cmd_name, cmd in _build().commands.items():
        for sub in cmd.commands.values() if isinstance(cmd, click.Group) else [cmd]:
            for p in sub.params:
                if p.name == name and (sub.name, name) not in OTHER_CONCEPT:
                    yield f"{cmd_name} {sub.name}", p


def help_of(param, cmd_name: str) -> str:
    ctx = click.Context(click.Command(cmd_name))
    record = param.get_help_record(ctx)
    return " ".join(record) if record else ""


@pytest.mark.parametrize(
    "name, word",
    [
        ("isa", "sse9"),
        ("engine_mode", "beam"),
        ("bind", "zigzag"),
        ("placement", "mirror"),
        ("kernel", "swirl"),
        ("stores", "streaming"),
        ("strategy", "halves"),
        ("pages", "gigantic"),
        ("engine_name", "teleport"),
        ("init", "lukewarm"),
        ("schedule", "guided"),
        ("sweep_team", "pairs"),
        ("rank_bind", "socket"),
        ("scaling", "gustafson"),
        ("bandit", "gather"),
    ],
)
def test_a_row_added_natively_reaches_every_option_that_offers_it(grown, name, word):
    found = list(options(name))
    assert found, f"no command has --{name}"
    for cmd_name, p in found:
        if isinstance(p.type, click.Choice) and not isinstance(p.type, ManifestChoice):
            pytest.fail(f"{cmd_name} --{name} has choices typed in Python: {p.type.choices}")
        if isinstance(p.type, ManifestChoice):
            assert word in p.type.choices, cmd_name
        elif isinstance(p, TableHelp):
            assert word in help_of(p, cmd_name), cmd_name


def test_option_defaults_follow_the_manifest(grown):
    """The default engine and store kind are the manifest's, read when used: a table that changes
    its default changes every command's."""
    for e in grown["engines"]:
        e["default"] = e["name"] == "memcpy"
    grown["kernels"]["stream"]["stores"].reverse()
    first_store = grown["kernels"]["stream"]["stores"][0]["name"]
    found = {}
    for cmd_name, p in [*options("engine_name"), *options("stores")]:
        ctx = click.Context(click.Command(cmd_name))
        if p.get_default(ctx) is not None:
            found[(cmd_name, p.name)] = p.get_default(ctx)
            assert help_of(p, cmd_name).endswith(f"[default: {p.get_default(ctx)}]"), cmd_name
    assert found[("engine sweep", "engine_name")] == "memcpy"
    stores = [v for (_, name), v in found.items() if name == "stores"]
    assert len(stores) >= 3 and set(stores) == {first_store}


def test_rank_bindings_and_their_defaults_are_the_mpi_tools(grown):
    """mpi-stream's --bind and iso3dfd's --rank-bind offer the MPI tools' rank bindings, each with its
    tool's own default; a co-runner pattern of the bandit (a calibration, not a dose) is not offered."""
    (_, bind), *_ = [o for o in _all_options("bind") if o[0] == "mpi-stream mpi-stream"]
    assert "socket" in bind.type.choices
    assert bind.get_default(click.Context(click.Command("mpi-stream"))) == "core"
    for cmd_name, p in options("rank_bind"):
        assert "(default: numa)" in help_of(p, cmd_name)
    for _, p in options("bandit"):
        assert "idle" not in p.type.choices and "gather" in p.type.choices
        assert p.get_default(click.Context(click.Command("sensitivity"))) == "mixed"


def _all_options(name: str):
    for cmd_name, cmd in _build().commands.items():
        for sub in cmd.commands.values() if isinstance(cmd, click.Group) else [cmd]:
            for p in sub.params:
                if p.name == name:
                    yield f"{cmd_name} {sub.name}", p


def test_the_manifest_names_the_words_of_every_native_option(doc):
    words = doc["kernels"]["iso3dfd"]["words"]
    assert [w["name"] for w in words["init"]] == ["first-touch", "serial"]
    assert [w["name"] for w in words["schedule"]] == ["static", "dynamic"]
    assert [w["name"] for w in words["sweep_team"]] == ["auto", "slabs", "shared"]
    assert [h["name"] for h in words["depth_how"] if h["raced"]] == [
        "race",
        "race and model",
        "cached",
        "table",
    ]
    assert {w["name"] for w in doc["mpi"]["rank_bindings"]} == {"numa", "core", "none"}
    assert doc["mpi"]["rank_binding_defaults"] == {
        "bandwall-mpi-stream": "core",
        "bandwall-iso3dfd-mpi": "numa",
    }
    patterns = doc["sensitivity"]["bandit_patterns"]
    assert doc["sensitivity"]["bandit_pattern_default"] == patterns[0]["name"] == "mixed"
    assert {p["name"] for p in patterns if not p["bandit"]} == {"triad", "compute"}
    # every row says what it is
    for rows in [*words.values(), doc["mpi"]["rank_bindings"], doc["mpi"]["scalings"], patterns]:
        assert all(r["name"] and r["help"] for r in rows)


@pytest.mark.parametrize(
    "tool, option, table",
    [
        ("bandwall-iso3dfd", "--init", ("kernels", "iso3dfd", "words", "init")),
        ("bandwall-iso3dfd", "--schedule", ("kernels", "iso3dfd", "words", "schedule")),
        ("bandwall-iso3dfd", "--sweep-team", ("kernels", "iso3dfd", "words", "sweep_team")),
        ("bandwall-bandit", "--pattern", ("sensitivity", "bandit_patterns")),
    ],
)
def test_native_help_is_made_from_the_same_words(doc, tool, option, table):
    """The executable's own --help lists each word of the table the manifest exports, and refuses
    another word naming them all."""
    rows = doc
    for key in table:
        rows = rows[key]
    text = subprocess.run([native.executable(tool), "--help"], capture_output=True, text=True).stdout
    assert all(f"{r['name']}: {r['help']}" in " ".join(text.split()) for r in rows), text


def test_native_radius_help_names_the_compiled_radii(doc):
    stencil = doc["kernels"]["iso3dfd"]["stencil"]
    text = " ".join(
        subprocess.run(
            [native.executable("bandwall-iso3dfd"), "--help"], capture_output=True, text=True
        ).stdout.split()
    )
    radii = [str(r) for r in stencil["kernel_radii"]]
    every = stencil["kernel_radii"] == list(range(1, stencil["radius_max"] + 1))
    named = "compiled for every radius" if every else f"compiled for {', '.join(radii[:-1])} and {radii[-1]}"
    assert named in text
    assert f"1 to {stencil['radius_max']}" in text


def test_cpus_help_comes_from_the_grammar(grown):
    for cmd_name, p in options("cpus"):
        if isinstance(p, TableHelp):
            assert "Q0:spiral" in help_of(p, cmd_name), cmd_name


RETYPED = [
    (r"[\"']avx512[\"'],\s*[\"']avx2[\"']", "instruction-set names"),
    (r"[\"']compact[\"'],\s*[\"']scatter[\"']", "binding policy names"),
    (r"[\"']dsa[\"'],\s*[\"']helper[\"']", "engine names"),
    (r"[\"']copy[\"'],\s*[\"']touch[\"']", "engine modes"),
    (r"[\"']nt[\"'],\s*[\"']regular[\"']", "store kinds"),
    (r"[\"']huge[\"'],\s*[\"']base[\"']", "page sizes"),
    (r"[\"']all[\"'],\s*[\"']split[\"']", "strategies"),
    (r"[!=]=\s*[\"'](helper|dsa|dsa-model|memcpy)[\"']", "engine names compared"),
    (r"default=[\"'](helper|nt|regular|huge|base|system|all|split)[\"']", "defaults of native words"),
    (r"[\"'](first-touch|serial)[\"'],\s*[\"'](first-touch|serial)[\"']", "iso3dfd inits"),
    (r"[\"'](static|dynamic)[\"'],\s*[\"'](static|dynamic)[\"']", "iso3dfd schedules"),
    (r"[\"'](auto|slabs|shared)[\"'],\s*[\"'](slabs|shared)[\"']", "sweep teams"),
    (r"[\"'](numa|core|none)[\"'],\s*[\"'](numa|core|none)[\"']", "rank bindings"),
    (r"[\"'](strong|weak)[\"'],\s*[\"'](strong|weak)[\"']", "scalings"),
    (r"[\"'](mixed|strided|write)[\"'],\s*[\"'](mixed|strided|write)[\"']", "bandit patterns"),
    (r"[\"']race[\"'],\s*[\"']race and model[\"']", "how a depth is settled"),
    (r"@max=", "the choice cache's key grammar"),
]


@pytest.mark.parametrize("pattern, what", RETYPED)
def test_no_list_of_native_words_is_typed_in_python(pattern, what):
    hits = [
        str(f.relative_to(PYTHON))
        for f in PYTHON.rglob("*.py")
        if re.search(pattern, f.read_text(encoding="utf-8"))
    ]
    assert not hits, f"{what} typed in {hits}: take them from bandwall.core.manifest"
