"""The guidance file: an org file people read and edit, and the bullets sliced from it.

Its shape:

    * Extractor: extractor
    ** Node Type: claim
    # cluster: sha256:HEX source=override field=body events=3
    - One bullet distilled from that cluster's corrections.
    - A bullet written by hand (no cluster comment) is guidance too.

The comment line keeps a cluster's identity (extractor and node type from the
headings, `source` and `field` from the comment) and the hash of its members
when its bullet was last written. Parsing keeps every line it does not
understand as written, so `render(parse(text)) == text` for any text and
nothing a person writes there is lost. Headings are found with the org layer's
`Outline`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..org.outline import Outline

CLUSTER_LINE = re.compile(r"^# cluster: sha256:([0-9a-f]+) source=(\S+) field=(\S+) events=(\d+)[ \t]*$")
_EXTRACTOR = re.compile(r"^Extractor:\s*(\S.*?)\s*$")
_NODE_TYPE = re.compile(r"^Node Type:\s*(\S.*?)\s*$")
_BULLET = re.compile(r"^[-+] ")
HEADER = ["#+title: Extraction guidance",
          "# Written by `orgkit evolve` from corrections of generated notes. Edit bullets freely:",
          "# an edited bullet is kept as edited; a deleted bullet (keep its # cluster line) stays",
          "# deleted until that cluster gets new events; delete both lines to have it written again.",
          ""]


@dataclass
class ClusterRef:
    """What a `# cluster:` line says."""

    hash: str
    source: str
    field: str
    events: int

    def line(self) -> str:
        return f"# cluster: sha256:{self.hash} source={self.source} field={self.field} events={self.events}"


@dataclass
class Entry:
    """A bullet, with the cluster comment above it (none for a bullet written by hand).

    `lines` are the bullet's lines as written; none when the user deleted it.
    """

    cluster: ClusterRef | None
    comment: str | None = None  # the comment line as written
    lines: list[str] = field(default_factory=list)

    @property
    def bullet(self) -> str | None:
        """The bullet's text on one line (continuation lines joined), None when deleted."""
        if not self.lines:
            return None
        return " ".join(" ".join(line.strip() for line in self.lines)[2:].split())

    def set_bullet(self, text: str | None) -> None:
        self.lines = [f"- {' '.join(text.split())}"] if text else []

    def set_cluster(self, ref: ClusterRef) -> None:
        self.cluster, self.comment = ref, ref.line()

    def render(self) -> list[str]:
        return ([self.comment] if self.comment is not None else []) + self.lines


@dataclass
class NodeTypeSection:
    heading: str
    node_type: str
    items: list[Entry | str] = field(default_factory=list)

    def entries(self) -> list[Entry]:
        return [item for item in self.items if isinstance(item, Entry)]

    def render(self) -> list[str]:
        return [self.heading] + [line for item in self.items
                                 for line in (item.render() if isinstance(item, Entry) else [item])]


@dataclass
class ExtractorSection:
    heading: str
    name: str
    intro: list[str] = field(default_factory=list)
    sections: list[NodeTypeSection] = field(default_factory=list)

    def section(self, node_type: str) -> NodeTypeSection | None:
        return next((s for s in self.sections if s.node_type == node_type), None)


@dataclass
class Guidance:
    """A parsed guidance file."""

    preamble: list[str] = field(default_factory=list)
    extractors: list[ExtractorSection] = field(default_factory=list)
    # Whether the text ended without a final newline (kept so rendering is exact).
    unterminated: bool = False

    def section(self, extractor: str, node_type: str) -> NodeTypeSection | None:
        """The section of one extractor and node type, when the file has it."""
        ext = next((e for e in self.extractors if e.name == extractor), None)
        return ext.section(node_type) if ext else None

    def new_section(self, extractor: str, node_type: str) -> NodeTypeSection:
        """The section of one extractor and node type, made (with its extractor's) when missing."""
        ext = next((e for e in self.extractors if e.name == extractor), None)
        if ext is None:
            ext = ExtractorSection(f"* Extractor: {extractor}", extractor)
            self.extractors.append(ext)
        section = ext.section(node_type)
        if section is None:
            section = NodeTypeSection(f"** Node Type: {node_type}", node_type)
            ext.sections.append(section)
        return section

    def entry(self, extractor: str, node_type: str, source: str, field_name: str) -> Entry | None:
        """The entry of a cluster, by its identity (not its hash)."""
        section = self.section(extractor, node_type)
        if section is None:
            return None
        return next((e for e in section.entries() if e.cluster and e.cluster.source == source
                     and e.cluster.field == field_name), None)

    def bullets(self, extractor: str, node_type: str) -> list[str]:
        """The slice for one extractor and node type: its bullets, in file order."""
        section = self.section(extractor, node_type)
        if section is None:
            return []
        return [e.bullet for e in section.entries() if e.bullet]


def new_guidance() -> Guidance:
    return Guidance(preamble=list(HEADER))


def parse(text: str) -> Guidance:
    """A guidance file's text, every line kept (see the module docstring)."""
    doc = Guidance()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        doc.unterminated = bool(text)
    outline = Outline("\n".join(lines))
    headings = dict(zip(outline.heading_lines, outline.levels))
    container: list = doc.preamble
    ext: ExtractorSection | None = None
    section: NodeTypeSection | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        level = headings.get(i)
        if level is not None:
            match = outline.pattern.match(line)
            title = (match.group(4) or "") if match else ""
            m = _EXTRACTOR.match(title) if level == 1 else None
            if m:
                ext, section = ExtractorSection(line, m.group(1)), None
                doc.extractors.append(ext)
                container = ext.intro
                i += 1
                continue
            m = _NODE_TYPE.match(title) if level == 2 else None
            if m and ext is not None:
                section = NodeTypeSection(line, m.group(1))
                ext.sections.append(section)
                container = section.items
                i += 1
                continue
        if section is not None and level is None:
            cluster = CLUSTER_LINE.match(line)
            if cluster or _BULLET.match(line):
                entry = Entry(None)
                if cluster:
                    entry.cluster = ClusterRef(cluster.group(1), cluster.group(2), cluster.group(3),
                                               int(cluster.group(4)))
                    entry.comment = line
                    i += 1
                if i < len(lines) and _BULLET.match(lines[i]) and i not in headings:
                    end = i + 1
                    while end < len(lines) and end not in headings and lines[end][:1] in (" ", "\t") \
                            and lines[end].strip():
                        end += 1
                    entry.lines = lines[i:end]
                    i = end
                container.append(entry)
                continue
        container.append(line)
        i += 1
    return doc


def render(doc: Guidance) -> str:
    lines = list(doc.preamble)
    for ext in doc.extractors:
        lines += [ext.heading] + ext.intro
        for section in ext.sections:
            lines += section.render()
    text = "\n".join(lines)
    return text if doc.unterminated or not lines else text + "\n"


def prompt_section(slices: dict[str, list[str]]) -> str:
    """The text added to a role's prompt for its slices, by node type ('' when there are no bullets)."""
    parts = [f"For {node_type} notes:\n" + "\n".join(f"- {b}" for b in bullets)
             for node_type, bullets in slices.items() if bullets]
    if not parts:
        return ""
    return ("\n\nGuidance from people's corrections of earlier output (follow it where it applies):\n"
            + "\n".join(parts) + "\n")


def read_guidance(config) -> tuple[Guidance, bytes | None]:
    """The guidance file of the data dir, parsed, and its bytes (None when there is none yet)."""
    from ..errors import OrgkitError
    from .paths import guidance_path

    path = guidance_path(config)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return new_guidance(), None
    except OSError as exc:
        raise OrgkitError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return parse(data.decode("utf-8")), data
    except UnicodeDecodeError:
        raise OrgkitError(f"{path}: not UTF-8 text; fix or remove it") from None


def guidance_prompt(config, extractor: str, node_types: list[str]) -> str:
    """What `--use-extraction-feedback` adds to the prompt of `extractor` (a model role)
    writing notes of `node_types`: only the matching bullets, '' when there are none."""
    doc = read_guidance(config)[0]
    return prompt_section({t: doc.bullets(extractor, t) for t in node_types})


def guidance_slices(config, extractor: str | None = None, node_type: str | None = None) -> dict:
    """`{file, exists, slices: [{extractor, node_type, bullets}]}`, filtered by extractor and node type."""
    from .paths import guidance_path

    doc, data = read_guidance(config)
    path = guidance_path(config)
    try:
        shown = path.relative_to(config.notes).as_posix()
    except ValueError:
        shown = str(path)
    slices = [{"extractor": ext.name, "node_type": sec.node_type, "bullets": doc.bullets(ext.name, sec.node_type)}
              for ext in doc.extractors for sec in ext.sections
              if extractor in (None, ext.name) and node_type in (None, sec.node_type)]
    return {"file": shown, "path": str(path.resolve()), "exists": data is not None, "slices": slices}
