import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import sys; sys.path.insert(0, _os.path.join(_DATA, "queries"))
from common import org_meta, write
ROOT = _os.path.join(_REPO, "notes")
P = "20261202"
Q = [
 ("123360-cmd-db", "paraphrase", "housing the lookup catalogue in a networked relational engine"),
 ("120400-note-format", "keyword", "file node property drawer"),
 ("122200-cmd-links", "question", "how do i list the outgoing links of a single note"),
 ("123600-cmd-serve", "paraphrase", "persistent helper keeping the vectorizer resident between lookups"),
 ("124100-emacs-server", "keyword", "emacs one shot fallback"),
 ("121800-two-stage-retrieval", "question", "why split finding notes into a cheap headline pass and a deep read"),
 ("120500-heading-nodes", "paraphrase", "making a subsection addressable as a standalone entry"),
 ("123200-cmd-skills", "keyword", "atomic notes skill", "ac102352-4081-490d-91a5-7d88388566d0"),
 ("124200-agent-memory", "question", "how does an agent save findings for a person to approve into the notes"),
 ("122500-cmd-read", "paraphrase", "retrieving complete entries plus neighbours reachable within a hop limit"),
 ("122600-cmd-tangle", "keyword", "tangle confine targets", "ff6048eb-7eb3-4db8-91d0-0c817eab982c"),
 ("120100-installing", "question", "what happens if ripgrep is not installed on my machine"),
 ("120200-quickstart", "paraphrase", "a newcomer's tour of the basic subcommands"),
 ("120600-ids", "keyword", "random uuid lowercase"),
 ("122800-literate-notes-and-skills", "question", "how do i carry edits made in generated code back into the literate note"),
 ("122000-agents", "paraphrase", "recommended workflow for an llm assistant invoking this program"),
 ("120700-links-and-backlinks", "keyword", "links counted example blocks", "1437b085-9c74-4548-87fa-55aecb00a2f8"),
 ("123400-cmd-search", "question", "what is the difference between dense lexical and hybrid search modes"),
 ("121100-titles-and-outline-paths", "paraphrase", "how names and parent chains get derived for entries"),
 ("123300-cmd-index", "keyword", "fastembed embedding model"),
 ("121500-errors", "question", "what happens when a notes file is not valid utf-8"),
 ("121000-roam-exclude", "paraphrase", "opting one section out while retaining its identifier"),
 ("121900-token-budgets", "question", "how are tokens estimated when limiting how much text gets returned"),
 ("121700-org-roam-compatibility", "keyword", "org roam database fields"),
 ("121300-positions", "paraphrase", "tallying conventions for dos carriage returns and multibyte glyphs"),
 ("124000-emacs", "keyword", "command map keys emacs"),
 ("121400-json-contract", "question", "what does stdout contain when a command is run with json output"),
 ("123700-cmd-mcp", "paraphrase", "plugging the toolkit into chat assistants over a standard bridge"),
 ("122900-cmd-new", "keyword", "new note slug tags"),
 ("122100-cmd-nodes", "question", "how do i list every node with its outline path and tags as json"),
]
G = "20261204191400-commands-at-a-glance"
ALSO = {  # notes that answer the query as directly as the target (the 20261204* notes appeared later)
 "123360-cmd-db": ["20261204191200-postgresql"],
 "120400-note-format": ["20261204191100-reading-org-files"],
 "122200-cmd-links": [G],
 "123600-cmd-serve": ["20261204190000-search-internals"],
 "124200-agent-memory": ["20261204190700-agent-memory-in-depth"],
 "122500-cmd-read": [G],
 "122600-cmd-tangle": ["20261204190800-tangling-in-depth"],
 "120100-installing": ["20261204191300-architecture"],
 "122800-literate-notes-and-skills": ["20261202122700-cmd-detangle", G],
 "120700-links-and-backlinks": ["20261204191100-reading-org-files"],
 "123400-cmd-search": ["20261204190000-search-internals"],
 "121100-titles-and-outline-paths": ["20261204191100-reading-org-files"],
 "123300-cmd-index": ["20261204190000-search-internals"],
 "121500-errors": ["20261204191100-reading-org-files"],
 "121900-token-budgets": [G],
 "121300-positions": ["20261204191100-reading-org-files"],
 "121400-json-contract": [G],
 "123700-cmd-mcp": ["20261204190100-operations-and-mcp"],
 "122900-cmd-new": [G],
 "122100-cmd-nodes": [G],
}
OFF = [
 "how do i sync my notes between laptop and phone with syncthing",
 "can orgkit export my notes to html or pdf",
 "how do i publish my notes as a static website with hugo",
 "how do i import my pages from notion into org notes",
 "can orgkit spell check or grammar check my notes",
 "is there an interactive graph visualization of my notes",
 "how do i create daily journal notes with orgkit",
 "can i review my notes as spaced repetition flashcards",
 "how do i run orgkit inside a docker container",
 "is there a mobile app for reading my notes on android",
]
qs = []
for item in Q:
    f, kind, q = item[:3]
    hid = item[3] if len(item) > 3 else None
    e = {"query": q, "kind": kind, "target": org_meta(ROOT, P + f + ".org", hid)}
    if f in ALSO: e["also"] = [org_meta(ROOT, g + ".org") for g in ALSO[f]]
    qs.append(e)
for q in OFF:
    qs.append({"query": q, "kind": "offtopic", "target": None})
write(_os.path.join(_DATA, "manual.json"),
      "Retrieval evaluation queries for the software manual written as org-roam notes, written by a reader who never ran the search tool. Targets name the node (file top :ID: or a heading's own :ID:) that answers each query; offtopic queries have no answer in the corpus.",
      "manual", qs)
from collections import Counter; print(Counter(q["kind"] for q in qs))
