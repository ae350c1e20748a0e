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

    @property
    def row(self) -> str:
        """The table row the call counts into: an MPI-4 large-count MPI_X_c counts as MPI_X."""
        return self.attrs.get("row", self.name)

    def has(self, name: str) -> bool:
        return any(p.name == name for p in self.params)

    def ctype(self, name: str) -> str:
        return next(q.ctype for q in self.params if q.name == name)


def large_count(p: Proto) -> Proto:
    """MPI-4's MPI_X_c of a prototype: int counts become MPI_Count, int displacement arrays MPI_Aint
    (the rule every MPI-4 large-count binding follows); counted in MPI_X's row, C only."""
    params = []
    for q in p.params:
        ctype = q.ctype
        if "count" in q.name and ctype.replace("const", "").strip() in ("int", "int *"):
            ctype = ctype.replace("int", "MPI_Count")
        elif q.name.endswith("displs") and ctype == "const int *":
            ctype = "const MPI_Aint *"
        params.append(Param(ctype, q.name))
    attrs = {k: v for k, v in p.attrs.items() if k != "large"}
    return Proto(p.name + "_c", params, {**attrs, "row": p.name, "nofortran": "1", "mpi4": "1"})


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
        for key in ("peer", "root", "rpeer", "status", "comm", "persistent", "start", "forgetreq"):
            if key in attrs and not p.has(attrs[key]):
                raise SystemExit(f"{path}:{lineno}: {p.name} has no parameter {attrs[key]!r}")
        for key in ("bytes", "rbytes", "rootbytes", "inplace"):
            for name in re.findall(r"[A-Za-z_]\w*", attrs.get(key, "").replace("sum(", "(")):
                if name != "csize" and not p.has(name):
                    raise SystemExit(f"{path}:{lineno}: {p.name} has no parameter {name!r} ({key}=)")
        if any(k in attrs for k in ("persistent", "start", "forgetreq")) and "nofortran" not in attrs:
            raise SystemExit(f"{path}:{lineno}: {p.name}: requests are followed in C only (add nofortran)")
        protos.append(p)
        if "large" in attrs:
            protos.append(large_count(p))
    return protos


def array_helper(p: Proto, name: str, fortran: bool) -> str:
    """Suffix of the bwp_sum_bytes helper for a count array: Fortran integers, MPI_Count or int."""
    if fortran:
        return "_f"
    return "_c" if "MPI_Count" in p.ctype(name) else ""


def bytes_expr(p: Proto, expr: str, value, fortran: bool = False) -> str:
    """C expression of a bytes= attribute, a "+" sum of terms:
    count:datatype              count x the type's size
    sum(counts):datatype        the sum of counts[0..csize-1] x the type's size (v collectives)
    sum(counts:datatypes)       the sum of counts[i] x the size of datatypes[i] (w collectives)
    each with an optional "*csize" (x the number of ranks the call addresses, csize)."""
    if not expr:
        return "0"
    terms = []
    for term in expr.split("+"):
        csize = term.endswith("*csize")
        term = term.removesuffix("*csize")
        m = re.fullmatch(r"sum\((\w+)\)(?::(\w+))?|sum\((\w+):(\w+)\)", term)
        if m and m.group(1):  # sum(counts):datatype
            arr = value(m.group(1), "array")
            t = f"bwp_sum_bytes{array_helper(p, m.group(1), fortran)}({arr}, csize, {value(m.group(2), 'MPI_Datatype')})"
        elif m:  # sum(counts:datatypes)
            arr, types = value(m.group(3), "array"), value(m.group(4), "array")
            t = f"bwp_sumw_bytes{array_helper(p, m.group(3), fortran)}({arr}, {types}, csize)"
        else:
            count, _, dtype = term.partition(":")
            t = f"bwp_bytes({value(count, 'count')}, {value(dtype, 'MPI_Datatype')})"
        if csize:
            t = f"{t} * (uint64_t)csize"
        terms.append(t)
    return " + ".join(terms)


def needs_csize(p: Proto) -> bool:
    return any(
        "csize" in p.attrs.get(k, "") or "sum(" in p.attrs.get(k, "")
        for k in ("bytes", "rbytes", "rootbytes", "inplace")
    )


def comm_arg(p: Proto) -> str | None:
    if "nocomm" in p.attrs:
        return None
    if "comm" in p.attrs:
        return p.attrs["comm"]
    return "comm" if p.has("comm") else None


def accounting(p: Proto, value, status: str | None, fortran: bool = False) -> list[str]:
    """The statements that count one call; value(name, ctype) reads a parameter as a C value."""
    comm = comm_arg(p)
    c = value(comm, "MPI_Comm") if comm else "MPI_COMM_NULL"
    lines = [f"  int slot = {'bwp_comm_slot(' + c + ')' if comm else '-1'};"]
    if needs_csize(p):
        lines.append(f"  int csize = bwp_comm_peers({c});")

    def bytes_of(key: str) -> str:
        return bytes_expr(p, p.attrs.get(key, ""), value, fortran)

    if "inplace" in p.attrs and not fortran:  # MPI_IN_PLACE: the send side's arguments are ignored
        lines.append(
            f"  uint64_t bytes = sendbuf == MPI_IN_PLACE ? {bytes_of('inplace')} : {bytes_of('bytes')};"
        )
    else:
        lines.append(f"  uint64_t bytes = {bytes_of('bytes')};")
    row = f"BWP_{p.row}"
    if "persistent" in p.attrs:  # a persistent request: its starts count (bwp_start), the init its time
        req = value(p.attrs["persistent"], "request")
        recv = int(p.attrs.get("kind") == "recv")
        lines.append(
            f"  if (rc == MPI_SUCCESS) bwp_persist(t, {row}, {req}, slot, {value(p.attrs['peer'], 'int')}, bytes, {recv});"
        )
        lines.append(f"  bwp_time(t, {row}, t1 - t0);")
        return lines
    kind = p.attrs.get("kind", "other")
    if kind in ("recv", "sendrecv") and status:
        rb = "rbytes" if kind == "sendrecv" else "bytes"
        rpeer = p.attrs.get("rpeer" if kind == "sendrecv" else "peer")
        lines.append(f"  int rsrc = {value(rpeer, 'int')};")
        lines.append(f"  uint64_t rbytes = {bytes_of(rb)};")
        lines.append(f"  bwp_status_actual({status}, &rsrc, &rbytes);")
        if kind == "recv":
            lines.append("  bytes = rbytes;")
    elif kind == "sendrecv":
        lines.append(f"  int rsrc = {value(p.attrs['rpeer'], 'int')};")
        lines.append(f"  uint64_t rbytes = {bytes_of('rbytes')};")
    elif kind == "recv":
        lines.append(f"  int rsrc = {value(p.attrs['peer'], 'int')};")
        lines.append("  uint64_t rbytes = bytes;")
    lines.append(f"  bwp_count(t, {row}, slot, bytes, t1 - t0);")
    if kind in ("send", "sendrecv"):
        lines.append(f"  bwp_sent(t, slot, {value(p.attrs['peer'], 'int')}, bytes);")
    if kind in ("recv", "sendrecv"):
        lines.append("  bwp_received(t, slot, rsrc, rbytes);")
    if "root" in p.attrs:  # the root's arguments (v collectives: its count array) are read there only
        lines.append(
            f"  if (bwp_is_root({c}, {value(p.attrs['root'], 'int')})) bwp_rooted(t, {row}, {bytes_of('rootbytes')});"
        )
    if "start" in p.attrs:  # MPI_Start, MPI_Startall: the messages of the requests started
        n = value(p.attrs["count"], "int") if "count" in p.attrs else "1"
        lines.append(f"  bwp_start(t, bwp_reqs, {n}, t1 - t0);")
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
    if "forgetreq" in p.attrs:
        out.append(f"  bwp_unpersist(t, *{p.attrs['forgetreq']});")
    if "start" in p.attrs:
        out.append(f"  const MPI_Request *bwp_reqs = {p.attrs['start']};")
    if status:
        out.append("  MPI_Status bwp_own;")
        out.append(f"  MPI_Status *bwp_st = {status} == MPI_STATUS_IGNORE ? &bwp_own : {status};")
    out.append("  uint64_t t0 = bwp_now();")
    out.append(f"  int rc = P{p.name}({call_args});")
    out.append("  uint64_t t1 = bwp_now();")
    out += accounting(p, c_value, "bwp_st" if status else None)
    out.append("  bwp_leave();")
    out.append("  return rc;")
    out.append("}")
    if "mpi4" in p.attrs:  # large counts: where mpi.h declares them (MPI 4)
        return "#if MPI_VERSION >= 4\n" + "\n".join(out) + "\n#endif"
    return "\n".join(out)


def c_value(name: str, ctype: str) -> str:
    return f"*{name}" if ctype == "request" else name


def fortran_value(p: Proto):
    index = {q.name: i for i, q in enumerate(p.params)}

    def value(name: str, ctype: str) -> str:
        if ctype == "array":
            return f"(const MPI_Fint *)a{index[name]}"
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
        out += accounting(p, fortran_value(p), None, fortran=True)
        out.append("  bwp_leave();")
        out.append("}")
    return "\n".join(out)


HEADER = "/* Generated by gen_wrappers.py from prototypes.txt: do not edit. */\n"


def main() -> None:
    protos = parse(Path(sys.argv[1]))
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    kinds = {"send": 1, "recv": 2, "sendrecv": 3, "coll": 4, "wait": 5, "probe": 6, "rma": 7, "other": 8}
    rows = [p for p in protos if "row" not in p.attrs]
    enum = ",\n".join(f"  BWP_{p.name}" for p in rows)
    names = ",\n".join(f'  "{p.name}"' for p in rows)
    kind_list = ",\n".join(f'  "{p.attrs.get("kind", "other")}"' for p in rows)
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
