"""A real loopback HTTP server that speaks the OpenAI chat completions API.

Tests point orgkit's model seam at it (`llm.endpoint = server.url`) instead of
mocking orgkit's own code. Replies are canned: queue them with `reply(...)`
(used in order; the last one repeats when the queue runs dry) or answer with
a function of the request (`respond = lambda body: ...`). Every request body
is recorded in `requests`.

A canned reply is a string (the message content, finish_reason "stop"), a
dict (the JSON-encoded content), or a `Canned` for a finish reason, an HTTP
status or a delay of its own.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Canned:
    content: str = ""
    finish_reason: str = "stop"
    status: int = 200
    delay: float = 0.0


def _canned(value: Any) -> Canned:
    if isinstance(value, Canned):
        return value
    if isinstance(value, str):
        return Canned(value)
    return Canned(json.dumps(value))


class LLMServer:
    """Start with `start()`, stop with `stop()`; `url` is the base URL to configure."""

    def __init__(self, model: str = "loopback-model") -> None:
        self.model = model
        self.requests: list[dict] = []
        self.queue: list[Canned] = []
        self.respond: Callable[[dict], Any] | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def prompt_chars(self, where: Callable[[dict], bool] = lambda body: True) -> int:
        """Characters of every message content received (in the requests `where` selects): what the
        model would have had to read, so a prompt's cost can be measured without a model."""
        with self._lock:
            bodies = [b for b in self.requests if where(b)]
        return sum(len(m.get("content") or "") for b in bodies for m in b.get("messages", []))

    def reply(self, *values: Any) -> "LLMServer":
        """Queue canned replies, used in order."""
        with self._lock:
            self.queue.extend(_canned(v) for v in values)
        return self

    def next_reply(self, body: dict) -> Canned:
        with self._lock:
            self.requests.append(body)
            respond = self.respond
        if respond is not None:  # outside the lock: a slow answer must not hold up the others
            return _canned(respond(body))
        with self._lock:
            if not self.queue:
                return Canned("no canned reply left", status=500)
            return self.queue.pop(0) if len(self.queue) > 1 else self.queue[0]

    def start(self) -> "LLMServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                body["_path"] = self.path
                body["_authorization"] = self.headers.get("Authorization")
                canned = server.next_reply(body)
                if canned.delay:
                    time.sleep(canned.delay)
                if canned.status != 200:
                    payload = {"error": {"message": canned.content}}
                else:
                    payload = {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion",
                               "model": body.get("model") or server.model,
                               "choices": [{"index": 0, "finish_reason": canned.finish_reason,
                                            "message": {"role": "assistant", "content": canned.content}}]}
                data = json.dumps(payload).encode()
                self.send_response(canned.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # a short poll: stopping waits for it, once per test
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def main() -> None:
    """Run the server in its own process (for tests that kill orgkit mid-run).

    Reads canned replies as JSON lines from the file named by argv[1] and
    prints the base URL on stdout once listening.
    """
    import sys

    server = LLMServer()
    with open(sys.argv[1], encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                server.reply(Canned(**item) if isinstance(item, dict) and "content" in item else item)
    server.start()
    print(server.url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
