import json, random, re, hashlib
from pathlib import Path
root = Path("/tmp/fl/enews")
H = re.compile(r"^(\*+)\s+(.*)$")
items = []
for f in sorted(root.glob("*.org")):
    lines = f.read_text(encoding="utf-8", errors="replace").split("\n")
    heads = [i for i, l in enumerate(lines) if H.match(l)]
    for k, i in enumerate(heads):
        end = heads[k + 1] if k + 1 < len(heads) else len(lines)
        body = [l for l in lines[i + 1:end] if l.strip() and not l.lstrip().startswith("#+")]
        words = sum(len(l.split()) for l in body)
        if words >= 25:
            items.append({"file": f.name, "line": i + 1, "heading": H.match(lines[i]).group(2).strip(),
                          "text": "\n".join(lines[i:end]).strip()})
rng = random.Random(2027)
picked = rng.sample(items, 45)
json.dump({"sha256": {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(root.glob("*.org"))},
           "sections": picked}, open("/tmp/enews_blind/sections.json", "w"), indent=1)
print(len(items), "eligible;", "picked per file:", {f: sum(1 for p in picked if p["file"] == f) for f in sorted({p["file"] for p in picked})})
