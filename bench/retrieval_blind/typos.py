#!/usr/bin/env python3
"""Misspelled and word-form variants of the "keyword" queries of a retrieval query set.

Reads a query-set JSON ({"corpus", "queries": [{"query", "kind", "target", "also"?}]})
and writes {set}_typos.json beside it: for each "keyword" query, N variants (default
2) typed the way people mistype. Variants rotate through three types, so about a third
of each:

  typo1  one typo
  typo2  two typos (on two different words when the query has two long enough)
  form   one word-form change (plural/singular, -ing/-ed/-s), plus one typo half the time

A typo is one of: deletion of a letter, transposition of adjacent letters, a doubled
letter, a dropped double letter, a neighbouring qwerty key instead of a letter, or a
phonetic spelling (ph->f, c->k, ie<->ei, -tion->-shun, ...). Edits touch only words of
four or more letters, never a word's first letter (people rarely miss it), at most one
typo per word (a two-typo variant of a query with one long word puts both in that word,
if it has seven letters or more), and a query of three or more words keeps at least one
word as it was, so a variant is always recognisable.

Deterministic: the random stream of each query is seeded from (seed, corpus, query,
variant number). Standard library only (Python 3.11).

Usage: python3 typos.py [QUERYSET.json ...] [--set NAME ...] [--seed 29] [--variants 2]
       (no files or sets: the four first query sets of this directory: braindump, adr,
       manual, literate; --set braindump_fit: braindump_fit.json -> braindump_fit_typos.json)

The output is named after the query set's file: X.json -> X_typos.json beside it.
"""
import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import argparse
import json
import os
import random
import re
import sys

QWERTY_ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


def _neighbours():
    pos = {}
    for r, row in enumerate(QWERTY_ROWS):
        for c, ch in enumerate(row):
            pos[ch] = (r, c)
    out = {}
    for ch, (r, c) in pos.items():
        near = []
        for other, (r2, c2) in pos.items():
            if other == ch:
                continue
            # same row, adjacent column; or the rows above/below, overlapping columns
            if (r2 == r and abs(c2 - c) == 1) or (abs(r2 - r) == 1 and c2 - c in (0, 1 if r2 < r else -1)):
                near.append(other)
        out[ch] = "".join(sorted(near))
    return out


NEIGHBOURS = _neighbours()
VOWELS = set("aeiou")

# (pattern, replacement, name): phonetic spellings people write when unsure
PHONETIC = [
    (r"ph", "f", "ph->f"),
    (r"tion\b", "shun", "-tion->-shun"),
    (r"sion\b", "shun", "-sion->-shun"),
    (r"ck", "k", "ck->k"),
    (r"c(?=[aou])", "k", "c->k"),
    (r"(?<=[^aeiou])c(?=[ei])", "s", "c->s"),
    (r"ie", "ei", "ie->ei"),
    (r"ei", "ie", "ei->ie"),
    (r"qu", "kw", "qu->kw"),
    (r"x(?=[aeiou])", "ks", "x->ks"),
    (r"ise\b", "ize", "-ise->-ize"),
    (r"ize\b", "ise", "-ize->-ise"),
    (r"our\b", "or", "-our->-or"),
    (r"(?<=[a-z])y\b", "ie", "-y->-ie"),
    (r"ough\b", "ow", "-ough->-ow"),
    (r"gh(?=t)", "", "ght->t"),
    (r"wr", "r", "wr->r"),
    (r"kn", "n", "kn->n"),
    (r"(?<=[a-z])ea", "ee", "ea->ee"),
    (r"oo", "u", "oo->u"),
]

TYPO_KINDS = ["delete", "transpose", "double", "undouble", "neighbour", "phonetic"]


def eligible(word):
    return len(word) >= 4 and word.isalpha()


def typo_options(word):
    """All single typos of word as (kind, new_word, detail); never at the first letter."""
    opts = []
    n = len(word)
    for i in range(1, n):
        opts.append(("delete", word[:i] + word[i + 1:], f"dropped '{word[i]}' at {i}"))
    for i in range(1, n - 1):
        if word[i] != word[i + 1]:
            opts.append(("transpose", word[:i] + word[i + 1] + word[i] + word[i + 2:],
                         f"swapped '{word[i]}{word[i + 1]}' at {i}"))
    for i in range(1, n):
        if word[i] != word[i - 1] and not (i + 1 < n and word[i + 1] == word[i]):
            opts.append(("double", word[:i] + word[i] + word[i:], f"doubled '{word[i]}' at {i}"))
    for i in range(1, n - 1):
        if word[i] == word[i + 1]:
            opts.append(("undouble", word[:i] + word[i + 1:], f"single '{word[i]}' for '{word[i] * 2}' at {i}"))
    for i in range(1, n):
        for ch in NEIGHBOURS.get(word[i], ""):
            opts.append(("neighbour", word[:i] + ch + word[i + 1:], f"'{ch}' for '{word[i]}' at {i}"))
    for pat, rep, name in PHONETIC:
        for m in re.finditer(pat, word):
            if m.start() == 0 and name not in ("wr->r", "kn->n", "ph->f"):
                continue
            new = word[:m.start()] + rep + word[m.end():]
            if new != word and len(new) >= 3:
                opts.append(("phonetic", new, name))
    return [o for o in opts if o[1] != word]


def pick_typo(rng, word):
    opts = typo_options(word)
    by_kind = {}
    for o in opts:
        by_kind.setdefault(o[0], []).append(o)
    kinds = [k for k in TYPO_KINDS if k in by_kind]
    # phonetic and undouble fit few words: take them more often when they do
    weights = [3 if k in ("phonetic", "undouble") else 2 if k in ("delete", "transpose") else 1 for k in kinds]
    kind = rng.choices(kinds, weights=weights)[0]
    return rng.choice(by_kind[kind])


def _add_suffix(word, suf):
    if suf == "s":
        if re.search(r"(s|x|z|ch|sh)$", word):
            return word + "es"
        if re.search(r"[^aeiou]y$", word):
            return word[:-1] + "ies"
        return word + "s"
    # -ing / -ed
    if word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]
    elif re.search(r"[^aeiou][aeiou][bdgmnpt]$", word) and len(word) <= 5:
        word = word + word[-1]
    if suf == "ed" and re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ied"
    return word + suf


def _stem(word):
    for suf in ("ies", "ing", "ed", "es", "s"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            base = word[: -len(suf)]
            if suf == "ies":
                return base + "y"
            if suf == "es" and not re.search(r"(s|x|z|ch|sh)$", base):
                return word[:-1]
            if suf in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "ls":
                return base[:-1]
            return base
    return word


def form_options(word):
    """Word-form changes as (kind, new_word, detail).

    Without a dictionary the safe changes are number (plural/singular) for any word and
    tense for words that already carry a verb ending (-ing, -ed): adding -ing or -ed to
    an arbitrary word mostly makes non-words of names and nouns.
    """
    opts = []
    if not re.search(r"[aeiouy]", word) or re.search(r"(as|cs)$", word):
        return opts  # acronyms (sbcl, fqdn) and words like emacs, faas have no other form
    participle = word.endswith("ed") and not word.endswith("eed")  # feed, need, elfeed are not
    if participle:
        pass  # a participle has no plural
    elif re.search(r"(ss|us|is)$", word) or not word.endswith("s"):
        opts.append(("plural", _add_suffix(word, "s"), "singular->plural"))
    else:
        opts.append(("singular", _stem(word) if word.endswith(("ies", "es")) else word[:-1], "plural->singular"))
    base = _stem(word)
    if word.endswith("ing") and len(base) >= 5:
        opts += [("tense", _add_suffix(base, "ed"), "-ing->-ed"), ("tense", _add_suffix(base, "s"), "-ing->-s")]
    elif participle and len(base) >= 4:
        opts += [("tense", _add_suffix(base, "ing"), "-ed->-ing")]
    return [o for o in opts if o[1] != word and len(o[1]) >= 3]


def form_weight(word):
    """Words that already show a number or tense ending are the likeliest to be retyped in another form."""
    return 3 if re.search(r"(ing|[^e]ed|[^s]s)$", word) else 1


def make_variant(rng, words, vtype):
    """Apply one variant of type vtype to words; returns (new_words, edits) or None."""
    words = list(words)
    idx = [i for i, w in enumerate(words) if eligible(w)]
    if not idx:
        return None
    # at most one typo a word; a query of three or more words keeps one word as it was
    cap = len(idx) if len(words) <= 2 else min(len(idx), len(words) - 1)
    edits = []

    def typo_at(i):
        kind, new, detail = pick_typo(rng, words[i])
        edits.append({"type": kind, "word": words[i], "result": new, "detail": detail})
        words[i] = new

    if vtype == "typo1":
        typo_at(rng.choice(idx))
    elif vtype == "typo2":
        if cap >= 2:
            for i in rng.sample(idx, 2):
                typo_at(i)
        else:
            # one long word only: two typos on it, apart from each other
            i = max(idx, key=lambda j: len(words[j]))
            if len(words[i]) < 7:
                return None
            typo_at(i)
            if not eligible(words[i]):
                return None
            typo_at(i)
    else:  # form
        idx_f = [j for j in idx if form_options(words[j])]
        if not idx_f:
            return None
        i = rng.choices(idx_f, weights=[form_weight(words[j]) for j in idx_f])[0]
        kind, new, detail = rng.choice(form_options(words[i]))
        edits.append({"type": "word_form", "form": kind, "word": words[i], "result": new, "detail": detail})
        words[i] = new
        rest = [j for j in idx if j != i]
        if rest and cap >= 2 and rng.random() < 0.5:
            typo_at(rng.choice(rest))
    return words, edits


def variants_for(query, corpus, seed, n):
    words = query.split()
    out, seen = [], {query}
    for v in range(n):
        for attempt in range(50):
            rng = random.Random(f"{seed}:{corpus}:{query}:{v}:{attempt}")
            # a type that cannot apply to this query (after 10 tries) gives way to the next
            vtype = VTYPES[(variants_for.counter + attempt // 10) % 3]
            res = make_variant(rng, words, vtype)
            if res is None:
                continue
            new_words, edits = res
            q = " ".join(new_words)
            if q in seen:
                continue
            seen.add(q)
            out.append((q, vtype, edits))
            break
        variants_for.counter += 1
    return out


VTYPES = ["typo1", "typo2", "form"]
variants_for.counter = 0


def process(path, seed, n):
    data = json.load(open(path, encoding="utf-8"))
    corpus = data["corpus"]
    variants_for.counter = 0
    queries = []
    for q in data["queries"]:
        if q["kind"] != "keyword":
            continue
        for text, vtype, edits in variants_for(q["query"], corpus, seed, n):
            e = {"query": text,
                 "kind": "keyword_form" if vtype == "form" else "keyword_typo",
                 "variant": vtype,
                 "source_query": q["query"],
                 "edits": edits,
                 "target": q["target"]}
            if "also" in q:
                e["also"] = q["also"]
            queries.append(e)
    out = {"_about": (f"Misspelled and word-form variants of the keyword queries of {os.path.basename(path)}, "
                      f"made by typos.py (seed {seed}, {n} variants a query). kind keyword_typo: one or two typos; "
                      "keyword_form: a plural/singular or tense change, sometimes with one typo. "
                      "Targets are those of the source query."),
           "corpus": corpus, "seed": seed, "queries": queries}
    # named after the query set (braindump.json -> braindump_typos.json,
    # braindump_fit.json -> braindump_fit_typos.json), not after its corpus
    stem = os.path.splitext(os.path.basename(path))[0]
    dest = os.path.join(os.path.dirname(os.path.abspath(path)), f"{stem}_typos.json")
    with open(dest, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    counts = {}
    for e in queries:
        counts[e["variant"]] = counts.get(e["variant"], 0) + 1
    print(f"{dest}: {len(queries)} variants {counts}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--set", action="append", default=[], metavar="NAME",
                    help="a query set of this directory by name, e.g. braindump_fit (repeatable)")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--variants", type=int, default=2)
    a = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    files = a.files + [os.path.join(here, f"{n}.json") for n in a.set]
    files = files or [os.path.join(here, f"{c}.json") for c in ("braindump", "adr", "manual", "literate")]
    for f in files:
        process(f, a.seed, a.variants)


if __name__ == "__main__":
    sys.exit(main())
