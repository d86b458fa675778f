import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import sys, re, os, random; sys.path.insert(0, _os.path.join(_DATA, "queries")); sys.path.insert(0, _DATA)
from common import write
import sample, check
ROOT = sample.ROOTS["literate"]
hs = sample.literate_headings()
order = random.Random(sample.SEED).sample(hs, len(hs))
picked = []
for f, line, title, end in order:
    lines = open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read().splitlines()
    if sample.prose_words("\n".join(lines[line:end])) < 25: continue
    picked.append((f, line))
    if len(picked) == 30: break
QUERIES = [
 "relaying unrecognized command-line flags on to the editor",
 "gitobject serialize deserialize",
 "how do i send the current item to omnifocus with a hotkey",
 "dumping a saved record's unprocessed bytes to the console",
 "slime sbcl quicklisp",
 "how do i show a spinner while a long function runs in elvish",
 "detecting whether content is typed by a person or streamed",
 "submitting pr make test",
 "how can i keep my custom keybindings from being overridden by major modes",
 "keeping prose in a narrow middle band with side gutters",
 "eshell prompt git branch",
 "how do i bring up org capture from anywhere on macos with a hotkey",
 "a stacked candidate picker that favours previously chosen entries",
 "index file dirc header",
 "how can i comment out a line without moving the cursor to its start",
 "capping runaway output panes while rebuilding documents continuously",
 "hash object blob",
 "how do i make emacs switch between light and dark themes following the system setting",
 "an unfinished plugin bridging a gesture-customization app",
 "grep notes homebrew dupes",
 "which in-buffer completion popup and matching style does this config use",
 "toggling the gutter's row counters including offsets from the cursor",
 "git assume unchanged init",
 "does git store diffs between commits or full snapshots of the repository",
 "kicking off and halting loading animations yourself",
 "source serif mixed pitch",
 "how does the config load different settings for gui versus terminal emacs",
 "binding a fast build shortcut in curly-brace programming buffers",
 "spinner object frames interval",
 "which package archives and priorities does this emacs config use",
]
KINDS = ["paraphrase", "keyword", "question"]
OFF = [
 "how do i configure the tmux status bar and prefix key",
 "how do i manage my dotfiles declaratively with nix home-manager",
 "how do i set up org-roam for a zettelkasten in emacs",
 "how do i set up telescope fuzzy finding in neovim",
 "how do i enable github copilot suggestions inside emacs",
 "how do i customize the starship shell prompt",
 "how do i read rss feeds in emacs with elfeed",
 "how do i sync my emacs diary with google calendar",
 "how do i chat on slack from inside emacs",
 "how do i switch kubernetes contexts quickly with kubectl",
]
def subtree(lines, line):
    lvl = len(lines[line-1]) - len(lines[line-1].lstrip("*"))
    for j in range(line, len(lines)):
        m = re.match(r"^(\*+) ", lines[j])
        if m and len(m.group(1)) <= lvl: return j
    return len(lines)
qs = []
for i, ((f, line), q) in enumerate(zip(picked, QUERIES)):
    lines = open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read().splitlines()
    head = re.sub(r"^\*+\s+", "", lines[line-1]).strip()
    head = re.sub(r"\s+(:[\w@#%:]+:)\s*$", "", head)
    kind = KINDS[i % 3]
    sec = "\n".join(lines[line-1:subtree(lines, line)])
    r = check.check(ROOT, q, kind, sec)
    n = len(q.split())
    if r != "ok" or (kind == "paraphrase" and not 4 <= n <= 10) or (kind == "keyword" and not 2 <= n <= 4):
        print("CHECK", i, kind, q, n, r)
    qs.append({"query": q, "kind": kind, "target": {"file": f, "line": line, "title": head}})
for q in OFF:
    qs.append({"query": q, "kind": "offtopic", "target": None})
write(_os.path.join(_DATA, "literate.json"),
      "Retrieval evaluation queries for literate-programming and dotfiles org files, written by a reader who never ran the search tool. Each target is a file plus the 1-based line of the heading whose section answers the query; offtopic queries have no answer in the corpus.",
      "literate", qs)
from collections import Counter; print(Counter(q["kind"] for q in qs))
