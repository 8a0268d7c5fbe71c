"""Real Syncthing instances for sync tests, on loopback only: each its own home
in tmp_path, its GUI/API and sync ports on 127.0.0.1, global and local
discovery, relays, NAT traversal, usage reports and upgrades off."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FOLDER_ID = "tangents"

_OFF = {
    "globalAnnounceEnabled": "false",
    "localAnnounceEnabled": "false",
    "relaysEnabled": "false",
    "natEnabled": "false",
    "startBrowser": "false",
    "urAccepted": "-1",
    "autoUpgradeIntervalH": "0",
    "crashReportingEnabled": "false",
    "reconnectionIntervalS": "2",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Syncthing:
    home: Path
    folder: Path
    port: int
    device_id: str
    process: subprocess.Popen[bytes] | None = None

    @classmethod
    def generate(cls, home: Path, folder: Path) -> Syncthing:
        home.mkdir(parents=True)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".stfolder").mkdir(exist_ok=True)
        subprocess.run(
            ["syncthing", "generate", f"--home={home}", "--no-default-folder"],
            env=_env(home),
            check=True,
            capture_output=True,
            timeout=120,
        )
        root = ET.parse(home / "config.xml").getroot()
        device = root.find("device")
        assert device is not None
        return cls(home, folder, free_port(), device.attrib["id"])

    def configure(self, peer: Syncthing) -> None:
        """Listen on loopback only, know ``peer`` by id and address, and share
        one folder with it."""
        path = self.home / "config.xml"
        tree = ET.parse(path)
        root = tree.getroot()
        gui = root.find("gui")
        assert gui is not None
        _set(gui, "address", f"127.0.0.1:{free_port()}")
        options = root.find("options")
        assert options is not None
        _set(options, "listenAddress", f"tcp://127.0.0.1:{self.port}")
        for name, value in _OFF.items():
            _set(options, name, value)
        other = ET.SubElement(root, "device", id=peer.device_id, name="peer")
        ET.SubElement(other, "address").text = f"tcp://127.0.0.1:{peer.port}"
        shared = ET.SubElement(
            root,
            "folder",
            id=FOLDER_ID,
            label=FOLDER_ID,
            path=str(self.folder),
            type="sendreceive",
            rescanIntervalS="1",
            fsWatcherEnabled="false",
        )
        for device_id in (self.device_id, peer.device_id):
            ET.SubElement(shared, "device", id=device_id)
        tree.write(path)

    def start(self) -> None:
        with open(self.home / "syncthing.log", "wb") as log:
            self.process = subprocess.Popen(
                [
                    "syncthing",
                    "serve",
                    f"--home={self.home}",
                    "--no-browser",
                    "--no-restart",
                    "--no-upgrade",
                    "--no-default-folder",
                ],
                env=_env(self.home),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def log(self) -> str:
        return (self.home / "syncthing.log").read_text(errors="replace")[-4000:]


def _set(parent: ET.Element, name: str, value: str) -> None:
    element = parent.find(name)
    if element is None:
        element = ET.SubElement(parent, name)
    element.text = value


def _env(home: Path) -> dict[str, str]:
    """Syncthing's environment: its home as HOME too, so nothing reaches the
    user's home directory."""
    keep = {name: os.environ[name] for name in ("PATH", "LANG", "TMPDIR") if name in os.environ}
    return {**keep, "HOME": str(home), "STNODEFAULTFOLDER": "1", "STNOUPGRADE": "1"}


def wait_until(condition: Callable[[], bool], what: str, timeout: float, *logs: Syncthing) -> None:
    """Poll ``condition`` until it holds; fail with the engines' logs after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            tails = "\n".join(engine.log() for engine in logs)
            raise AssertionError(f"{what}: not within {timeout:g} s\n{tails}")
        time.sleep(0.2)
