#!/usr/bin/env python3
"""Check the absent-word sets against their corpora (Python 3, standard library only).

For every word of {corpus}_absent_words.json: the word, its simple plurals (+s, +es,
y->ies, f/fe->ves) and, for accented words, the form without accents must not occur
anywhere in the corpus, case-insensitively, not even inside a longer word (plain
substring test over the lowercased text of every file). The "near" word (informational)
is reported when it does not occur as a whole word.

For every query of {corpus}_absent_queries.json: it must contain at least one word of the
corpus's absent-word list and at least one word of four or more letters, not a common function
word (STOP), that does occur in the corpus as a whole word.

Usage: python3 check_absent.py [corpus ...]    (default: all four)
Prints one line per failure and a summary; exit status 1 when anything fails.
"""
import json, os, re, sys, unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "corpora")  # ../shared beside the repository
CORPORA = {
    "braindump": os.path.join(SHARED, "braindump"),
    "adr": os.path.join(SHARED, "adr"),
    "literate": os.path.join(SHARED, "literate"),
    "manual": os.path.join(REPO, "notes"),
}


# words that do not count as the query's corpus word (too common to tie a query to the corpus)
STOP = {"with", "without", "from", "into", "that", "this", "what", "when", "your", "their", "for", "and",
        "much", "many", "does", "have", "how", "long", "need", "pour", "casa", "para", "und", "versus"}


def corpus_files(name):
    root = CORPORA[name]
    if name == "manual":  # the manual is the .org notes of the folder (not the tool's state dir)
        return sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".org"))
    out = []
    for dp, dn, fn in os.walk(root):
        dn[:] = [d for d in dn if d != ".orgkit"]  # search-tool state, not part of the notes
        out.extend(os.path.join(dp, f) for f in fn)
    return sorted(out)


def corpus_text(name):
    parts = []
    for f in corpus_files(name):
        with open(f, encoding="utf-8", errors="replace") as fh:
            parts.append(fh.read())
    return "\n".join(parts).lower()


def fold(s):
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def forms(word):
    w = word.lower()
    fs = {w, w + "s", w + "es"}
    if w.endswith("y"):
        fs.add(w[:-1] + "ies")
    if w.endswith("fe"):
        fs.add(w[:-2] + "ves")
    elif w.endswith("f"):
        fs.add(w[:-1] + "ves")
    fs |= {fold(f) for f in fs}
    return sorted(fs)


def main(argv):
    names = argv or list(CORPORA)
    failures = 0
    for name in names:
        text = corpus_text(name)
        folded = fold(text)
        tokens = set(re.findall(r"\w+", text))
        path = os.path.join(HERE, f"{name}_absent_words.json")
        data = json.load(open(path, encoding="utf-8"))
        assert data["corpus"] == name
        absent = set()
        n_near_missing = 0
        for item in data["words"]:
            w = item["word"]
            hits = [f for f in forms(w) if f in text or f in folded]
            if hits:
                failures += 1
                print(f"{name}: FAIL word {w!r} occurs as {hits}")
            absent.add(w.lower())
            near = item.get("near")
            if near and near.lower() not in tokens:
                n_near_missing += 1
                print(f"{name}: note: near word {near!r} (for {w!r}) is not a whole word of the corpus")
        qpath = os.path.join(HERE, f"{name}_absent_queries.json")
        nq = 0
        if os.path.exists(qpath):
            qs = json.load(open(qpath, encoding="utf-8"))
            for q in qs["queries"]:
                nq += 1
                words = re.findall(r"[\w'-]+", q["query"].lower())
                has_absent = [w for w in words if w in absent]
                has_present = [w for w in words
                               if w not in absent and w in tokens and len(w) >= 4 and w not in STOP]
                if not has_absent or not has_present:
                    failures += 1
                    print(f"{name}: FAIL query {q['query']!r}: absent {has_absent}, present {has_present}")
        print(f"{name}: {len(data['words'])} words checked over {len(corpus_files(name))} files, "
              f"{nq} queries checked, near words not found: {n_near_missing}")
    print("OK" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
