"""Drive a chat program in a real terminal (tmux, private socket) against the fake
OpenAI-compatible server, and time what a person sees: used by bench_replies.py
(Tangents alone, with floors) and side_by_side_pi.py (Tangents beside pi).

A program is a :class:`Program`: the command that starts it against a base URL
and the text its first screen shows once it accepts input. Everything is
measured from outside, on the pane's contents: the same for any program.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE_SERVER = ROOT / "tests" / "fake_provider.py"
TYPED = "Q"
"""The key typed to time echoes: no reply or screen text holds an upper-case Q."""
POLL = 0.004
FIRST_WORD = "FIRSTWORD"
LAST_WORD = "LASTWORD"
_VOCABULARY = (
    "alpha beta gamma delta stream paint frame token window layout widget "
    "render buffer socket parse chunk yield event loop terminal reply"
).split()


def long_reply_text(words: int) -> str:
    """``words`` words in paragraphs of 50, starting with FIRSTWORD, ending with LASTWORD."""
    body = [_VOCABULARY[i % len(_VOCABULARY)] for i in range(words - 2)]
    out = [FIRST_WORD]
    for i, word in enumerate(body, 1):
        out.append(("\n\n" if i % 50 == 0 else " ") + word)
    out.append(" " + LAST_WORD)
    return "".join(out)


# --- the fake server, as its own process -------------------------------------------


class FakeServer:
    """tests/fake_provider.py in a process of its own, so that it competes with
    neither the program measured nor this driver for one interpreter."""

    def __init__(self, workdir: Path) -> None:
        port_file = workdir / "fake.port"
        self.process = subprocess.Popen(
            [sys.executable, str(FAKE_SERVER), "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("the fake server did not start")
            time.sleep(0.02)
        self.base = f"http://127.0.0.1:{port_file.read_text().strip()}"

    @property
    def api_base(self) -> str:
        return self.base + "/v1"

    def script(self, *items: dict) -> None:
        data = json.dumps(list(items)).encode()
        request = urllib.request.Request(
            self.base + "/_fake/script", data, {"Content-Type": "application/json"}
        )
        urllib.request.urlopen(request, timeout=10).read()

    def requests(self) -> list[dict]:
        with urllib.request.urlopen(self.base + "/_fake/requests", timeout=10) as response:
            return json.loads(response.read())

    def raw_stream_seconds(self, text: str, chunk_size: int) -> tuple[float, float]:
        """How long a plain HTTP client takes to the reply's first chunk and to its
        end: the floors of Enter → first word and Enter → last word."""
        self.script({"type": "reply", "text": text, "chunk_size": chunk_size})
        body = json.dumps(
            {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        ).encode()
        request = urllib.request.Request(
            self.api_base + "/chat/completions", body, {"Content-Type": "application/json"}
        )
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=60) as response:
            first = None
            while response.read1(65536):
                first = first or time.perf_counter()
        return (first or start) - start, time.perf_counter() - start

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# --- a program in a tmux pane -------------------------------------------------------


@dataclass
class Program:
    name: str
    command: Callable[[str], list[str]]
    """The command line, given the fake server's OpenAI base URL (``.../v1``)."""
    ready: str
    """Text on the first screen once input is accepted."""
    env: dict[str, str] = field(default_factory=dict)


class Pane:
    """One program in a tmux server of its own (``tmux -L``)."""

    def __init__(self, program: Program, api_base: str, env: dict[str, str]) -> None:
        self.socket = f"tangents-bench-{uuid.uuid4().hex[:10]}"
        quoted = " ".join(_quote(part) for part in program.command(api_base))
        exported = " ".join(f"{k}={_quote(v)}" for k, v in {**env, **program.env}.items())
        self._tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "b", "-x", "120", "-y", "40",
            f"exec env -i {exported} {quoted}",
        )  # fmt: skip
        self.pid = int(self._tmux("display", "-p", "-t", "b", "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "b")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "b", "-l", text)

    def key(self, name: str) -> None:
        self._tmux("send-keys", "-t", "b", name)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 60.0) -> float:
        """perf_counter time at which ``predicate(screen)`` first held."""
        deadline = time.perf_counter() + timeout
        while True:
            screen = self.screen()
            now = time.perf_counter()
            if predicate(screen):
                return now
            if now > deadline:
                raise RuntimeError(f"timed out; the pane shows:\n{screen}")
            time.sleep(POLL)

    def wait_text(self, text: str, timeout: float = 60.0) -> float:
        return self.wait_for(lambda screen: text in screen, timeout)

    def tree(self) -> list[int]:
        """The program's process and its descendants."""
        pids, frontier = [], [self.pid]
        while frontier:
            pid = frontier.pop()
            pids.append(pid)
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            frontier.extend(int(child) for child in children)
        return pids

    def rss_mb(self) -> float:
        total = 0
        for pid in self.tree():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            match = re.search(r"VmRSS:\s+(\d+) kB", status)
            total += int(match.group(1)) if match else 0
        return total / 1024

    def cpu_seconds(self) -> float:
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.tree():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / ticks

    def close(self) -> None:
        self._tmux("kill-server")
        socket_dir = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        (socket_dir / self.socket).unlink(missing_ok=True)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def typed_run(screen: str) -> int:
    """How many typed keys are on screen (the input line may wrap)."""
    return sum(
        len(run) for run in re.findall(f"{TYPED}{{2,}}|(?<![A-Za-z]){TYPED}(?![a-z])", screen)
    )


# --- the measurements ------------------------------------------------------------------


def send(pane: Pane, text: str) -> float:
    """Type ``text`` and wait until it shows, then press Enter: the time of Enter."""
    pane.type(text)
    pane.wait_text(text, timeout=30)
    start = time.perf_counter()
    pane.key("Enter")
    return start


def echo_while(
    pane: Pane, done: Callable[[str], bool], interval: float = 0.05
) -> tuple[float, list[float]]:
    """Type a key every ``interval`` until ``done(screen)``: when done held, and
    each key's delay until it was on screen (keys still unseen count up to then)."""
    sent: list[float] = []
    latencies: list[float] = []
    seen = typed_run(pane.screen())
    base = seen
    next_key = time.perf_counter()
    while True:
        now = time.perf_counter()
        if now >= next_key:
            pane.type(TYPED)
            sent.append(time.perf_counter())
            next_key = now + interval
        screen = pane.screen()
        now = time.perf_counter()
        shown = typed_run(screen) - base
        while seen - base < min(shown, len(sent)):
            latencies.append(now - sent[seen - base])
            seen += 1
        if done(screen):
            latencies += [now - when for when in sent[seen - base :]]
            return now, latencies
        time.sleep(POLL)


def clear_typed(pane: Pane) -> None:
    """Erase the typed keys from the input line."""
    count = typed_run(pane.screen())
    for _ in range(count):
        pane.key("BSpace")
    pane.wait_for(lambda screen: typed_run(screen) == 0, timeout=30)


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@contextmanager
def launched(program: Program, server: FakeServer, env: dict[str, str]) -> Iterator[Pane]:
    pane = Pane(program, server.api_base, env)
    try:
        pane.wait_text(program.ready, timeout=60)
        yield pane
    finally:
        pane.close()


def first_replies(program: Program, server: FakeServer, env: dict[str, str]) -> dict[str, float]:
    """Enter → reply on screen for the first message after launch and the second,
    the slowest echo while the first was awaited, and the RSS after it."""
    with launched(program, server, env) as pane:
        start = send(pane, "ask-one")
        shown, echoes = echo_while(pane, lambda s: "echo: ask-one" in s)
        first = shown - start
        time.sleep(0.5)  # let it settle before reading memory
        rss = pane.rss_mb()
        clear_typed(pane)
        start = send(pane, "ask-two")
        second = pane.wait_text("echo: ask-two") - start
    return {"first": first, "second": second, "first_echo_max": max(echoes), "rss_mb": rss}


def first_message_shown(
    program: Program, server: FakeServer, env: dict[str, str]
) -> dict[str, float]:
    """Enter → the user's message on screen, for the first message after launch,
    typed as soon as the first screen shows (while the program may still be
    loading what shows messages); and a key typed once it is idle → echoed:
    one frame, the floor. On screen means below the first line (a title may
    name the message) while the input is empty again (its placeholder, the
    ``ready`` text, is back): not the input still holding it."""
    with launched(program, server, env) as pane:
        start = send(pane, "ask-one")
        shown = pane.wait_for(
            lambda screen: program.ready in screen and "ask-one" in screen.split("\n", 1)[1]
        )
        pane.wait_text("echo: ask-one")
        time.sleep(0.5)  # idle
        typed = time.perf_counter()
        pane.type(TYPED)
        echoed = pane.wait_for(lambda screen: typed_run(screen) > 0)
    return {"message_shown": shown - start, "idle_echo": echoed - typed}


def long_stream(
    program: Program, server: FakeServer, env: dict[str, str], words: int, chunk_size: int
) -> dict[str, float]:
    """A ``words``-word reply at the server's full speed: Enter → first word, Enter
    → last word, and key echoes meanwhile. A short exchange comes first, so
    that this measures painting, not what the first request loads."""
    with launched(program, server, env) as pane:
        start = send(pane, "warm-up")
        pane.wait_text("echo: warm-up")
        server.script({"type": "reply", "text": long_reply_text(words), "chunk_size": chunk_size})
        start = send(pane, "write-long")
        # Keys typed from the start. The first words scroll away as soon as
        # more than a screen has come: any of the reply's words will do.
        seen_first: list[float] = []
        # Frames a person saw move: the distinct screens polled from the first
        # word to the last, the typed keys left out (their echoes are not the
        # stream moving).
        frames: list[str] = []

        def first_then_last(screen: str) -> bool:
            if not seen_first and (
                FIRST_WORD in screen or LAST_WORD in screen or "alpha beta" in screen
            ):
                seen_first.append(time.perf_counter())
            if seen_first:
                moved = screen.replace(TYPED, "")
                if not frames or frames[-1] != moved:
                    frames.append(moved)
            return LAST_WORD in screen

        last, echoes = echo_while(pane, first_then_last)
        first = seen_first[0] - start
    streaming = max(last - seen_first[0], 1e-9)
    return {
        "first_word": first,
        "last_word": last - start,
        "stream_frames": len(frames),
        "stream_fps": len(frames) / streaming,
        "echo_p95": p95(echoes),
        "echo_median": statistics.median(echoes) if echoes else 0.0,
        "echoes": len(echoes),
    }


def exchanges(
    program: Program, server: FakeServer, env: dict[str, str], count: int
) -> dict[str, object]:
    """``count`` short exchanges in a row: Enter → reply on screen each, and CPU."""
    with launched(program, server, env) as pane:
        times = []
        cpu_start = pane.cpu_seconds()
        for i in range(count):
            start = send(pane, f"short-{i}")
            times.append(pane.wait_text(f"echo: short-{i}") - start)
        cpu = pane.cpu_seconds() - cpu_start
    return {"times": times, "cpu": cpu}


def base_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "TANGENTS_HOME": str(home / "tangents"),
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-bench-0000000000000000",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        **{
            name: os.environ[name]
            for name in ("PYTHONPATH", "TANGENTS_TEXTUAL_PATCHES")
            if os.environ.get(name)
        },
    }


def tangents_program_path() -> str:
    return shutil.which("tangents") or str(Path(sys.executable).parent / "tangents")


def tangents() -> Program:
    return Program(
        "tangents",
        lambda api_base: [
            tangents_program_path(),
            "--model",
            "openai/fake",
            "--api-base",
            api_base,
        ],
        "Message (enter sends",
        {"PYTHONPATH": str(ROOT)},
    )


@contextmanager
def workspace() -> Iterator[tuple[Path, FakeServer]]:
    with tempfile.TemporaryDirectory(prefix="tangents-bench-") as tmp:
        home = Path(tmp)
        server = FakeServer(home)
        try:
            yield home, server
        finally:
            server.close()
