"""Settings, resolved once: flags > environment > the user's config file > the notes' `orgkit.toml` > defaults.

Every setting is declared once in `SETTINGS` (key, type, environment variable,
default, help, kind), so `orgkit config` can show each value with its kind and
where it came from, and every command, the server, MCP and skills read the same
`Config`. A wrong type or an unknown key in a TOML file is a one-line error
naming the file and the key, never a silently ignored typo (`orgkit config`
alone shows the settings anyway, with the problem as a warning, since the
error sends the user there).

A notes folder may come from someone else, so its `orgkit.toml` sets only
settings of the kind "notes" (ranking, budgets, folders, schemas, admission
for review). Settings of the kind "trust" run code, reach out to a server,
send a key, or let agents decide: they come only from flags, the environment
and the user's own config file (`$XDG_CONFIG_HOME/orgkit/config.toml`).
Settings of the kind "inside" (the state and data dirs) may be set by the
notes only to a path inside the notes dir, and those of the kind "bound"
(limits, timeouts, caps) only below their default: a folder may make a server
stricter, never looser. A value a setting's `notes_refuse` names (admission
`auto` for agents) is the user's to give too. A refused key is ignored with
one warning line on stderr naming it and where it may be set: a received notes
folder stays usable.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .confine import confine_writes, inside, leaves_through_link
from .errors import OrgkitError
from .files import made_dir, replace_file
from .redact import redact

CONFIG_FILE = "orgkit.toml"
USER_CONFIG = Path("orgkit") / "config.toml"  # under $XDG_CONFIG_HOME (default ~/.config)
STATE_DIR_NAME = ".orgkit"
DATA_DIR_NAME = "orgkit-data"  # "data/" in its name: org-roam's default exclusion skips it too
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
LLM_ROLES = ("extractor", "scribe", "auditor", "librarian", "guidance")
# The environment variables read outside the settings table (a setting names its own `env`):
# `orgkit --help` lists these and every setting's, from here.
RG_VARIABLE = "ORGKIT_RG"
VARIABLES = {"ORGKIT_NOTES": "notes directory (default ./notes)",
             RG_VARIABLE: "the ripgrep binary to run (default: the one installed with orgkit, else rg on PATH)"}

# Guidance that recommends one of these makes the extractor say less: extract fewer
# claims, skip a dimension, drop or shorten quotes, paraphrase instead of quoting, link
# less. No commas, so the environment variable (comma-separated) can carry them too.
GUARDRAIL_PATTERNS = (
    r"\b(extract|produce|generate|write|create|make|propose|return|emit)\w*\s+(far\s+|much\s+)?(fewer|less)\b",
    r"\b(fewer|less)\s+(claims|quotes|notes|links|dimensions|facts|items|detail)\b",
    r"\bonly\s+(extract|keep|write|quote)\s+(the\s+)?(most|main|key|top|few|single)",
    r"\b(skip|omit|ignore|leave\s+out)\w*\s+(the\s+|a\s+|any\s+|some\s+|minor\s+)?(dimension|field|aspect|categor)",
    r"\b(drop|omit|remove|shorten|trim|truncate|cut|avoid)\w*\s+(the\s+|long\s+|any\s+|some\s+|most\s+)*(\w+\s+)?quot",
    r"\b(skip|omit|ignore|leave\s+out)\w*\s+(the\s+|a\s+|any\s+|some\s+|minor\s+)?\w+\s+(dimension|field|aspect|categor)",
    r"\b(don't|do\s+not|never|stop)\s+quot",
    r"\bparaphras\w*\b[^.;]*\b(instead\s+of|rather\s+than)\s+(quot|verbatim)",
    r"\b(prefer|use)\s+(a\s+)?paraphras",
    r"\b(instead\s+of|rather\s+than)\s+quot",
    r"\blink(s|ing)?\s+(less|sparingly|rarely)\b",
    r"\b(avoid|stop|don't|do\s+not|never)\s+(add\w*\s+|us\w*\s+|creat\w*\s+)?link",
)
# What each kind of setting means, as `orgkit config` and the README say it.
KINDS = {
    "notes": "a notes folder's orgkit.toml may set it",
    "trust": "grants trust or reaches outside the notes: only flags, the environment and the user config file",
    "inside": "a notes folder's orgkit.toml may set it only to a path inside the notes dir",
    "bound": "a limit: a notes folder's orgkit.toml may lower it, never raise it above the default",
}
_TRUE = {"1", "true", "yes", "on", "t"}
_FALSE = {"0", "false", "no", "off", "nil", ""}


@dataclass(frozen=True)
class Setting:
    """One setting: its TOML key, type, environment variable, default, help and kind (see KINDS)."""

    key: str
    type: type
    help: str
    default: Any = None
    env: str | None = None
    minimum: float | None = None
    kind: str = "notes"
    # A default computed from the notes directory (state and data dirs).
    derive: Callable[[Path], Any] | None = None
    # Why a notes folder's orgkit.toml may not give this value (None: it may), for a setting
    # the notes may set only in part.
    notes_refuse: Callable[[Any], str | None] | None = None

    def type_name(self) -> str:
        return {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
                Path: "a path", list: "a list of strings", dict: "a table"}[self.type]


def _role_settings() -> list[Setting]:
    """Per-role model overrides: the auditor is meant to run on another model family."""
    out = []
    for role in LLM_ROLES:
        up = role.upper()
        out += [
            Setting(f"llm.{role}.endpoint", str, f"OpenAI-compatible endpoint for the {role} (default: llm.endpoint)",
                    env=f"ORGKIT_LLM_{up}_ENDPOINT", kind="trust"),
            Setting(f"llm.{role}.model", str, f"model name for the {role} (default: llm.model)",
                    env=f"ORGKIT_LLM_{up}_MODEL"),
            Setting(f"llm.{role}.gguf", Path, f"GGUF file for the {role} (default: llm.gguf)",
                    env=f"ORGKIT_LLM_{up}_GGUF", kind="trust"),
        ]
    return out


def _agents_admitted(table: Any) -> str | None:
    """Why a notes folder may not give this admission table: it lets agents' deposits in unreviewed."""
    if isinstance(table, dict) and any(isinstance(lanes, dict) and lanes.get("agent") == "auto"
                                       for lanes in table.values()):
        return "a notes folder's orgkit.toml cannot admit agents' deposits without review (agent = \"auto\")"
    return None


SETTINGS: dict[str, Setting] = {s.key: s for s in [
    Setting("state_dir", Path, "derived data (index, vectors, caches); deletable, `orgkit index` rebuilds it",
            env="ORGKIT_STATE_DIR", derive=lambda notes: notes / STATE_DIR_NAME, kind="inside"),
    Setting("data_dir", Path, "primary data (runs, review queue, audit log, feedback, guidance); never rebuilt",
            env="ORGKIT_DATA_DIR", derive=lambda notes: notes / DATA_DIR_NAME, kind="inside"),
    Setting("model", str, "fastembed embedding model name", default=DEFAULT_MODEL, env="ORGKIT_MODEL"),
    Setting("model_path", Path, "local copy of the embedding model (fastembed's specific_model_path)",
            env="ORGKIT_MODEL_PATH", kind="trust"),
    Setting("search.inline_embed_limit", int, "passages a CLI search embeds inline before asking for `orgkit index`",
            default=64, env="ORGKIT_INLINE_EMBED_LIMIT", minimum=0, kind="bound"),
    Setting("search.min_score", float, "leave out search hits whose relevance is below this (0: keep every hit, "
            "marking those below the relevance floor not relevant)", default=0.0, env="ORGKIT_SEARCH_MIN_SCORE",
            minimum=0),
    Setting("search.scope", str, "what search, context and recall answer from by default: notes (yours and admitted "
            "memory), extractions, pending or all", default="notes", env="ORGKIT_SCOPE"),
    Setting("serve.max_line_bytes", int, "longest request line `serve` and MCP accept",
            default=1 << 20, env="ORGKIT_MAX_LINE_BYTES", minimum=64, kind="bound"),
    Setting("serve.call_timeout", float, "seconds a `serve` or MCP call may take before its client gets an error "
            "(ripgrep is stopped then; other work finishes in the background while other calls go on)",
            default=60.0, env="ORGKIT_CALL_TIMEOUT", minimum=0.1, kind="bound"),
    Setting("query.max_chars", int, "longest query an operation accepts", default=2000,
            env="ORGKIT_QUERY_MAX_CHARS", minimum=1, kind="bound"),
    Setting("serve.recheck_after", float, "seconds between the server's checks for changed files",
            default=1.0, env="ORGKIT_RECHECK_AFTER", minimum=0),
    Setting("notes.follow_roots", list, "directories outside the notes a symlink in them may lead to (other "
            "links out of the notes are not followed: not listed, indexed, searched or read)", default=[],
            env="ORGKIT_FOLLOW_ROOTS", kind="trust"),
    Setting("skills.allow_local", bool, "run Python skill files from NOTES/skills/ (this runs code from the notes dir)",
            default=False, env="ORGKIT_ALLOW_LOCAL_SKILLS", kind="trust"),
    Setting("extraction.enabled", bool, "turn on the grounded-extraction capability",
            default=False, env="ORGKIT_EXTRACTION"),
    Setting("extraction.min_quote_chars", int,
            "a quote shorter than this grounds no claim (unless it is a whole line of the source)",
            default=12, minimum=0),
    Setting("extract.source_roots", list, "directories outside the notes from which `serve` and MCP clients may "
            "extract sources (the notes dir always; the command line anywhere)", default=[],
            env="ORGKIT_EXTRACT_SOURCE_ROOTS", kind="trust"),
    Setting("llm.endpoint", str, "OpenAI-compatible chat endpoint (base URL, e.g. http://127.0.0.1:11434/v1)",
            env="ORGKIT_LLM_ENDPOINT", kind="trust"),
    Setting("llm.model", str, "model name sent to the endpoint", env="ORGKIT_LLM_MODEL"),
    Setting("llm.api_key_env", str, "environment variable that holds the endpoint's API key",
            default="ORGKIT_LLM_API_KEY", env="ORGKIT_LLM_API_KEY_ENV", kind="trust"),
    Setting("llm.gguf", Path, "GGUF model file run in-process (needs `pip install orgkit[llm]`)",
            env="ORGKIT_LLM_GGUF", kind="trust"),
    Setting("llm.timeout", float, "seconds a model call may take", default=300.0, env="ORGKIT_LLM_TIMEOUT",
            minimum=1, kind="bound"),
    Setting("llm.max_tokens", int, "longest reply a model call may produce", default=2048,
            env="ORGKIT_LLM_MAX_TOKENS", minimum=16, kind="bound"),
    *_role_settings(),
    Setting("librarian.folders", list, "folders whose new or changed notes the librarian also files "
            "(taken in as human-lane deposits)", default=[], env="ORGKIT_LIBRARIAN_FOLDERS"),
    Setting("deposit.max_bytes", int, "largest deposit body", default=1 << 20, env="ORGKIT_DEPOSIT_MAX_BYTES",
            minimum=1, kind="bound"),
    Setting("admission", dict, "admission policy: {\"FOLDER\" = {agent = \"review\"|\"auto\", human = ...}} "
            "(agent = \"auto\" only from the user config file)", default={}, notes_refuse=_agents_admitted),
    Setting("mcp.allow_review", bool, "offer review decisions (accept, reject, undo) as MCP tools",
            default=False, env="ORGKIT_MCP_ALLOW_REVIEW", kind="trust"),
    Setting("database.url", str, "PostgreSQL database for the index and the memory store, shared by a team "
            "(postgresql://USER@HOST/DB; the password from PGPASSWORD or ~/.pgpass); unset: SQLite in the state "
            "and data dirs",
            env="ORGKIT_DATABASE_URL", kind="trust"),
    Setting("feedback.min_events", int, "corrections a cluster needs before it earns a guidance bullet",
            default=3, env="ORGKIT_FEEDBACK_MIN_EVENTS", minimum=1),
    Setting("feedback.use_guidance", bool, "add the guidance file's matching bullets to the extractor's and the "
            "librarian's prompts (as --use-extraction-feedback does)", default=False,
            env="ORGKIT_USE_EXTRACTION_FEEDBACK"),
    Setting("feedback.guardrail", list, "patterns (regular expressions) of guidance that teaches saying less; "
            "`evolve` drops bullets matching one", default=list(GUARDRAIL_PATTERNS), env="ORGKIT_FEEDBACK_GUARDRAIL"),
    Setting("http.session_idle_timeout", float, "seconds an MCP session of the team server lives without a request "
            "before it ends and its memory is freed", default=300.0, env="ORGKIT_HTTP_SESSION_IDLE_TIMEOUT",
            minimum=0.1, kind="bound"),
    Setting("http.sessions_per_token", int, "MCP sessions one token may hold open on the team server (a new one "
            "past that ends the token's longest idle session)", default=8, env="ORGKIT_HTTP_SESSIONS_PER_TOKEN",
            minimum=1, kind="bound"),
    Setting("http.allowed_hosts", list, "Host header values the team server answers to besides its own address "
            "(a reverse proxy's name, e.g. memory.example.org)", default=[], env="ORGKIT_HTTP_ALLOWED_HOSTS",
            kind="trust"),
    Setting("http.allowed_origins", list, "browser Origins allowed besides the server's own "
            "(e.g. https://memory.example.org)", default=[], env="ORGKIT_HTTP_ALLOWED_ORIGINS",
            kind="trust"),
    Setting("http.max_body_bytes", int, "largest request body the team server reads", default=4 << 20,
            env="ORGKIT_HTTP_MAX_BODY_BYTES", minimum=1024, kind="bound"),
    Setting("http.idle_timeout", float, "seconds an idle or slow HTTP connection is kept open: each request on a "
            "connection must arrive whole within it", default=30.0, env="ORGKIT_HTTP_IDLE_TIMEOUT", minimum=0.1,
            kind="bound"),
    Setting("http.max_unauthenticated", int, "connections per server process that have not yet shown a token; "
            "past it the oldest idle one is answered 503 and closed", default=256,
            env="ORGKIT_HTTP_MAX_UNAUTHENTICATED", minimum=1,
            kind="bound"),
    Setting("http.deposits_per_minute", int, "deposits one token may make per minute on the team server (past it: "
            "429 with Retry-After)", default=60, env="ORGKIT_HTTP_DEPOSITS_PER_MINUTE", minimum=1, kind="bound"),
    Setting("http.reads_per_minute", int, "expensive reads (search, context, recall, scan) one token may make per "
            "minute on the team server (past it: 429 with Retry-After)", default=600,
            env="ORGKIT_HTTP_READS_PER_MINUTE", minimum=1, kind="bound"),
    Setting("http.max_connections", int, "connections and calls one server process handles at once; past it a new "
            "request is answered 503 instead of waiting", default=1000, env="ORGKIT_HTTP_MAX_CONNECTIONS", minimum=8,
            kind="bound"),
    Setting("http.trusted_proxies", list, "addresses of reverse proxies whose X-Forwarded-Proto and X-Forwarded-For "
            "the team server believes (\"*\": any)", default=["127.0.0.1", "::1"],
            env="ORGKIT_HTTP_TRUSTED_PROXIES", kind="trust"),
    Setting("http.secure_cookies", bool, "mark the review page's cookies Secure even when no request says it came "
            "over TLS", default=False, env="ORGKIT_HTTP_SECURE_COOKIES", kind="trust"),
]}


@dataclass(frozen=True)
class Config:
    """Resolved settings for one notes directory; `values[key]` and `origins[key]`.

    `refused` maps each key the notes' orgkit.toml tried to set but may not to
    that file; `problems` holds what a lenient load found wrong (a strict load
    raises the first instead).
    """

    notes: Path
    notes_origin: str
    values: Mapping[str, Any] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def has_notes(self) -> bool:
        """False on a machine without a copy of the notes, reading a shared database."""
        return self.notes.is_dir()

    @property
    def state_dir(self) -> Path:
        return self.values["state_dir"]

    @property
    def data_dir(self) -> Path:
        return self.values["data_dir"]

    def to_json(self) -> dict[str, dict[str, Any]]:
        """Every value with its kind and origin (and a refused file value), as `orgkit config --json` prints it;
        a password in any value (a database URL, an endpoint's user part) masked."""
        out: dict[str, dict[str, Any]] = {"notes": {"value": str(self.notes), "origin": self.notes_origin,
                                                    "kind": "trust"}}
        for key, setting in SETTINGS.items():
            value = self.values[key]
            value = str(value) if isinstance(value, Path) else value
            value = redact(value) if isinstance(value, str) else [redact(v) for v in value] \
                if isinstance(value, list) else value
            out[key] = {"value": value, "origin": self.origins[key], "kind": setting.kind}
            if key in self.refused:
                out[key]["refused"] = self.refused[key]
        return out


def _coerce(setting: Setting, raw: Any, where: str, base: Path) -> Any:
    """`raw` as the setting's type; an OrgkitError naming `where` when it is not one."""
    def bad() -> OrgkitError:
        return OrgkitError(f"{where}: {setting.key} must be {setting.type_name()}, not {raw!r}")

    kind = setting.type
    if kind is Path and isinstance(raw, Path):
        return raw
    if isinstance(raw, str) and kind is not str:
        text = raw.strip()
        if kind is bool:
            if text.lower() in _TRUE | _FALSE:
                return text.lower() in _TRUE
            raise bad()
        if kind is list:
            return [part.strip() for part in text.split(",") if part.strip()]
        if kind is Path:
            return (base / Path(text).expanduser()) if text else None
        try:
            raw = int(text) if kind is int else float(text) if kind is float else raw
        except ValueError:
            raise bad() from None
    if kind is float and isinstance(raw, int) and not isinstance(raw, bool):
        raw = float(raw)
    if kind is Path:
        raise bad()
    if kind is list and not (isinstance(raw, list) and all(isinstance(x, str) for x in raw)):
        raise bad()
    if not isinstance(raw, kind) or (kind is int and isinstance(raw, bool)):
        raise bad()
    if setting.minimum is not None and isinstance(raw, (int, float)) and raw < setting.minimum:
        raise OrgkitError(f"{where}: {setting.key} must be at least {setting.minimum:g}, not {raw!r}")
    return raw


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """TOML tables to dotted keys, stopping at settings whose value is itself a table."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and SETTINGS.get(dotted, None) is None:
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _read_file(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            return _flatten(tomllib.load(handle))
    except tomllib.TOMLDecodeError as exc:
        raise OrgkitError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise OrgkitError(f"{path}: not valid TOML: not UTF-8 at byte {exc.start}") from None
    except OSError as exc:
        raise OrgkitError(f"{path}: cannot read: {exc.strerror}") from None


def notes_dir(flag: Path | None, env: Mapping[str, str]) -> tuple[Path, str]:
    """The notes directory and its origin, or a clear error when there is none.

    With a database set in the environment, a missing directory is a machine
    without a copy of the notes: it answers what the database holds.
    """
    if flag is not None:
        chosen, origin = Path(flag), "flag --notes"
    elif env.get("ORGKIT_NOTES"):
        chosen, origin = Path(env["ORGKIT_NOTES"]).expanduser(), "env ORGKIT_NOTES"
    else:
        chosen, origin = Path("notes"), "default"
    if not chosen.is_dir():
        if env.get("ORGKIT_DATABASE_URL") and not chosen.exists():
            return chosen, f"{origin} (absent: answers come from the database)"
        hint = "use --notes DIR or set ORGKIT_NOTES"
        if origin == "default" and next(Path.cwd().glob("*.org"), None) is not None:
            hint = ("this directory holds org files: to use it as the notes dir, give --notes . "
                    "or set ORGKIT_NOTES=$PWD")
        raise OrgkitError(f"notes directory not found: {chosen} ({hint})")
    return chosen, origin


# The user's own directories (XDG base directories): their variable and default under $HOME.
USER_DIRS = {"config": ("XDG_CONFIG_HOME", ".config"), "data": ("XDG_DATA_HOME", ".local/share"),
             "state": ("XDG_STATE_HOME", ".local/state"), "cache": ("XDG_CACHE_HOME", ".cache")}


def user_dir(kind: str, env: Mapping[str, str] | None = None) -> Path:
    """The user's orgkit directory of `kind` (config, data, state, cache): $XDG_..._HOME/orgkit, else under ~.

    Where orgkit keeps what belongs to the user on this machine rather than to a
    notes folder: the config file, the team server's tokens, tangle's records,
    the shared model cache.
    """
    env = os.environ if env is None else env
    variable, default = USER_DIRS[kind]
    base = env.get(variable) or ""
    if not Path(base).is_absolute():  # the XDG rule: a relative value is ignored
        base = str(Path(env.get("HOME") or Path.home()) / default)
    return Path(base) / "orgkit"


def model_cache(env: Mapping[str, str] | None = None) -> Path:
    """Where optimised embedding models live, one per model digest, shared by every notes folder."""
    return user_dir("cache", env) / "models"


def user_config_file(env: Mapping[str, str]) -> Path:
    """The user's own config file: $XDG_CONFIG_HOME/orgkit/config.toml (default ~/.config/...)."""
    return user_dir("config", env) / USER_CONFIG.name


def _where_else(setting: Setting, user_file: Path) -> str:
    ways = [str(user_file)] + ([f"${setting.env}"] if setting.env else [])
    return ", ".join(ways[:-1]) + " or " + ways[-1] if len(ways) > 1 else ways[0]


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """One warning line on stderr per process: a long-lived server loads the config once anyway."""
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"orgkit: warning: {message}", file=sys.stderr, flush=True)


def _admitted(from_notes: dict[str, Any], file: Path, root: Path, user_file: Path,
              problems: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The notes file's values a notes folder may set, and the refused keys (each warned of once)."""
    kept: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for key, raw in from_notes.items():
        setting = SETTINGS.get(key)
        why = setting.notes_refuse(raw) if setting is not None and setting.notes_refuse else None
        if setting is None or (setting.kind == "notes" and why is None):
            kept[key] = raw
            continue
        if setting.kind == "bound":
            try:
                value = _coerce(setting, raw, str(file), root)
            except OrgkitError as exc:
                problems.append(str(exc))
                continue
            if value <= setting.default:
                kept[key] = raw
                continue
            why = f"a notes folder's orgkit.toml may lower this limit, not raise it above {setting.default}"
        elif setting.kind == "inside":
            try:
                value = _coerce(setting, raw, str(file), root)
                within = value is None or inside(value, root)
            except OrgkitError as exc:  # a bad value, or a path that cannot be resolved (NUL, a loop)
                problems.append(str(exc))
                continue
            if within:
                kept[key] = raw
                continue
            why = "a notes folder's orgkit.toml may set it only inside the notes dir"
        elif why is None:
            why = "a notes folder's orgkit.toml cannot set a trust-granting setting"
        refused[key] = str(file)
        _warn_once(f"{file}: {key} ignored ({why}); set it in {_where_else(setting, user_file)}")
    return kept, refused


def _read_or_note(path: Path, problems: list[str]) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return _read_file(path)
    except OrgkitError as exc:
        problems.append(str(exc))
        return {}


def load(notes: Path | None = None, flags: Mapping[str, Any] | None = None,
         env: Mapping[str, str] | None = None, *, lenient: bool = False) -> Config:
    """Resolve every setting for the notes directory `notes` (flag), else $ORGKIT_NOTES, else ./notes.

    `flags` maps setting keys to values given on a command line (None means not given).
    A bad file, key or value raises a one-line OrgkitError; with `lenient` it is
    kept in `Config.problems` instead and the setting falls back to the next source.
    """
    env = os.environ if env is None else env
    root, notes_origin = notes_dir(notes, env)
    problems: list[str] = []
    user_file = user_config_file(env)
    from_user = _read_or_note(user_file, problems)
    file = root / CONFIG_FILE
    from_notes = _read_or_note(file, problems)
    for source, table in ((user_file, from_user), (file, from_notes)):
        for key in sorted(set(table) - set(SETTINGS)):
            problems.append(f"{source}: unknown key {key!r} (see `orgkit config` for the keys)")
    from_notes, refused = _admitted(from_notes, file, root, user_file, problems)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key, setting in SETTINGS.items():
        candidates = []
        flagged = (flags or {}).get(key)
        if flagged is not None:
            candidates.append((flagged, "flag", Path.cwd(), "flag"))
        if setting.env and env.get(setting.env, "") != "":
            candidates.append((env[setting.env], f"${setting.env}", Path.cwd(), f"env {setting.env}"))
        if key in from_user:
            candidates.append((from_user[key], str(user_file), user_file.parent, f"user {user_file}"))
        if key in from_notes:
            candidates.append((from_notes[key], str(file), root, f"file {file}"))
        values[key] = setting.derive(root) if setting.derive else setting.default
        origins[key] = "default"
        for raw, where, base, origin in candidates:
            try:
                values[key], origins[key] = _coerce(setting, raw, where, base), origin
                break
            except OrgkitError as exc:
                problems.append(str(exc))
    problems += _confine_writes(root, values, origins)
    if problems and not lenient:
        raise OrgkitError(problems[0])
    return Config(root, notes_origin, values, origins, refused, tuple(problems))


def _confine_writes(root: Path, values: Mapping[str, Any], origins: Mapping[str, str]) -> list[str]:
    """Register where orgkit may write (`confine.writable`); why a state or data dir the user did not
    name is refused: it leads out of the notes through a symlink (a received folder's
    `.orgkit -> /elsewhere`), so nothing is written or deleted there."""
    problems = []
    confine_writes(root, *(Path(p).expanduser() for p in values["notes.follow_roots"] or []))
    for key in ("state_dir", "data_dir"):
        chosen = values[key]
        from_notes = origins[key] == "default" or origins[key].startswith("file ")
        try:
            leaves = from_notes and leaves_through_link(chosen, root)
        except OrgkitError as exc:  # a loop, a name the file system refuses
            problems.append(f"{key}: {exc}")
            continue
        if leaves:
            setting = SETTINGS[key]
            problems.append(f"{key} {chosen} leads outside the notes dir through a symlink; refused (a notes "
                            f"folder's dirs stay inside it: to use it, name it in ${setting.env} or your config file)")
            confine_writes(chosen, closed=True)  # nothing is written there, whatever this process loaded before
            continue
        confine_writes(chosen)
    return problems


def without_notes(key: str, env: Mapping[str, str] | None = None) -> Any:
    """One setting where there is no notes directory to read a file from: env, the user's file, else default."""
    env = os.environ if env is None else env
    setting = SETTINGS[key]
    if setting.env and env.get(setting.env, "") != "":
        return _coerce(setting, env[setting.env], f"${setting.env}", Path.cwd())
    user_file = user_config_file(env)
    from_user = _read_file(user_file) if user_file.is_file() else {}
    if key in from_user:
        return _coerce(setting, from_user[key], str(user_file), user_file.parent)
    return setting.default


def ensure_state_dir(config: Config) -> Path:
    """The state dir, created with a `.gitignore` so a notes repo never picks up the index. One that
    cannot be made or written (a notes folder one may only read) is said so, with where to put it."""
    try:
        state = made_dir(config.state_dir)
        ignore = state / ".gitignore"
        if not os.path.lexists(ignore):
            replace_file(ignore, b"# derived data: `orgkit index` rebuilds it\n*\n")
    except OSError as exc:
        raise OrgkitError(f"cannot write the state dir {config.state_dir} ({exc.strerror or exc}), where orgkit "
                          "keeps its index: name a writable one with --state-dir or ORGKIT_STATE_DIR") from exc
    return state
