"""Terminal and CSV views of interference records: each case's median, min and max over the
rounds, and the verdict with its figures."""

from __future__ import annotations

from bandwall.display import table

LABELS = {
    "all-alone": "every core, alone",
    "all-noise": "every core, beside the noise",
    "knee-alone": "knee's cores, alone",
    "knee-noise": "knee's cores, noise on a surplus core",
}


def render(con, rec: dict) -> None:
    c, r = rec["config"], rec["result"]
    unit = r["unit"]
    what = c["kernel"] or " ".join(c["command"])
    where = f"pinned to CPU {c['noise_cpu']}" if c["noise_placement"] == "pinned" else "left to the scheduler"
    rows = [
        [LABELS[x["case"]], x["cores"], x["median"], x["min"], x["max"], len(x["values"])] for x in r["cases"]
    ]
    con.print(
        table(
            f"interference: {what} beside {c['noise_command'] or c['noise']} noise ({where})",
            ["case", "cores", f"median {unit}", f"min {unit}", f"max {unit}", "rounds"],
            rows,
            caption=f"knee: {c['cores_knee']} cores ({c['knee_source']})",
        )
    )
    v = r["verdict"]
    con.print(f"verdict: {v['text']}")
    for label, figures in v["figures"].items():
        con.print(f"  {label}: {figures}")
    for line in v.get("advice", []):
        con.print(f"  - {line}")


def csv_rows(rec: dict):
    unit = rec["result"]["unit"]
    return (
        ["case", "cores", "noise", f"median_{unit}", f"min_{unit}", f"max_{unit}", "rounds"],
        [
            [x["case"], x["cores"], x["noise"], x["median"], x["min"], x["max"], len(x["values"])]
            for x in rec["result"]["cases"]
        ],
    )
