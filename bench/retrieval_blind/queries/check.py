"""Checks drafted queries against their target text (no search tool involved)."""
import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import json, re, sys, os
STOP = set("""a an the of to in on for and or with by from as at is are be was were it its this that these those
how what why when where which who whom do does did can could should would i my me we you your our about into
than then not no vs versus via over under between across one two each any some many much more most less few own
get got use used using way ways make makes there their they them he she his her if so up out off all also just only
like without within whose s t have has had being been will shall may might""".split())
def words(q): return [w for w in re.findall(r"[a-z0-9][a-z0-9'\-]*", q.lower())]
def forms(w):
    fs = {w}
    for suf in ("s","es","ed","ing","d","ly","er","ers"):
        fs.add(w+suf)
        if w.endswith(suf) and len(w)-len(suf) >= 3: fs.add(w[:-len(suf)])
    if w.endswith("ies"): fs.add(w[:-3]+"y")
    if w.endswith("y"): fs.add(w[:-1]+"ies")
    return fs
def text_words(text): return set(re.findall(r"[a-z0-9]+", text.lower()))
def check(root, q, kind, target_text):
    tw = text_words(target_text)
    ws = [w for w in words(q)]
    parts = [p for w in ws for p in re.split(r"[-']", w) if p]
    content = [p for p in parts if p not in STOP]
    present = [p for p in content if forms(p) & tw]
    if kind == "paraphrase":
        return ("PRESENT: " + ",".join(present)) if present else "ok"
    if kind == "keyword":
        absent = [p for p in content if not (forms(p) & tw)]
        return ("ABSENT: " + ",".join(absent)) if absent else "ok"
    return "ok"
if __name__ == "__main__":
    corpus, root = sys.argv[1], sys.argv[2]
    d = json.load(open(corpus))
    for q in d["queries"]:
        if q["kind"] not in ("paraphrase", "keyword") : continue
        t = q["target"]
        txt = open(os.path.join(root, t["file"]), encoding="utf-8", errors="replace").read()
        if "lines" in t: 
            a, b = t["lines"]; txt = "\n".join(txt.splitlines()[a-1:b])
        r = check(root, q["query"], q["kind"], txt)
        n = len(q["query"].split())
        if r != "ok" or not ((4 <= n <= 10) if q["kind"]=="paraphrase" else (2 <= n <= 4)):
            print(q["kind"], "|", q["query"], "|", n, "|", r)
