"""What the report's tests share: a fake section, the CLI run in this process, and an HTML page read
back as tags and text (the fixture that registers a section for one test, fake, is in conftest.py)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from bandwall import cli
from bandwall.report import render


class PageParts(HTMLParser):
    """Every tag with its attributes, and the text, of an HTML page."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def inproc(capsys, *args) -> tuple[int, str, str]:
    """Runs the CLI in this process (so test sections registered here take part)."""
    with pytest.raises(SystemExit) as e:
        cli.main([str(a) for a in args])
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


class FakeSection:
    title = "Fake widget"

    def __init__(self, raises: BaseException | None = None, order: int = 5, html_raises: bool = False):
        self.raises, self.order, self.html_raises = raises, order, html_raises

    def collect(self, ctx):
        if self.raises:
            raise self.raises

    def build(self, ctx, recs):
        return {"answer": 42}

    def terminal(self, ctx, data):
        ctx.console.print(f"the answer is {data['answer']}")

    def html(self, ctx, data):
        if self.html_raises:
            raise ValueError("bad markup")
        return render.html_table(["answer"], [[data["answer"]]])
