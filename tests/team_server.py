"""The team server in a process of its own for the tests, and the CLI's JSON answers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ORGKIT = str(Path(sys.executable).with_name("orgkit"))


def orgkit(notes: Path, env: dict, *args: str) -> dict | list:
    done = subprocess.run([ORGKIT, *args, "--notes", str(notes), "--json"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class Server:
    """`orgkit serve --http 127.0.0.1:0 --workers N` in a process of its own; its stderr lines kept."""

    def __init__(self, notes: Path, env: dict, workers: int) -> None:
        self.proc = subprocess.Popen([ORGKIT, "serve", "--http", "127.0.0.1:0", "--workers", str(workers),
                                      "--notes", str(notes)], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.lines: list[str] = []
        self._more = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        line = self.wait_for("serving")
        self.url = re.search(r"http://\S+", line).group(0).rstrip(")")
        self.port = int(self.url.rsplit(":", 1)[1])

    def _read(self) -> None:
        for line in self.proc.stderr:
            with self._more:
                self.lines.append(line)
                self._more.notify_all()

    def wait_for(self, pattern: str, after: int = 0, timeout: float = 30) -> str:
        """The first stderr line from index `after` on that matches `pattern`."""
        end = time.monotonic() + timeout
        with self._more:
            while True:
                found = next((x for x in self.lines[after:] if re.search(pattern, x)), None)
                if found is not None:
                    return found
                assert time.monotonic() < end and self.proc.poll() is None, "".join(self.lines)
                self._more.wait(0.1)

    def op(self, name: str, token: str | None, timeout: float = 30, **params) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.post(f"{self.url}/ops/{name}", json=params, headers=headers, timeout=timeout)

    def close(self) -> None:
        """Stop the server; its workers too, at once if they take more than a second."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
