"""The report's first section, "What to do on this machine": recommendations read from records.

Each recommendation is a scorecard line (Line): the measured value with its spread, the threshold it
is judged against (taken from this machine's own measured ceilings: its STREAM bandwidth, its FMA
peak, its knee), the verdict, the fix as a command line, and the evidence (record ids and figures).
A difference within the spread of its figures reads "no difference beyond noise" (spread.NOISE),
never as a finding; an efficiency below EFFICIENCY_FLAG is flagged.

Every recommendation is one function of the evidence (a Rule) listed in PAGE, returning its lines
(none when the records it needs are absent). A new source of evidence (another command's records)
is a new function in the module of its topic (or a new module) added to PAGE: it reads
ev.all("its-tool") and returns Line objects.
"""

from bandwall.report.advice.base import (
    EFFICIENCY_FLAG,
    PROGRAM,
    STORED,
    Evidence,
    Line,
    Rule,
    command_lines,
    efficiency_flag,
    ids,
)
from bandwall.report.advice.binding import binding
from bandwall.report.advice.bounds import bound, roofline, stencil
from bandwall.report.advice.cores import cores, knee, surplus_under_noise
from bandwall.report.advice.engine import copy_engine
from bandwall.report.advice.placement import placement
from bandwall.report.advice.programs import program_sensitivity
from bandwall.report.advice.rails import rails
from bandwall.report.advice.variants import KNOBS, isa, pages

# The recommendations in page order.
PAGE: tuple[Rule, ...] = (
    cores,
    surplus_under_noise,
    program_sensitivity,
    roofline,
    stencil,
    binding,
    placement,
    isa,
    pages,
    copy_engine,
    rails,
)


def recommend(ev: Evidence) -> list[Line]:
    return [line for fn in PAGE for line in fn(ev)]


__all__ = [
    "EFFICIENCY_FLAG",
    "KNOBS",
    "PAGE",
    "PROGRAM",
    "STORED",
    "Evidence",
    "Line",
    "binding",
    "bound",
    "command_lines",
    "copy_engine",
    "cores",
    "efficiency_flag",
    "ids",
    "isa",
    "knee",
    "pages",
    "placement",
    "program_sensitivity",
    "rails",
    "recommend",
    "roofline",
    "Rule",
    "stencil",
    "surplus_under_noise",
]
