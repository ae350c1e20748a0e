"""Report section `survey`: the nodes of the latest stored survey side by side (the per-node plot,
their figures with spread, the links of the ring) and the nodes and links that stand out, with why:
the verdict's lines are the terminal's (views.survey.verdict_lines: each outlier's claim's words, or
"no node stands out" with the decision rule's comparisons counted by direction, and the near-misses
in their own words), so the page and the terminal say the same.
A survey measures an allocation (`bandwall survey` inside salloc, or --hostfile): the report shows
one stored, it does not start one."""

from __future__ import annotations

from bandwall.core.errors import Unavailable
from bandwall.report import Context, last_of, plots, sections, survey_plot
from bandwall.report.render import figures, html_table, note
from bandwall.views import survey as view


class SurveySection:
    title = "Nodes of an allocation"
    order = 85

    def collect(self, ctx: Context) -> None:
        stored = ctx.store.list(tool="survey", limit=1) if ctx.store is not None else []
        if not stored:
            raise Unavailable(
                "no survey stored: run `bandwall survey` inside an allocation (salloc -N 4 bandwall survey "
                "--short) or with --hostfile, then the report again"
            )
        ctx.use(stored[0])

    def build(self, ctx: Context, recs: list[dict]) -> dict:
        return {"record": last_of(recs, "survey")}

    def terminal(self, ctx: Context, data: dict) -> None:
        view.render(ctx.console, data["record"])

    def html(self, ctx: Context, data: dict) -> str:
        rec = data["record"]
        r = rec["result"]
        columns, rows = view.node_table(r)
        parts = [
            note(f"{len(r['nodes'])} nodes, judged {r['judged']} (margin {rec['config']['margin']:.0%})."),
            figures(plots.img_tag(survey_plot.figure(rec), alt="each figure per node, flagged nodes marked")),
            html_table(columns, rows, caption=view.NODE_TITLE),
        ]
        if r.get("links"):
            parts.append(
                html_table(view.LINK_COLUMNS, view.link_rows(r), caption="links, a ring of ping-pongs")
            )
        parts += [note(line) for line in view.notes(r)]
        if r["outliers"]:
            # the reasons are the verdict's lines below, as in the terminal
            rows = [row[:-1] for row in view.outlier_rows(r)]
            parts.append(html_table(view.OUTLIER_COLUMNS[:-1], rows, caption="outliers"))
        parts += [note(line) for line in view.verdict_lines(r)]
        return "\n".join(parts)


sections.register("survey")(SurveySection())
