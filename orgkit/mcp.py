"""`orgkit mcp`: the operation registry as a Model Context Protocol server over stdio.

Built on the official `mcp` SDK's low-level `Server`, because the tools come
from the registry with their own JSON Schemas rather than from Python
signatures. Every operation marked for MCP is a tool (read-only ones carry the
read-only annotation), unless its capability is off or its own setting (review
decisions: `mcp.allow_review`) is not on; skills are prompts taking a `query`;
every node is a resource `orgkit://node/ID` holding its org text, and a file or
heading without an ID is one by its locator, `orgkit://unit/LOCATOR`.

Every request has a caller (the token's on the team server, `STDIO` on a
pipe) and a guard (`GUARDS`): a tool is guarded by its own operation, a
prompt or resource by the operation that answers it, each through the
operations layer's one rule (`ops.refusal`, `ops.call`); a request without a
guard is not served.

Every tool declares the `outputSchema` of its answer, read from the registry
(`Op.output_schema`: `{result, warnings, errors?}`, where `result` has the
shape the operation declares), and answers with that document as
`structuredContent` and as one JSON text block (for clients that read only
text). `read`, `context` and `recall` also link each note they give as a
resource (`orgkit://node/ID`, or `orgkit://unit/LOCATOR`, which `resources/read` opens). An operation that
reports progress (`Op.progress`) sends `notifications/progress` when the
client gave a progress token. The annotations come from the registry's write
flags (`writes`, `destructive`, `idempotent`).

`initialize` is answered at once: the word index, the embedding model and the
vectors load in a background thread started by the first request after it,
and a search that comes before the model is ready ranks by words and says so
in its warnings. A failed call is a tool error (`isError`), never the end of
the server. Calls run in worker threads, side by side, on one `OpContext`,
each under the per-call deadline `serve.call_timeout`. Request lines are read
within `serve.max_line_bytes` (`BoundedLines`), and a frame that is too long,
not JSON or not JSON-RPC gets a JSON-RPC error reply.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from typing import Any, Callable, Iterator
from urllib.parse import quote, unquote

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from . import __version__
from .config import SETTINGS, Config
from .errors import OrgkitError, Refused, say
from .ops import Op, OpContext, Outcome, call_within, capability_on, offered, refusal, registry
from .ops.answers import answer, message, reply
from .roles import STDIO, Identity

NODE_URI = "orgkit://node/{id}"
NODE_PREFIX = NODE_URI.split("{")[0]
UNIT_URI = "orgkit://unit/{locator}"  # a file or heading without an ID, by its locator (percent-encoded)
UNIT_PREFIX = UNIT_URI.split("{")[0]
ORG_MIME = "text/x-org"
INSTRUCTIONS = (
    "orgkit is memory over the user's org notes. Find notes with scan (headline words) or search "
    "(meaning and words), then read them whole by ID with read (depth follows links); context does "
    "both within a token budget. Node IDs are also resources orgkit://node/ID; a hit without an ID "
    "carries a locator (FILE.org::*Heading), which read takes and orgkit://unit/LOCATOR opens."
)


def offered_tools(config: Config | None, identity: Identity) -> dict[str, Op]:
    """The operations MCP offers `identity` under `config`: those marked for it, of an enabled
    capability, that its role may call. For the local client (stdio), an operation's own setting
    (such as `mcp.allow_review`) must be on too; for a token of the team server, its role decides."""
    return {name: op for name, op in offered(config).items()
            if op.mcp and refusal(op, identity) is None
            and (not identity.local or op.mcp_setting is None or (config is not None and config[op.mcp_setting]))}


TOOLS = "tools"  # guarded tool by tool, each by its own operation
PROTOCOL = "protocol"  # the protocol's own handshake: answers nothing of the notes
# Each request the server answers and what guards it: TOOLS, PROTOCOL, or the operation
# that answers it, whose role a caller needs (ops.refusal decides, as for a tool). A handler
# missing here is not served (tests/test_guards.py walks the server's handlers).
GUARDS: dict[str, str] = {
    "ping": PROTOCOL, "server/discover": PROTOCOL,
    "tools/list": TOOLS, "tools/call": TOOLS,
    "prompts/list": "skills_list", "prompts/get": "skills_prompt",
    "resources/list": "nodes", "resources/templates/list": "read", "resources/read": "read",
}


# The operations whose answers name notes a client may want to open: each such note is also a resource link.
LINKS_NOTES = frozenset({"read", "context", "recall"})
ANSWER = ("The answer (structuredContent, and the same JSON as text) is {result, warnings, errors?}; "
          "result is ")


def tool(op: Op) -> types.Tool:
    """The MCP tool of one operation: its parameters, its answer's schema and its annotations."""
    description = op.description
    if op.result:
        description += f" {ANSWER}{op.result}."
    if op.name in LINKS_NOTES:
        description += f" Each note is also given as a resource link {NODE_URI}."
    return types.Tool(name=op.name, description=description, input_schema=op.schema(),
                      output_schema=op.output_schema(), annotations=tool_annotations(op))


def tool_annotations(op: Op) -> types.ToolAnnotations:
    """What a client may assume of a tool, from the registry's write flags."""
    return types.ToolAnnotations(read_only_hint=not op.writes, destructive_hint=op.writes and op.destructive,
                                 idempotent_hint=not op.writes or op.idempotent, open_world_hint=False)


class Offer:
    """The tools a server offers under its config to each role, built once.

    A server's config is resolved once for its life, and what is offered depends
    only on it and the caller's role; building the listing (and checking each
    capability) for every call was a cost of the surface, not of the work.
    """

    def __init__(self) -> None:
        self._built: dict[tuple[int, str, bool], tuple[Any, dict[str, Op], list[types.Tool]]] = {}

    def __call__(self, config: Config | None, identity: Identity) -> tuple[dict[str, Op], list[types.Tool]]:
        key = (id(config), identity.role, identity.local)
        built = self._built.get(key)
        if built is None or built[0] is not config:
            ops = offered_tools(config, identity)
            built = (config, ops, [tool(op) for op in ops.values()])
            self._built[key] = built
        return built[1], built[2]


def note_links(name: str, result: Any) -> list[types.ResourceLink]:
    """A resource link for each note an answer of `name` gives (read, context and recall), each once."""
    if name not in LINKS_NOTES:
        return []
    notes = result.get("included", []) if isinstance(result, dict) else result
    links: dict[str, types.ResourceLink] = {}
    for note in notes if isinstance(notes, list) else []:
        ident = note.get("id") or note.get("locator") if isinstance(note, dict) else None
        if isinstance(ident, str) and ident and ident not in links:
            uri = NODE_PREFIX + ident if note.get("id") else UNIT_PREFIX + quote(ident, safe="/")
            links[ident] = types.ResourceLink(name=note.get("title") or ident, uri=uri, mime_type=ORG_MIME)
    return list(links.values())


def _refusal(name: str, config: Config | None, identity: Identity, offered_now: dict[str, Op]) -> str | None:
    """Why the tool `name` cannot be called here (`offered_now` are the caller's tools), or None when it can."""
    if name in offered_now:
        return None
    op = registry().get(name)
    if not identity.local and op is not None and op.mcp and capability_on(op, config):
        return None  # ops.call refuses a caller without the role, saying which it needs
    if op is not None and op.mcp and op.mcp_setting is not None and capability_on(op, config):
        setting = SETTINGS[op.mcp_setting]
        return (f"{name} is offered over MCP only with {op.mcp_setting} = true "
                f"(in the user's config file, or {setting.env}=1 in the server's environment; "
                "never from the notes' orgkit.toml)")
    if op is not None and op.mcp and not capability_on(op, config):
        return None  # the call itself says how to turn the capability on
    return f"unknown tool {name!r} (tools: {', '.join(sorted(offered_now))})"


def _failure(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


HANG_UP_GRACE = 0.3  # seconds a call that writes gets to finish after the client hangs up
HANG_UP_SETTLE = 0.1  # then the seconds the normal shutdown gets before the process leaves anyway


class _Writes:
    """The calls in flight that write: after a hang-up they get a moment to finish whole."""

    def __init__(self) -> None:
        self._idle = threading.Condition()
        self._count = 0

    @contextlib.contextmanager
    def held(self, name: str) -> Iterator[None]:
        op = registry().get(name)
        if op is None or not op.writes:
            yield
            return
        with self._idle:
            self._count += 1
        try:
            yield
        finally:
            with self._idle:
                self._count -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._count == 0, timeout)


WRITES = _Writes()


async def run_op(ctx: OpContext, name: str, args: dict[str, Any], identity: Identity | None,
                 progress: Callable[[Any], None] | None = None) -> Outcome:
    """Run one operation in a worker thread, so the event loop keeps answering."""
    def work() -> Outcome:
        with WRITES.held(name):
            return call_within(ctx, name, args, identity=identity, progress=progress)

    return await anyio.to_thread.run_sync(work)


def _leave_after_hang_up() -> None:
    """End the process soon after the client closed stdin, whatever is still running.

    A call that writes (a deposit) gets `HANG_UP_GRACE` to finish whole, and
    the normal shutdown `HANG_UP_SETTLE` after it; reads in flight are
    dropped, their client gone. Waiting no longer than the writes need, and
    never longer than the two together, keeps the exit within a second on a
    busy machine, where a deposit's fsyncs alone may take longer (a thread
    inside an fsync holds the process's end until the disk answers it; no
    wait here adds to that). Whatever is left (a model call of
    the background librarian, the warm-up's embedding, a longer write) ends as
    a crash would, and the next start picks it up: every note is written whole
    by the one writer, every index and memory write is a transaction, and a
    deposit left mid-way is repaired.
    """
    WRITES.wait_idle(HANG_UP_GRACE)
    time.sleep(HANG_UP_SETTLE)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def progress_sender(rctx: Any) -> Callable[[Any], None]:
    """A `ctx.progress` hook sending the client `notifications/progress` for this request (the
    SDK sends nothing when the client gave no progress token). It is called from the
    operation's thread; a report that can no longer be sent (the request is over) is dropped."""
    token = anyio.lowlevel.current_token()
    session = rctx.session

    def send(state: Any) -> None:
        message = f"{state.done}/{state.total} {state.unit}"
        try:
            anyio.from_thread.run(session.report_progress, float(state.done), float(state.total or 0) or None,
                                  message, token=token)
        except Exception:  # noqa: BLE001 - progress is a courtesy; the work goes on without it
            pass

    return send


def build_server(ctx: OpContext, *, warm_up: bool = True,
                 identify: Callable[[Any], Identity | None] | None = None) -> Server:
    """The MCP server over `ctx`; with `warm_up`, the first request after `initialize` starts loading.

    `identify` (the team server's) gives the verified caller of a request from its
    request context: tools are then offered and refused by that caller's role, and
    the operations record it as the actor. Without it the caller is `STDIO`.
    """
    if identify is None:
        ctx.surface = "mcp"

    def caller(rctx: Any) -> Identity | None:
        return identify(rctx) if identify is not None else STDIO

    def guarded(method: str, rctx: Any) -> Identity:
        """The caller of `rctx`, when the operation guarding `method` allows it (else an MCP error)."""
        identity = caller(rctx)
        refused = refusal(registry()[GUARDS[method]], identity)
        if refused is not None or identity is None:
            exc = Refused(refused or f"{method}: the request names no caller")
            raise MCPError(answer(exc).jsonrpc, message(exc))
        return identity

    async def served(method: str, rctx: Any, args: dict[str, Any]) -> Any:
        """The result of the operation guarding `method` (GUARDS), called as the caller of `rctx`;
        a refusal or failure is the request's MCP error."""
        identity = guarded(method, rctx)
        try:
            return (await run_op(ctx, GUARDS[method], args, identity)).result
        except (OrgkitError, OSError) as exc:
            raise MCPError(answer(exc).jsonrpc, message(exc)) from None

    def warming() -> None:
        if warm_up:
            ctx.start_warm_up()

    offer = Offer()

    async def list_tools(rctx: Any, params: Any) -> types.ListToolsResult:
        warming()
        identity = caller(rctx)
        return types.ListToolsResult(tools=offer(ctx.optional_config(), identity)[1] if identity else [])

    def input_schema(name: str) -> dict[str, Any] | None:
        """A tool's parameters, for the transport's check of Mcp-Param headers (without a whole listing)."""
        op = registry().get(name)
        return op.schema() if op is not None and op.mcp else None

    async def call_tool(rctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        warming()
        identity = caller(rctx)
        if identity is None:
            return _failure(f"{params.name}: refused: the request names no caller")
        config = ctx.optional_config()
        refused = _refusal(params.name, config, identity, offer(config, identity)[0])
        if refused is not None:
            return _failure(refused)
        op = registry()[params.name]
        hook = progress_sender(rctx) if op.progress else None
        try:
            outcome = await run_op(ctx, params.name, dict(params.arguments or {}), identity, hook)
        except Exception as exc:  # a bug too must not end the server; the client hears of it
            return _failure(message(exc))
        data = reply(outcome)
        text = json.dumps(data, ensure_ascii=False)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        content.extend(note_links(op.name, outcome.result))
        return types.CallToolResult(content=content, structured_content=data)

    async def list_prompts(rctx: Any, params: Any) -> types.ListPromptsResult:
        warming()
        skills = await served("prompts/list", rctx, {})
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=s["name"], description=s["description"], arguments=[
                types.PromptArgument(name="query", description="The request for the skill.", required=True)])
            for s in skills])

    async def get_prompt(rctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        warming()
        query = (params.arguments or {}).get("query")
        prompt = await served("prompts/get", rctx, {"name": params.name, "query": query})
        return types.GetPromptResult(description=f"skill {params.name}", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=prompt["text"]))])

    async def list_resources(rctx: Any, params: Any) -> types.ListResourcesResult:
        warming()
        nodes = await served("resources/list", rctx, {})
        return types.ListResourcesResult(resources=[
            types.Resource(name=n["title"], uri=NODE_PREFIX + n["id"], mime_type=ORG_MIME,
                           description=f"{n['file']}:{n['line']}")
            for n in nodes])

    async def list_templates(rctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        guarded("resources/templates/list", rctx)
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(name="node", uri_template=NODE_URI, mime_type=ORG_MIME,
                                   description="The org text of the node with this ID."),
            types.ResourceTemplate(name="unit", uri_template=UNIT_URI, mime_type=ORG_MIME,
                                   description="The org text of a file or heading without an ID, by its locator "
                                               "(FILE.org, FILE.org::*Heading or FILE.org::LINE, percent-encoded).")])

    async def read_resource(rctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        warming()
        uri = str(params.uri)
        if uri.startswith(UNIT_PREFIX) and uri != UNIT_PREFIX:
            wanted = unquote(uri[len(UNIT_PREFIX):])
        elif uri.startswith(NODE_PREFIX) and uri != NODE_PREFIX:
            wanted = uri[len(NODE_PREFIX):]
        else:
            raise MCPError(types.INVALID_PARAMS, f"not an orgkit node: {uri} (expected {NODE_URI} or {UNIT_URI})")
        docs = await served("resources/read", rctx, {"ids": [wanted]})
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type=ORG_MIME, text=doc["content"]) for doc in docs])

    return Server("orgkit", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=input_schema,
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt,
                  on_list_resources=list_resources, on_list_resource_templates=list_templates,
                  on_read_resource=read_resource)


class BoundedLines:
    """The client's lines for the SDK's stdio transport, read within `serve.max_line_bytes`.

    Lines are read as bytes in a worker thread, at most `limit` bytes of one
    held (as `serve` reads them: a longer line is dropped as it arrives, so a
    20 MB line costs no memory). A line too long, not JSON, or not a JSON-RPC
    message is answered here with a JSON-RPC error (id null when it cannot be
    known) through the transport's own writer, and never reaches the server.
    """

    def __init__(self, stdin: Any, limit: int) -> None:
        from .serve import read_lines

        self._lines = read_lines(stdin, limit)
        self._limit = limit
        self.replies: Any = None
        self._ready = anyio.Event()

    def answer_through(self, write_stream: Any) -> None:
        """Start answering bad lines through `write_stream` (the transport's writer)."""
        self.replies = write_stream
        self._ready.set()

    async def __aiter__(self):
        from mcp.shared.message import SessionMessage

        end = object()
        while True:
            raw = await anyio.to_thread.run_sync(self._next, end, abandon_on_cancel=True)
            if raw is end:  # the client hung up: the transport's writer ends with our copy of it closed
                if self.replies is not None:
                    await self.replies.aclose()
                return
            if raw is not None and not raw.strip():
                continue
            error = self._error(raw)
            if error is None:
                yield raw.decode("utf-8", errors="replace")
                continue
            await self._ready.wait()
            await self.replies.send(SessionMessage(error))

    def _next(self, end: object) -> Any:
        """The next line, or `end` once the client hung up; then the process is bound to end soon
        (started here, in the reading thread: a busy event loop must not delay it)."""
        raw = next(self._lines, end)
        if raw is end:
            threading.Thread(target=_leave_after_hang_up, name="orgkit-hang-up", daemon=True).start()
        return raw

    def _error(self, raw: bytes | None) -> types.JSONRPCError | None:
        """The JSON-RPC error a line gets instead of reaching the server, or None for a good message."""
        if raw is None:
            return _rpc_error(None, types.INVALID_REQUEST, f"request line longer than {self._limit} bytes "
                                                           "(serve.max_line_bytes); ignored")
        try:
            types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
            return None
        except Exception:  # noqa: BLE001 - classified below: not JSON, or not JSON-RPC
            pass
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return _rpc_error(None, types.PARSE_ERROR, f"not JSON: {say(exc, 300)}")
        ident = data.get("id") if isinstance(data, dict) else None
        ident = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
        return _rpc_error(ident, types.INVALID_REQUEST, "not a JSON-RPC 2.0 message")


def _rpc_error(ident: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))


def run_stdio(ctx: OpContext) -> None:
    """Serve MCP on this process's stdin and stdout until the client hangs up."""
    from mcp.server.stdio import stdio_server

    server = build_server(ctx)
    lines = BoundedLines(sys.stdin.buffer, ctx.config["serve.max_line_bytes"])

    async def main() -> None:
        # BoundedLines reads as the AsyncFile the SDK would wrap stdin in (its lines, bounded)
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.answer_through(write_stream.clone())
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    if ctx.held.warming():
        # The client hung up while the warm-up embeds: leave without waiting for it. Stopping
        # the interpreter under a running model call aborts the process; every index write
        # is one transaction, so the next start finishes the work.
        ctx.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
