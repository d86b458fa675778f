"""The items the `*_fresh.json` sets were written on: `python sample_fresh.py` (from this folder's parent)
prints them. Seed 2031 for all three: 24 braindump notes that no earlier braindump set targets, 24 literate
sections (level 1-3, five non-blank lines, 25 words of prose) that literate.json does not target, the 15
ADRs in a new order; kinds cycle paraphrase, keyword, question."""
import importlib.util
import json
import os
import random

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("sample", os.path.join(HERE, "sample.py"))
sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sample)
SEED = 2031
KINDS = ("paraphrase", "keyword", "question")


def targets(name: str) -> list[dict]:
    data = json.load(open(os.path.join(HERE, name), encoding="utf-8"))
    return [t for q in data["queries"] for t in [q["target"], *q.get("also", [])] if t]


def braindump() -> list[dict]:
    used = {t["file"] for name in ("braindump.json", "braindump_fit.json", "braindump_fit2.json",
                                   "braindump_sections.json") for t in targets(name)}
    picked, _ = sample.sample_files("braindump", 24, SEED, sorted(used))
    return [{"file": f, "kind": KINDS[i % 3]} for i, (f, _) in enumerate(picked)]


def literate() -> list[dict]:
    used = {(t["file"], t["line"]) for t in targets("literate.json")}
    picked = []
    for f, line, title, end in random.Random(SEED).sample(sample.literate_headings(), len(sample.literate_headings())):
        if len(picked) == 24:
            break
        text = open(os.path.join(sample.ROOTS["literate"], f), encoding="utf-8", errors="replace").read()
        if (f, line) not in used and sample.prose_words("\n".join(text.splitlines()[line:end])) >= 25:
            picked.append({"file": f, "line": line, "title": title, "kind": KINDS[len(picked) % 3]})
    return picked


def adr() -> list[dict]:
    files = sorted(f for f in os.listdir(os.path.join(sample._SHARED, "adr")) if f[:2].isdigit())
    return [{"file": f, "kind": KINDS[i % 3]} for i, f in enumerate(random.Random(SEED).sample(files, len(files)))]


if __name__ == "__main__":
    print(json.dumps({"braindump": braindump(), "literate": literate(), "adr": adr()}, indent=1))
