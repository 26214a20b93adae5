"""Fetching the desired config and reporting status over HTTP: token, retries with backoff, a report kept
until the server has it. Against a small real HTTP server (stdlib) that can be told to fail."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from applier.agent import Agent, AgentSettings
from applier.backends.none import NoBackend
from applier.errors import PermanentError, TemporaryError
from applier.fetch import ServerClient, ServerSource, retry_after
from applier.hooks import Hooks
from applier.report import HttpReporter, NodeReport
from applier.retry import retrying
from tests.applier.doubles import RecordingRunner
from tests.applier.helpers import file_entry, make_root
from tests.builders import rendered_config

V1 = rendered_config("v1", [file_entry("/etc/a", "a\n")],
              annotations={"machineconfiguration.openshift.io/node-disruption-policy":
                           json.dumps({"files": [{"path": "/etc/a", "actions": [{"type": "None"}]}]})})


class Fake:
    """What the fake server answers and what it saw."""

    def __init__(self) -> None:
        self.fail_next = 0          # answer 503 to this many requests
        self.retry_after = ""       # with this Retry-After header
        self.fail_posts = 0         # answer 503 to this many status reports
        self.requests: list[tuple[str, str, str]] = []  # (method, path, authorization)
        self.statuses: list[dict] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Fake]]:
    fake = Fake()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, code: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            if code == 503 and fake.retry_after:
                self.send_header("Retry-After", fake.retry_after)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _common(self) -> bool:
            fake.requests.append((self.command, self.path, self.headers.get("Authorization", "")))
            if fake.fail_next:
                fake.fail_next -= 1
                self._answer(503, {"error": "busy"})
                return False
            return True

        def do_GET(self) -> None:
            if not self._common():
                return
            if self.path.startswith("/nodes/n1/desired"):
                self._answer(200, {"desiredConfig": V1.name, "pool": "worker"})
            elif self.path.partition("?")[0] == f"/rendered/{V1.name}":
                self._answer(200, V1.to_dict())
            else:
                self._answer(404, {"error": "not found"})

        def do_POST(self) -> None:
            if self.path.startswith("/nodes/n1/desired"):  # the update-slot claim
                self.do_GET()
                return
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            if not self._common():
                return
            if fake.fail_posts:
                fake.fail_posts -= 1
                self._answer(503, {"error": "busy"})
                return
            fake.statuses.append(body)
            self._answer(200, body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", fake
    httpd.shutdown()


def test_fetch_with_token_and_retries(server: tuple[str, Fake]) -> None:
    url, fake = server
    fake.fail_next = 2
    source = ServerSource(ServerClient(url, token="s3cret"), attempts=4, base_delay=0.01)
    got = source.desired("n1", "worker", None)
    assert got is not None and got.name == V1.name
    assert [r[1] for r in fake.requests] == ["/nodes/n1/desired?pool=worker&prestage=1"] * 3 + [f"/rendered/{V1.name}"]
    assert {r[2] for r in fake.requests} == {"Bearer s3cret"}


def test_node_token_goes_to_the_node_routes_and_the_rendered_configs(server: tuple[str, Fake]) -> None:
    url, fake = server
    client = ServerClient(url, token="pool-token", node_token="node-token")
    got = ServerSource(client, attempts=1).desired("n1", "worker", None)
    assert got is not None and got.name == V1.name
    assert HttpReporter(client, attempts=1).send(NodeReport("n1", "worker", V1.name, V1.name, "Done", "applied"))
    assert [(r[1].partition("?")[0], r[2]) for r in fake.requests] == [
        ("/nodes/n1/desired", "Bearer node-token"),
        (f"/rendered/{V1.name}", "Bearer node-token"),  # asked as the node (?node=n1): a relabelled node's too
        ("/nodes/n1/status", "Bearer node-token"),
    ]
    assert fake.requests[1][1].endswith("?node=n1")
    pool_only = ServerClient(url, token="pool-token")
    fake.requests.clear()
    assert ServerSource(pool_only, attempts=1).desired("n1", "worker", None) is not None
    assert [(r[1], r[2]) for r in fake.requests][1] == (f"/rendered/{V1.name}", "Bearer pool-token")


def test_fetch_gives_up_with_temporary_error(server: tuple[str, Fake]) -> None:
    url, fake = server
    fake.fail_next = 10
    with pytest.raises(TemporaryError):
        ServerSource(ServerClient(url), attempts=3, base_delay=0.01).desired("n1", "worker", None)
    assert len(fake.requests) == 3


def test_404_is_permanent(server: tuple[str, Fake]) -> None:
    url, _ = server
    with pytest.raises(PermanentError):
        ServerClient(url).json("/nope")


def test_backoff_doubles_and_caps() -> None:
    delays: list[float] = []
    calls = iter(range(10))

    def flaky() -> int:
        if next(calls) < 5:
            raise TemporaryError("x", "away")
        return 1

    assert retrying(flaky, attempts=6, base_delay=0.5, max_delay=3.0, sleep=delays.append) == 1
    assert delays == [0.5, 1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize(("asked", "waits"), [
    ([0.0, 0.0, 0.0], [0.5, 1.0, 2.0]),
    ([5.0, 0.0, 0.0], [5.0, 1.0, 2.0]),
    ([0.0, 0.2, 10.0], [0.5, 1.0, 10.0]),
], ids=["backoff-only", "longer-first", "longer-than-the-cap"])
def test_backoff_never_waits_less_than_the_error_asks(asked: list[float], waits: list[float]) -> None:
    delays: list[float] = []
    errors = iter(asked)

    def flaky() -> int:
        delay = next(errors, None)
        if delay is not None:
            raise TemporaryError("x", "away", delay=delay)
        return 1

    assert retrying(flaky, attempts=4, base_delay=0.5, max_delay=3.0, sleep=delays.append) == 1
    assert delays == waits


@pytest.mark.parametrize(("header", "seconds"), [
    (None, 0.0), ("", 0.0), ("7", 7.0), (" 7 ", 7.0), ("99999999", 3600.0), ("-1", 0.0), ("soon", 0.0),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
], ids=["absent", "empty", "seconds", "spaces", "capped", "negative", "garbage", "date-past"])
def test_retry_after(header: str | None, seconds: float) -> None:
    assert retry_after(header) == seconds


def test_a_503_asks_for_its_retry_after(server: tuple[str, Fake]) -> None:
    url, fake = server
    fake.fail_next, fake.retry_after = 1, "4"
    with pytest.raises(TemporaryError) as err:
        ServerClient(url).json("/rendered/x")
    assert err.value.delay == 4.0


def test_report_kept_until_delivered(tmp_path: Path, server: tuple[str, Fake]) -> None:
    url, fake = server
    client = ServerClient(url)
    agent = Agent(AgentSettings(node="n1", root=make_root(tmp_path / "root"), durable=False),
                  source=ServerSource(client, attempts=2, base_delay=0.01),
                  reporter=HttpReporter(client, attempts=2, base_delay=0.01), backend=NoBackend(),
                  runner=RecordingRunner())
    result = agent.sync()
    assert result.state == "Done" and fake.statuses[-1]["state"] == "Done"
    fake.fail_posts = 2  # the next report cannot get through (both attempts refused)
    (tmp_path / "root/etc/a").write_text("drift\n")
    agent.sync()
    last = agent.state.last_report()
    assert last is not None and last["acked"] is False and last["report"]["message"] == "repaired drift: file /etc/a"
    before = len(fake.statuses)
    agent.sync()  # server back: the Done report of this sync is delivered
    assert len(fake.statuses) == before + 1 and agent.state.last_report()["acked"] is True


def test_report_body_truncates_message() -> None:
    body = NodeReport("n1", "worker", "a", "b", "Degraded", "x" * 5000).body()
    assert len(body["message"]) == 2000 and set(body) == {"pool", "currentConfig", "desiredConfig", "state",
                                                         "message"}


@pytest.mark.parametrize("hooks,ran,error", [
    (Hooks(), False, None),
    (Hooks(drain="true"), True, None),
    (Hooks(drain="echo no >&2; exit 3"), False, "failed to drain node n1: `echo no >&2; exit 3` exited 3: no"),
    (Hooks(drain="sleep 5", timeout=0.2), False, "failed to drain node n1: `sleep 5` timed out after 0.2 s"),
], ids=["none-configured", "ok", "fails", "timeout"])
def test_drain_hook(hooks: Hooks, ran: bool, error: str | None) -> None:
    if error is None:
        assert hooks.run_drain("n1") is ran
    else:
        with pytest.raises(PermanentError) as err:
            hooks.run_drain("n1")
        assert err.value.message == error


@pytest.mark.parametrize(("wait", "query"), [
    (0.0, "/nodes/n1/desired?pool=worker&prestage=1"),
    (2.5, "/nodes/n1/desired?pool=worker&prestage=1&wait=2.500"),
    (60.0, "/nodes/n1/desired?pool=worker&prestage=1&wait=60.000"),
    (3600.0, "/nodes/n1/desired?pool=worker&prestage=1&wait=300.000"),  # the server's limit (fleet.rollout.MAX_HANDOUT_WAIT)
], ids=["once", "fraction", "interval", "bounded"])
def test_the_claim_asks_to_be_held_up_to_the_interval(server: tuple[str, Fake], wait: float, query: str) -> None:
    url, fake = server
    got = ServerSource(ServerClient(url), attempts=1, wait=wait).desired("n1", "worker", None)
    assert got is not None and got.name == V1.name
    assert ("POST", query) in [(m, p) for m, p, _ in fake.requests]


class Silent:
    """A server that takes connections and never answers (one whose loop is stuck), counting them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize(("prompt", "tries"), [(True, 1), (False, 3)], ids=["drained", "not-drained"])
def test_a_report_sent_while_drained_is_one_attempt(prompt: bool, tries: int) -> None:
    """Sent while the node is drained, a report tries once and gives up at its deadline (PROMPT_TIMEOUT) on a server
    that does not answer, left for the next report; any other report retries."""
    silent = Silent()
    try:
        reporter = HttpReporter(ServerClient(silent.url, timeout=0.5), attempts=3, base_delay=0.01, max_delay=0.01)
        assert not reporter.send(NodeReport("n1", "worker", V1.name, V1.name, "Working", "drained"), prompt=prompt)
        assert len(silent.held) == tries
        assert "server unreachable" in reporter.errors[-1]
    finally:
        silent.close()
