import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import re, os, json
def org_meta(root, rel, heading_id=None):
    text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
    fid = re.search(r"(?m)^\s*:ID:\s*(\S+)", text).group(1)
    title = re.search(r"(?mi)^#\+title:\s*(.+)$", text).group(1).strip()
    if heading_id is None:
        return {"file": rel, "id": fid, "title": title}
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if re.match(r"\s*:ID:\s*" + re.escape(heading_id), l):
            for j in range(i, -1, -1):
                if re.match(r"^\*+ ", lines[j]):
                    return {"file": rel, "id": heading_id, "title": re.sub(r"^\*+\s+", "", lines[j]).strip()}
    raise SystemExit("heading id not found %s %s" % (rel, heading_id))
def write(path, about, corpus, queries):
    json.dump({"_about": about, "corpus": corpus, "queries": queries}, open(path, "w"), indent=1, ensure_ascii=False)
    open(path, "a").write("\n")
