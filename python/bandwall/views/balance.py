"""Terminal and CSV views of balance records: the summary and the table of applications."""

from __future__ import annotations

from bandwall.display import table
from bandwall.views.host import steal_notes

APP_COLUMNS = ["code", "B/F needed", "prec.", "machine B/F", "bound", "% of peak", "source"]


def app_rows(result: dict) -> list[list]:
    rows = [
        [
            a["name"],
            a["bytes_per_flop"],
            a["precision"],
            a["machine_bytes_per_flop"],
            a["bound"],
            100 * a["attainable_share_of_peak"],
            a["source"],
        ]
        for a in result["applications"]
    ]
    rows += [
        [f"{c['name']} (a machine)", None, "dp", c["bytes_per_flop"], "-", None, c["source"]]
        for c in result["contrast"]
    ]
    return rows


def summary_lines(result: dict) -> list[str]:
    return [
        f"best bandwidth {result['bandwidth_GBps']:.2f} GB/s; FMA peak {result['peak_gflops_dp']:.1f} GFlop/s "
        f"double, {result['peak_gflops_sp']:.1f} single ({result['per_core_gflops_dp']:.1f} / "
        f"{result['per_core_gflops_sp']:.1f} per core)",
        f"machine balance: {result['bytes_per_flop_dp']:.3f} B/F double, {result['bytes_per_flop_sp']:.3f} "
        f"B/F single",
    ]


def render(con, rec: dict) -> None:
    r = rec["result"]
    for line in summary_lines(r):
        con.print(line)
    con.print(
        table(
            "Byte/flop balance",
            APP_COLUMNS,
            app_rows(r),
            caption=f"bandwidth from stream {rec['config']['kernel']}; attainable share = "
            f"min(1, machine B/F / needed B/F)",
        )
    )
    for note in steal_notes([rec]):
        con.print(note)
