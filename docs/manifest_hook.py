"""MkDocs hook of bandwall's manual (mkdocs.yml: hooks): the manifest table of
docs/reference/native.md, generated from `bandwall-manifest` itself.

on_page_markdown replaces `<!-- manifest-keys -->` with one row per key of the manifest the built
`bandwall-manifest` prints (found as the front end finds it, python/bandwall/core/native.py): its
top-level keys, the keys of each block, and under `kernels` the keys of each measurement (the keys
every measurement has once, as `kernels.*.KEY`). A key's form (a list of rows and their fields, an
object and its keys) is read from the document; what it holds and where it is defined come from
DESCRIPTIONS, keyed by the key's path. A key without a description still gets its row, with
UNDESCRIBED in place of the text, so a key added to the manifest reaches the manual by itself;
tests/test_docs.py fails when a top-level key has no description.
"""

from __future__ import annotations

import logging

MARKER = "<!-- manifest-keys -->"
UNDESCRIBED = "(no description yet)"
# How many levels below a top-level key get rows of their own: one (the keys of each block), two
# under kernels (the keys of each measurement).
DEPTH = {"kernels": 2}
log = logging.getLogger("mkdocs.plugins.bandwall.manifest")

# path: (what it holds, where it is defined). A row without a source takes its parent's.
DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "manifest_version": ("1; raised when a key changes meaning", "`native/manifest/main.cpp`"),
    "kernels": (
        "the measurements, one block each: their facts, the instruction-set variants built into their "
        "executables and their own tables",
        "each measurement's `facts()` (`native/common/driver.hpp`)",
    ),
    "kernels.stream": (
        "STREAM: `bandwall-stream` (`bandwall stream`, `sweep`, `balance`)",
        "`native/stream/`",
    ),
    "kernels.pipeline": (
        "a STREAM kernel pipelined with a copy engine: `bandwall-pipeline` (`bandwall stream --engine`, `engine`)",
        "`native/engine/`",
    ),
    "kernels.iso3dfd": ("the ISO3DFD stencil: `bandwall-iso3dfd` (`bandwall iso3dfd`)", "`native/iso3dfd/`"),
    "kernels.peak": ("the FMA peak: `bandwall-peak` (`bandwall balance`)", "`native/peak/`"),
    "kernels.*.tool": ("the `tool` of its records", ""),
    "kernels.*.executable": ("the native executable that runs it", ""),
    "kernels.*.unit": ("the unit of its figure of merit (GB/s, MPoints/s, GFlop/s)", ""),
    "kernels.*.figure": ("the result field the front end reads as its figure of merit", ""),
    "kernels.*.arrays": (
        "the arrays it reads and writes (`stream`: empty, each row of `rows` has its own)",
        "",
    ),
    "kernels.*.helper_cpus": ("whether it takes CPUs beyond its threads (a copy engine's helpers)", ""),
    "kernels.*.steps_are_reps": (
        "whether its steps are its repetitions (its trials are taken from them)",
        "",
    ),
    "kernels.*.variant_key": (
        "the pattern of its key in the table of measured variant choices (empty: none)",
        "`native/common/isa_choices.json`",
    ),
    "kernels.*.isa_built": (
        "the instruction-set variants built into its executable, widest first",
        "each kernel's variant list (`bw::Dispatch`, `native/common/dispatch.hpp`)",
    ),
    "kernels.stream.rows": (
        "the STREAM kernels, one row each: formula, bytes, write-allocate bytes and flops per element, "
        "whether it stores, the arrays it reads and writes",
        "`native/stream/chunks.hpp`",
    ),
    "kernels.stream.stores": (
        "the store kinds `--stores` takes (non-temporal or regular), the default first",
        "`native/stream/record.cpp`",
    ),
    "kernels.pipeline.strategies": (
        "the copy-engine pipeline's strategies, the default first; `cpu_streams_first_input` marks the one "
        "in which the core streams the first input itself",
        "`native/engine/options.cpp`",
    ),
    "kernels.iso3dfd.row_shapes": (
        "per variant, the row kernel's register shapes, the default first: the names `--row-shape` takes "
        "and `bandwall tune iso3dfd` searches",
        "each variant's shape list (`native/iso3dfd/rows_avx512.cpp`, ...)",
    ),
    "kernels.iso3dfd.time_block": (
        "what `--time-block` takes: its words, the deepest sweep and the syntax",
        "`native/iso3dfd/timemodel.cpp`",
    ),
    "kernels.iso3dfd.stencil": (
        "the radii `--radius` takes (`radius_min`, `radius_max`, `radius_default`), those the vector "
        "kernels are compiled for (`kernel_radii`), and per radius its space order, halo, flops and bytes "
        "a point and step, smallest dimension and whether a vector kernel is templated on it",
        "`native/iso3dfd/iso3dfd.hpp` (`kKernelRadii`, `flops_per_point`)",
    ),
    "kernels.iso3dfd.words": (
        "the words of ISO3DFD's options and record fields, one list of rows per option or field, each "
        "word with its help",
        "",
    ),
    "mpi": (
        "the words of the MPI executables: how a node's ranks share its CPUs, and the scalings",
        "`native/mpi/`",
    ),
    "mpi.rank_bindings": ("one row per rank binding: how a node's ranks share its CPUs", ""),
    "mpi.rank_binding_defaults": ("the rank binding each MPI executable takes by default", ""),
    "mpi.scalings": ("strong (the ranks share the grid) or weak (the grid is each rank's)", ""),
    "sensitivity": (
        "the words of `bandwall sensitivity`: the patterns of the bandwidth bandit and of its co-runners",
        "`native/sensitivity/`",
    ),
    "sensitivity.bandit_patterns": (
        "one row per pattern `bandwall-bandit` runs; `bandit` marks those that take bandwidth, the others "
        "are co-runners of known bandwidth or of none",
        "",
    ),
    "sensitivity.bandit_pattern_default": ("the pattern the bandit runs unless told otherwise", ""),
    "policies": ("the placement and binding policies", "`native/common/policies.cpp`"),
    "policies.placement": (
        "one row per placement policy: its argument (`none`, `node` or `nodes-or-every`), syntax and "
        "help, and whether it applies per process",
        "",
    ),
    "policies.binding": ("one row per binding policy: its argument, syntax and help", ""),
    "engines": (
        "one row per copy engine: the `--engine-mode` values it serves (its default first), whether it "
        "takes CPUs of its own (`--engine-cpus`), the hardware it needs beyond the CPUs, whether it is "
        "hidden (test-only), and whether it is available here or why not",
        "`native/engine/registry.cpp` and each backend",
    ),
    "isa": ("the instruction-set variants and how one is chosen", "`native/common/isa.cpp`"),
    "isa.names": ("the variants a kernel can carry, widest first", ""),
    "isa.choices": ("what `--isa` takes: `auto`, `measure` and the names", ""),
    "isa.offered": ("the variants this CPU runs, under the ceiling", ""),
    "isa.cpu_offered": ("the variants this CPU runs, whatever the ceiling", ""),
    "isa.ceiling": (
        "`BANDWALL_MAX_ISA` in force (null: none): no kernel runs a wider variant",
        "",
    ),
    "isa.model_default": (
        "the variant the machine model predicts for this CPU where no measured choice exists, and why",
        "`native/common/isa_choice.cpp`",
    ),
    "isa.microarch": ("this CPU's row of the machine models, or why none", "`native/common/machine.cpp`"),
    "isa.microarchs": (
        "the micro-architectures the machine models know (what `BANDWALL_MICROARCH` takes)",
        "`native/common/machine.cpp`",
    ),
    "isa.cache_path": (
        "the file of the variant choices measured on this machine (`--isa measure`)",
        "`native/common/isa_choice.cpp`",
    ),
    "isa.help": ("the help of `--isa`", ""),
    "cpu_lists": ("the CPU-list grammar", "`native/common/cpulist.c`"),
    "cpu_lists.forms": (
        "one row per form of a list: syntax, example, meaning, whether it needs the topology",
        "",
    ),
    "cpu_lists.domains": ("the domain letters and what each names", ""),
    "cpu_lists.help": ("the help of `--cpus`", "`native/common/harness.cpp`"),
    "pages": ("the page sizes `--pages` takes, one row each", "`native/common/placement.cpp`"),
    "decision": (
        "the decision rule by which bandwall chooses by itself ([How bandwall decides](decisions.md))",
        "`native/common/decision.json`, read by `native/common/decide.hpp`",
    ),
    "decision.confidence": ("the confidence of the interval of the median ratio", ""),
    "decision.margin": ("how far beyond 1 that whole interval must lie for a challenger to win", ""),
    "decision.tolerance": (
        "how much faster a larger team may be before fewer threads are no longer chosen",
        "",
    ),
    "decision.rounds": ("the interleaved rounds a decision takes", ""),
    "decision.rounds_when_unsettled": (
        "the rounds in all when the first leave a comparison unsettled",
        "",
    ),
    "decision.thresholds": ("the front end's named thresholds, each with its value and why", ""),
    "caches": (
        "the files of choices measured on this machine and kept between runs",
        "`native/common/choice_cache.cpp`",
    ),
    "caches.isa_choices": (
        "the variant choices measured here (`--isa measure`)",
        "`native/common/isa_choice.cpp`",
    ),
    "caches.time_blocks": ("the ISO3DFD time-block depths measured here (`--time-block measure`)", ""),
}


def _kind(value) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "list"
    return "object"


def _fields(keys) -> str:
    return ", ".join(f"`{k}`" for k in keys)


def _union(dicts) -> list[str]:
    keys: dict[str, None] = {}
    for d in dicts:
        keys.update(dict.fromkeys(d))
    return list(keys)


def form(value, expanded: bool = False) -> str:
    """A key's form, read from its value: rows and their fields, an object and its keys."""
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return "rows of " + _fields(_union(value))
        kinds = sorted({_kind(v) for v in value})
        return (
            "list of " + " or ".join(f"{k}s" if k != "true or false" else k for k in kinds)
            if value
            else "list"
        )
    if isinstance(value, dict):
        if expanded:
            return "object (its keys below)"
        inner = list(value.values())
        if len(inner) > 1 and all(isinstance(v, dict) for v in inner):
            return f"one object per key ({_fields(value)}), each of {_fields(_union(inner))}"
        if len(inner) > 1 and all(isinstance(v, list) and v and isinstance(v[0], dict) for v in inner):
            rows = _union(r for v in inner for r in v)
            return f"one list of rows per key ({_fields(value)}), each row of {_fields(rows)}"
        return "object of " + _fields(value)
    if value is None:
        return "null, or a value when set"
    return _kind(value)


def _depth(path: str) -> int:
    return DEPTH.get(path.split(".", 1)[0], 1)


def rows(manifest: dict) -> list[tuple[str, str, str, str]]:
    """(path, what it holds, form, defined in) for every key the table shows, in the manifest's order."""
    out: list[tuple[str, str, str, str]] = []

    def describe(path: str, value, source: str, expanded: bool) -> str:
        text, own = DESCRIPTIONS.get(path, (UNDESCRIBED, ""))
        out.append((path, text, form(value, expanded), own or source))
        return own or source

    def walk(path: str, value, level: int, source: str) -> None:
        expanded = isinstance(value, dict) and level < _depth(path)
        source = describe(path, value, source, expanded)
        if not expanded:
            return
        children = value
        # A block of blocks (the measurements): the keys every one of them has, once.
        if len(value) > 1 and all(isinstance(v, dict) for v in value.values()) and level + 1 < _depth(path):
            common = [k for k in _union(value.values()) if all(k in v for v in value.values())]
            for key in common:
                samples = [v[key] for v in value.values()]
                describe(f"{path}.*.{key}", next((s for s in samples if s), samples[0]), source, False)
            for name, block in value.items():
                own = {k: v for k, v in block.items() if k not in common}
                text, src = DESCRIPTIONS.get(f"{path}.{name}", ("", ""))
                out.append(
                    (f"{path}.{name}", text or f"the {name} measurement", form(own, True), src or source)
                )
                for key, v in own.items():
                    walk(f"{path}.{name}.{key}", v, level + 2, src or source)
            return
        for key, v in children.items():
            walk(f"{path}.{key}", v, level + 1, source)

    for key, value in manifest.items():
        walk(key, value, 0, "")
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def manifest_table(manifest: dict) -> str:
    lines = ["| key | what it holds | form | defined in |", "|---|---|---|---|"]
    lines += [f"| `{p}` | {_cell(w)} | {_cell(f)} | {_cell(s)} |" for p, w, f, s in rows(manifest)]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    if MARKER not in markdown:
        return markdown
    from bandwall.core import manifest

    doc = manifest.manifest()
    undescribed = [p for p, w, _, _ in rows(doc) if w == UNDESCRIBED]
    if undescribed:
        log.info("manifest keys without a description (docs/manifest_hook.py): %s", ", ".join(undescribed))
    return markdown.replace(MARKER, manifest_table(doc))
