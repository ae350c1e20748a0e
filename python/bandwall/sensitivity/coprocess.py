"""The bandit and the pirate as co-processes: started once, driven by one command a line on their
stdin, each answer one JSON line on their stdout. They end when their stdin ends (close), when
bandwall ends (the kernel sends them SIGTERM: PR_SET_PDEATHSIG), and with a Ctrl-C to the
terminal's process group."""

from __future__ import annotations

import json
import subprocess

from bandwall.core import native, process
from bandwall.core.errors import RunFailed

EXIT_S = 5.0  # how long a co-process gets to end after its stdin closes, before it is killed


class CoProcess:
    def __init__(self, name: str, args: list[str]):
        self.name = name
        try:
            self.child = process.start(
                [native.executable(name), *args, "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except OSError as e:
            raise RunFailed(f"cannot start {name}: {e.strerror}") from e
        self.proc = self.child.proc
        try:
            self.ready = self._answer()
        except BaseException:
            self.close()
            raise

    def _answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            code = self.child.wait()
            last = self.child.error()
            raise RunFailed(f"{self.name} ended (exit code {code}){': ' + last if last else ''}")
        try:
            out = json.loads(line)
        except ValueError:
            raise RunFailed(f"{self.name} answered what is not JSON: {line.strip()[:80]!r}") from None
        if "error" in out:
            raise RunFailed(f"{self.name}: {out['error']}")
        return out

    def ask(self, *words) -> dict:
        try:
            self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # _answer names why it ended
        return self._answer()

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        if self.child.wait(EXIT_S) is None:
            self.child.stop(grace=0)
        self.child.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Bandit(CoProcess):
    """bandwall-bandit on cpus: run(duty) ... stop() -> what it took."""

    def __init__(self, cpus: list[int], pattern: str = "strided"):
        super().__init__("bandwall-bandit", ["--cpus", ",".join(map(str, cpus)), "--pattern", pattern])

    def run(self, duty: float) -> None:
        self.ask("run", f"{duty:g}")

    def stop(self) -> dict:
        return self.ask("stop")


class Pirate(CoProcess):
    """bandwall-pirate on cpu, holding at most max_bytes: hold(bytes) -> alone ns, stop() -> ns
    while holding, probe(cpu, bytes) -> does cpu share its cache."""

    def __init__(self, cpu: int, max_bytes: int):
        super().__init__("bandwall-pirate", ["--cpu", str(cpu), "--max", str(max_bytes)])

    def hold(self, nbytes: int) -> float:
        return self.ask("hold", nbytes)["alone_ns"]

    def stop(self) -> dict:
        return self.ask("stop")

    def probe(self, cpu: int, nbytes: int) -> dict:
        return self.ask("probe", cpu, nbytes)
