"""Test doubles of the agent's seams (applier/fetch.py `DesiredSource`, applier/report.py `Reporter`,
applier/runner.py `Runner`): a desired config held in memory, reports kept in a list, and a command runner that
records each command and answers from a table of canned results (e.g. documented `rpm-ostree status --json`
samples). They live here, not in the product: the agent ships only its real parts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from applier.report import NodeReport
from applier.runner import Result
from fleet.rendered import RenderedConfig


@dataclass
class MemorySource:
    """The desired config held in memory : set `config` to move the target."""

    config: RenderedConfig | None = None

    def desired(self, node: str, pool: str | None, current: RenderedConfig | None) -> RenderedConfig | None:
        """The config last set."""
        return self.config


@dataclass
class MemoryReporter:
    """Keeps reports in a list ."""

    reports: list[NodeReport] = field(default_factory=list)
    prompt: list[bool] = field(default_factory=list)  # whether each report was sent not to wait (`Reporter.send`)

    def send(self, report: NodeReport, *, prompt: bool = False) -> bool:
        """Remember the report."""
        self.reports.append(report)
        self.prompt.append(prompt)
        return True


@dataclass
class RecordingRunner:
    """In-memory runner: records every command; `answers` maps a command prefix (tuple) to a Result or callable."""

    answers: dict[tuple[str, ...], Result | Callable[[tuple[str, ...]], Result]] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def run(self, args: Sequence[str], *, timeout: float | None = None, input: str | None = None) -> Result:
        cmd = tuple(args)
        self.calls.append(cmd)
        best: tuple[str, ...] | None = None
        for prefix in self.answers:
            if cmd[:len(prefix)] == prefix and (best is None or len(prefix) > len(best)):
                best = prefix
        if best is None:
            return Result(cmd, 0)
        answer = self.answers[best]
        return answer(cmd) if callable(answer) else Result(cmd, answer.returncode, answer.stdout, answer.stderr)
