"""Seeded sampling of notes/headings for the retrieval query sets (seed 29; braindump_fit: seed 41)."""
import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import os, re, random, sys, json

SEED = 29
ROOTS = {
    "braindump": _os.path.join(_SHARED, "braindump"),
    "manual": _os.path.join(_REPO, "notes"),
    "literate": _os.path.join(_SHARED, "literate"),
}

def prose_words(text):
    out, in_block = [], False
    in_drawer = False
    for line in text.splitlines():
        s = line.strip()
        if re.match(r"(?i)#\+begin_(src|example)", s): in_block = True; continue
        if re.match(r"(?i)#\+end_(src|example)", s): in_block = False; continue
        if in_block: continue
        if s.upper() == ":PROPERTIES:": in_drawer = True; continue
        if s.upper() == ":END:": in_drawer = False; continue
        if in_drawer or s.startswith("#+"): continue
        out.extend(re.findall(r"[A-Za-z][A-Za-z'-]+", s))
    return len(out)

def org_files(root):
    fs = []
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".org"):
                fs.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(fs)

# The manual folder gained 15 notes (20261204*) while this set was being written; the
# sampling frame is the 46 notes the set was planned on (names starting 20261202).
FRAME_PREFIX = {"manual": "20261202"}

def sample_files(corpus, n, seed=SEED, exclude=()):
    root = ROOTS[corpus]
    fs = [f for f in org_files(root) if f.startswith(FRAME_PREFIX.get(corpus, ""))]
    order = random.Random(seed).sample(fs, len(fs))
    order = [f for f in order if f not in set(exclude)]
    picked, skipped = [], []
    for f in order:
        if len(picked) == n: break
        w = prose_words(open(os.path.join(root, f), encoding="utf-8", errors="replace").read())
        (picked if w >= 40 else skipped).append((f, w))
    return picked, skipped

def literate_headings():
    root = ROOTS["literate"]
    hs = []
    for f in org_files(root):
        lines = open(os.path.join(root, f), encoding="utf-8", errors="replace").read().splitlines()
        heads = [(i, l) for i, l in enumerate(lines) if re.match(r"^\*+ ", l)]
        for k, (i, l) in enumerate(heads):
            lvl = len(l) - len(l.lstrip("*"))
            if lvl > 3: continue
            # body: up to the next heading of any level
            end = heads[k + 1][0] if k + 1 < len(heads) else len(lines)
            body = [x for x in lines[i + 1:end] if x.strip()]
            if len(body) >= 5:
                hs.append((f, i + 1, l.lstrip("*").strip(), end))
    return hs

def sample_literate(n):
    hs = literate_headings()
    order = random.Random(SEED).sample(hs, len(hs))
    root = ROOTS["literate"]
    picked, skipped = [], []
    for h in order:
        if len(picked) == n: break
        f, line, title, end = h
        lines = open(os.path.join(root, f), encoding="utf-8", errors="replace").read().splitlines()
        w = prose_words("\n".join(lines[line:end]))
        (picked if w >= 25 else skipped).append((f, line, title, w))
    return picked, skipped

def targeted_files(path):
    """Files a query set already uses: every target and every `also` entry."""
    d = json.load(open(path, encoding="utf-8"))
    out = set()
    for q in d["queries"]:
        for t in [q["target"]] + q.get("also", []):
            if t: out.add(t["file"])
    return sorted(out)

# Usage: python3 sample.py CORPUS N [--seed S] [--exclude QUERYSET.json ...]
# (braindump_fit.json: python3 sample.py braindump 90 --seed 41 --exclude braindump.json)
if __name__ == "__main__":
    args = sys.argv[1:]
    seed, exclude = SEED, []
    if "--seed" in args:
        i = args.index("--seed"); seed = int(args[i + 1]); del args[i:i + 2]
    if "--exclude" in args:
        i = args.index("--exclude")
        for path in args[i + 1:]:
            exclude += targeted_files(os.path.join(_DATA, path) if not os.path.isabs(path) else path)
        del args[i:]
    c, n = args[0], int(args[1])
    if c == "literate":
        p, s = sample_literate(n)
    else:
        p, s = sample_files(c, n, seed, exclude)
    print(json.dumps({"picked": p, "skipped": s}, indent=0))
