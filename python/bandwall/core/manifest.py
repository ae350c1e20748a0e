"""The manifest of the native tables (bandwall-manifest): the measurements (each with its facts: tool,
unit, figure of merit, arrays, helper CPUs) and the instruction-set variants built into each, the
STREAM store kinds, the pipeline's strategies, the page sizes, the placement and binding policies
with their argument's type, the copy engines with what each takes, the instruction sets, the
CPU-list grammar and the decision rule. Read once per process;
every choice and help text the front end offers for these words comes from here, so a row added to
a native table reaches the command line without a word typed in Python."""

from __future__ import annotations

from functools import lru_cache

from bandwall.core import native

EXECUTABLE = "bandwall-manifest"


@lru_cache(maxsize=1)
def manifest() -> dict:
    """The whole document (see docs/reference/native.md, "The manifest")."""
    return native.table(EXECUTABLE)


def isa_choices() -> list[str]:
    """auto and every instruction-set variant a dispatching kernel can carry, widest first."""
    return list(manifest()["isa"]["choices"])


def stream_kernels() -> list[dict]:
    """The STREAM kernel table: name, formula, bytes, write-allocate bytes and flops per element."""
    return list(manifest()["kernels"]["stream"]["rows"])


def measurement(name: str) -> dict:
    """The facts of a measurement (stream, pipeline, iso3dfd, peak): tool, executable, unit, figure,
    arrays, helper_cpus, steps_are_reps, variant_key, isa_built."""
    return manifest()["kernels"][name]


def row_shapes(isa: str) -> list[dict]:
    """The ISO3DFD row kernel's register shapes of one variant (name, planes, vectors, split, ring,
    x_loads), its default first; none for a variant not built in."""
    return list(manifest()["kernels"]["iso3dfd"].get("row_shapes", {}).get(isa, []))


def store_kinds() -> list[dict]:
    """The STREAM store kinds (name, nt, help), the default first."""
    return list(manifest()["kernels"]["stream"]["stores"])


def stores() -> list[str]:
    """The STREAM store kinds, the default first."""
    return [k["name"] for k in store_kinds()]


def strategies() -> list[dict]:
    """The pipeline's strategies (name, cpu_streams_first_input, help), the default first."""
    return list(manifest()["kernels"]["pipeline"]["strategies"])


def strategy_names() -> list[str]:
    return [s["name"] for s in strategies()]


def default_strategy() -> str:
    """The strategy a pipeline takes unless another is shown to be faster: the first."""
    return strategies()[0]["name"]


def cpu_streams_strategy() -> str | None:
    """The strategy in which the core streams the first input itself (the engine the others)."""
    return next((s["name"] for s in strategies() if s["cpu_streams_first_input"]), None)


def page_kinds() -> list[dict]:
    """The page sizes a run may ask for (name, help)."""
    return list(manifest()["pages"])


def pages() -> list[str]:
    """The page sizes a run may ask for (--pages)."""
    return [p["name"] for p in page_kinds()]


def words_help(rows: list[dict]) -> str:
    """'name: help; name: help' of a table's rows, for an option's help."""
    return "; ".join(f"{r['name']}: {r['help']}" for r in rows)


def default_engine() -> str:
    """The copy engine a pipeline uses when none is named."""
    return next(e["name"] for e in manifest()["engines"] if e.get("default"))


def engine(name: str) -> dict | None:
    """The engine called name (test-only ones too), or None."""
    return next((e for e in manifest()["engines"] if e["name"] == name), None)


def policies() -> dict:
    """{"placement": [rows], "binding": [rows]}, each row name, arg, syntax, help."""
    return manifest()["policies"]


def engines(hidden: bool = False) -> list[dict]:
    """The copy engines (name, summary, modes, takes_cpus, hardware, available, reason); the
    test-only ones only when hidden is true."""
    return [e for e in manifest()["engines"] if hidden or not e["hidden"]]


def engine_modes() -> list[str]:
    """Every --engine-mode some user-facing engine serves, in the table's order."""
    modes: dict[str, None] = {}
    for e in engines():
        modes.update(dict.fromkeys(e["modes"]))
    return list(modes)


def cpus_help() -> str:
    """The help of every --cpus option, the native executables' own: an example of every form of the
    grammar (native/common/harness.cpp from native/common/cpulist.c)."""
    return manifest()["cpu_lists"]["help"]


def iso3dfd_words(option: str) -> list[dict]:
    """The words of one of bandwall-iso3dfd's options (init, schedule, sweep_team, kernel), each with
    its help, the default first."""
    return list(manifest()["kernels"]["iso3dfd"]["words"][option])


def iso3dfd_word_names(option: str) -> list[str]:
    return [w["name"] for w in iso3dfd_words(option)]


def raced_depth_hows() -> list[str]:
    """How a depth of sweep is settled when a race under the decision rule settled it (now, beside
    the model, or kept from an earlier run's race): config.time_block.how of such runs."""
    return [h["name"] for h in manifest()["kernels"]["iso3dfd"]["words"]["depth_how"] if h["raced"]]


def rank_bindings() -> list[dict]:
    """The MPI tools' rank bindings (name, help)."""
    return list(manifest()["mpi"]["rank_bindings"])


def rank_binding_names() -> list[str]:
    return [w["name"] for w in rank_bindings()]


def rank_binding_default(tool: str) -> str:
    """The rank binding an MPI tool (bandwall-mpi-stream, bandwall-iso3dfd-mpi) takes without --bind."""
    return manifest()["mpi"]["rank_binding_defaults"][tool]


def scalings() -> list[dict]:
    """bandwall-iso3dfd-mpi's scalings (name, help), the default first."""
    return list(manifest()["mpi"]["scalings"])


def bandit_patterns() -> list[dict]:
    """The bandwidth bandit's own patterns (name, help): the doses of bandwidth bandwall sensitivity
    gives, the default first; the co-runners for calibration (triad, compute) are left out."""
    return [p for p in manifest()["sensitivity"]["bandit_patterns"] if p["bandit"]]


def bandit_pattern_names() -> list[str]:
    return [p["name"] for p in bandit_patterns()]


def bandit_pattern_default() -> str:
    return manifest()["sensitivity"]["bandit_pattern_default"]
