#!/usr/bin/env python3
"""Generates the PMPI wrappers of libbandwall-mpiprof from prototypes.txt.

Writes calls.h (the call table: enum and names), wrappers.c (one C wrapper per prototype) and
fortran_<mpi>.c (wrappers of the Fortran entry points, for Fortran layers that call PMPI_X
directly: Open MPI's mpif.h and mpi_f08, MPICH's mpi_f08; where a Fortran layer calls the C
MPI_X instead (MPICH's mpif.h), the re-entry guard keeps the call from being counted twice). Usage: gen_wrappers.py PROTOTYPES OUTDIR
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Param:
    ctype: str
    name: str


@dataclass
class Proto:
    name: str
    params: list[Param]
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def short(self) -> str:
        return self.name[len("MPI_") :]

    def has(self, name: str) -> bool:
        return any(p.name == name for p in self.params)


def parse_param(text: str) -> Param:
    text = text.strip()
    m = re.match(r"^(.*?)(\w+)\s*(\[\])?$", text)
    if not m:
        raise SystemExit(f"cannot parse parameter {text!r}")
    ctype, name, arr = m.group(1).strip(), m.group(2), m.group(3)
    if arr:
        ctype += " *"
    return Param(ctype, name)


def parse(path: Path) -> list[Proto]:
    protos = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        decl, _, attr_text = line.partition("|")
        m = re.match(r"^int\s+(MPI_\w+)\s*\((.*)\)\s*$", decl.strip())
        if not m:
            raise SystemExit(f"{path}:{lineno}: not a prototype: {decl!r}")
        params = [parse_param(p) for p in m.group(2).split(",") if p.strip() and p.strip() != "void"]
        attrs = {}
        for word in attr_text.split():
            key, _, value = word.partition("=")
            attrs[key] = value or "1"
        p = Proto(m.group(1), params, attrs)
        for key in ("peer", "root", "rpeer", "status", "comm"):
            if key in attrs and not p.has(attrs[key]):
                raise SystemExit(f"{path}:{lineno}: {p.name} has no parameter {attrs[key]!r}")
        protos.append(p)
    return protos


def bytes_expr(expr: str, value, comm: str) -> str:
    """C expression of a bytes= attribute: "count:datatype+..." with an optional "*csize"."""
    if not expr:
        return "0"
    terms = []
    for term in expr.split("+"):
        csize = term.endswith("*csize")
        term = term.removesuffix("*csize")
        count, _, dtype = term.partition(":")
        t = f"bwp_bytes({value(count, 'int')}, {value(dtype, 'MPI_Datatype')})"
        if csize:
            t = f"{t} * (uint64_t)bwp_comm_size({comm})"
        terms.append(t)
    return " + ".join(terms)


def comm_arg(p: Proto) -> str | None:
    if "nocomm" in p.attrs:
        return None
    if "comm" in p.attrs:
        return p.attrs["comm"]
    return "comm" if p.has("comm") else None


def accounting(p: Proto, value, status: str | None) -> list[str]:
    """The statements that count one call; value(name, ctype) reads a parameter as a C value."""
    comm = comm_arg(p)
    c = value(comm, "MPI_Comm") if comm else "MPI_COMM_NULL"
    lines = [f"  int slot = {'bwp_comm_slot(' + c + ')' if comm else '-1'};"]
    lines.append(f"  uint64_t bytes = {bytes_expr(p.attrs.get('bytes', ''), value, c)};")
    kind = p.attrs.get("kind", "other")
    if kind in ("recv", "sendrecv") and status:
        rb = "rbytes" if kind == "sendrecv" else "bytes"
        rpeer = p.attrs.get("rpeer" if kind == "sendrecv" else "peer")
        lines.append(f"  int rsrc = {value(rpeer, 'int')};")
        lines.append(f"  uint64_t rbytes = {bytes_expr(p.attrs.get(rb, ''), value, c)};")
        lines.append(f"  bwp_status_actual({status}, &rsrc, &rbytes);")
        if kind == "recv":
            lines.append("  bytes = rbytes;")
    elif kind == "sendrecv":
        lines.append(f"  int rsrc = {value(p.attrs['rpeer'], 'int')};")
        lines.append(f"  uint64_t rbytes = {bytes_expr(p.attrs.get('rbytes', ''), value, c)};")
    elif kind == "recv":
        lines.append(f"  int rsrc = {value(p.attrs['peer'], 'int')};")
        lines.append("  uint64_t rbytes = bytes;")
    lines.append(f"  bwp_count(t, BWP_{p.name}, slot, bytes, t1 - t0);")
    if kind in ("send", "sendrecv"):
        lines.append(f"  bwp_sent(t, slot, {value(p.attrs['peer'], 'int')}, bytes);")
    if kind in ("recv", "sendrecv"):
        lines.append("  bwp_received(t, slot, rsrc, rbytes);")
    if "root" in p.attrs:
        rb = bytes_expr(p.attrs.get("rootbytes", ""), value, c)
        lines.append(f"  bwp_rooted(t, BWP_{p.name}, {c}, {value(p.attrs['root'], 'int')}, {rb});")
    return lines


def c_wrapper(p: Proto) -> str:
    decl = ", ".join(f"{q.ctype} {q.name}" for q in p.params) or "void"
    names = [q.name for q in p.params]
    status = p.attrs.get("status")
    call_args = ", ".join("bwp_st" if n == status else n for n in names)
    out = [f"int {p.name}({decl}) {{"]
    out.append("  bwp_thread *t = bwp_enter();")
    out.append(f"  if (!t) return P{p.name}({', '.join(names)});")
    if "forget" in p.attrs:
        out.append(f"  bwp_comm_forget(*{p.attrs['forget']});")
    if status:
        out.append("  MPI_Status bwp_own;")
        out.append(f"  MPI_Status *bwp_st = {status} == MPI_STATUS_IGNORE ? &bwp_own : {status};")
    out.append("  uint64_t t0 = bwp_now();")
    out.append(f"  int rc = P{p.name}({call_args});")
    out.append("  uint64_t t1 = bwp_now();")
    out += accounting(p, lambda n, _t: n, "bwp_st" if status else None)
    out.append("  bwp_leave();")
    out.append("  return rc;")
    out.append("}")
    return "\n".join(out)


def fortran_value(p: Proto):
    index = {q.name: i for i, q in enumerate(p.params)}

    def value(name: str, ctype: str) -> str:
        a = f"(*(MPI_Fint *)a{index[name]})"
        if ctype == "MPI_Datatype":
            return f"PMPI_Type_f2c{a}"
        if ctype == "MPI_Comm":
            return f"PMPI_Comm_f2c{a}"
        return f"(int){a}"

    return value


def fortran_symbols(p: Proto, flavor: str) -> list[str]:
    """The Fortran entry points of a call: mpif.h / use mpi (mpi_x_) in both MPIs; use mpi_f08 goes
    through ompi_x_f in Open MPI and mpi_x_f08ts_ (choice buffer) or mpi_x_f08_ in MPICH."""
    low = p.short.lower()
    if flavor == "openmpi":
        return [f"mpi_{low}_", f"ompi_{low}_f"]
    buffer = any(q.ctype.replace("const", "").strip() in ("void *", "void*") for q in p.params)
    return [f"mpi_{low}_", f"mpi_{low}_f08ts_" if buffer else f"mpi_{low}_f08_"]


def fortran_wrappers(p: Proto, flavor: str) -> str:
    n = len(p.params)
    args = ", ".join([f"void *a{i}" for i in range(n)] + ["MPI_Fint *ierr"])
    fwd = ", ".join([f"a{i}" for i in range(n)] + ["ierr"])
    ptr_type = f"void (*)({', '.join(['void *'] * n + ['MPI_Fint *'])})"
    out = []
    for sym in fortran_symbols(p, flavor):
        var = f"real_{sym}"
        out.append(f"static void *{var};")
        out.append(f"void {sym}({args}) {{")
        out.append(
            f'  void (*real)({", ".join(["void *"] * n + ["MPI_Fint *"])}) = ({ptr_type})bwp_next(&{var}, "{sym}");'
        )
        out.append("  bwp_thread *t = bwp_enter();")
        out.append("  if (!t) {")
        out.append(f"    real({fwd});")
        out.append("    return;")
        out.append("  }")
        if "forget" in p.attrs:
            out.append(
                f"  bwp_comm_forget(PMPI_Comm_f2c(*(MPI_Fint *)a{[q.name for q in p.params].index(p.attrs['forget'])}));"
            )
        out.append("  uint64_t t0 = bwp_now();")
        out.append(f"  real({fwd});")
        out.append("  uint64_t t1 = bwp_now();")
        out += accounting(p, fortran_value(p), None)
        out.append("  bwp_leave();")
        out.append("}")
    return "\n".join(out)


HEADER = "/* Generated by gen_wrappers.py from prototypes.txt: do not edit. */\n"


def main() -> None:
    protos = parse(Path(sys.argv[1]))
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    kinds = {"send": 1, "recv": 2, "sendrecv": 3, "coll": 4, "wait": 5, "probe": 6, "rma": 7, "other": 8}
    enum = ",\n".join(f"  BWP_{p.name}" for p in protos)
    names = ",\n".join(f'  "{p.name}"' for p in protos)
    kind_list = ",\n".join(f'  "{p.attrs.get("kind", "other")}"' for p in protos)
    for p in protos:
        if p.attrs.get("kind", "other") not in kinds:
            raise SystemExit(f"{p.name}: unknown kind {p.attrs.get('kind')!r}")
    (out / "calls.h").write_text(
        HEADER
        + "#pragma once\n"
        + f"enum bwp_call_id {{\n{enum},\n  BWP_NCALLS\n}};\n"
        + f"static const char *const bwp_call_names[BWP_NCALLS] = {{\n{names}}};\n"
        + f"static const char *const bwp_call_kinds[BWP_NCALLS] = {{\n{kind_list}}};\n"
    )
    body = "\n\n".join(c_wrapper(p) for p in protos)
    (out / "wrappers.c").write_text(HEADER + '#include "mpiprof.h"\n\n' + body + "\n")
    for flavor in ("openmpi", "mpich"):
        fbody = "\n\n".join(fortran_wrappers(p, flavor) for p in protos if "nofortran" not in p.attrs)
        (out / f"fortran_{flavor}.c").write_text(HEADER + '#include "mpiprof.h"\n\n' + fbody + "\n")


if __name__ == "__main__":
    main()
