"""Only slips are corrected: real words the notes lack are kept, and count against the question;
`exact` turns correction off on every surface; context follows search's order and its `relevant`."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import anyio
import pytest
from mcp import Client

from conftest import write_notes
from orgkit.index import Index, update
from orgkit.mcp import build_server
from orgkit.ops import OpContext
from orgkit.retrieve.context import NOTHING_RELEVANT, context
from orgkit.retrieve.search import search

# Each note holds the word an ordinary absent word used to be "corrected" into:
# sourdough -> source, espresso -> expression, afterwards -> after, Haming -> having; and words of
# everyday life newer than the dictionaries' lists: wifi -> wiki, uber -> user, selfie -> self.
NOTES = {
    "code.org": ":PROPERTIES:\n:ID: code\n:END:\n#+title: Source code\n\n"
                "Read the source of a program before you change it; keep the source under version control.\n",
    "regex.org": ":PROPERTIES:\n:ID: regex\n:END:\n#+title: Regular expressions\n\n"
                 "A regular expression matches text; test each expression on real input.\n",
    "review.org": ":PROPERTIES:\n:ID: review\n:END:\n#+title: Code review\n\n"
                  "Review a change after the tests pass, having read the source it touches and the range "
                  "of lines around it; a reviewer holds the key to the merge.\n",
    "wiki.org": ":PROPERTIES:\n:ID: wiki\n:END:\n#+title: Team wiki\n\n"
                "Each user keeps a page on the wiki: write it for your future self.\n",
}
ABSENT = ("sourdough", "espresso", "afterwards", "Haming", "wifi", "uber", "selfie")


@contextlib.contextmanager
def indexed(tmp_path: Path, notes: dict[str, str]) -> Iterator[Index]:
    """An index of `notes`, written under `tmp_path`, without a model; closed after."""
    index = Index.at(write_notes(tmp_path / "notes", notes), tmp_path / "state")
    update(index, embedder=None)
    try:
        yield index
    finally:
        index.close()


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


@pytest.fixture
def index(notes: Path, tmp_path: Path):
    index = Index.at(notes, tmp_path / "state")
    update(index, embedder=None)
    yield index
    index.close()


@pytest.mark.parametrize("word", ABSENT)
def test_an_ordinary_word_the_notes_lack_is_not_rewritten_and_nothing_answers_it(index: Index, word: str) -> None:
    found = search(index, f"{word} recipe")
    assert found.corrected is None and not found.relevant
    assert not any(hit.relevant for hit in found.hits)
    answer = context(index, f"{word} recipe", budget=2000)
    assert answer.included == [] and answer.corrected is None
    assert answer.reason in (NOTHING_RELEVANT, found.reason)


def test_a_misspelling_of_a_word_of_the_notes_is_corrected(index: Index) -> None:
    found = search(index, "regular expresion")
    assert found.corrected == "regular expression" and found.relevant
    assert found.hits[0].id == "regex" and found.hits[0].relevant
    assert search(index, "regular expresion", exact=True).corrected is None


def test_a_slip_the_stemmer_hides_is_corrected_and_a_word_of_another_language_is_kept(index: Index) -> None:
    """"rnage" stems to no stem near "rang" (range), but is one swap from "range"; "fromage" is French."""
    assert search(index, "rnage of lines").corrected == "range of lines"
    assert search(index, "fromage").corrected is None
    found = search(index, "key merge")  # a word spelled like the cache's own entries is counted as a word
    assert found.corrected is None and found.hits[0].id == "review" and found.relevant


def test_a_slip_is_taken_for_the_word_one_edit_from_it_as_typed(tmp_path: Path) -> None:
    """The stemmer cuts a misspelt word its own way: "linearziation" stems one letter from "linearly"
    and "compuation" one from "compat" (compatibility), but as typed each is one edit from a word
    of the notes; a word spelt by ear is read as the word it sounds like; and a slip of a first letter
    is still a slip when nothing else is near ("zource", "peading"), though in a word of five letters
    or fewer only two letters swapped are ("vterm" is another terminal than the notes' "xterm")."""
    with indexed(tmp_path, {
        "ekf.org": ":PROPERTIES:\n:ID: ekf\n:END:\n#+title: Extended filter\n\n"
                   "A Taylor expansion gives the linearization of the motion model around the mean.\n",
        "cost.org": ":PROPERTIES:\n:ID: cost\n:END:\n#+title: Cost\n\nThe cost function grows linearly with "
                    "the computation each step needs.\n",
        "compat.org": ":PROPERTIES:\n:ID: compat\n:END:\n#+title: Compatibility\n\nBackward compatibility "
                      "of the file format; compatibility tests run on every release.\n",
        "more.org": ":PROPERTIES:\n:ID: more\n:END:\n#+title: Upgrades\n\nCompatibility with old "
                    "readers is kept for a year.\n",
        "src.org": ":PROPERTIES:\n:ID: src\n:END:\n#+title: Reading\n\nRead the source first, in an xterm "
                   "or the terminal you prefer.\n",
        "sim.org": ":PROPERTIES:\n:ID: sim\n:END:\n#+title: Simulation\n\nA physics engine steps "
                   "the world.\n"}) as index:
        found = search(index, "Taylor linearziation")
        assert found.corrected == "taylor linearization" and found.hits[0].id == "ekf"
        assert search(index, "compuation").corrected == "computation"
        assert search(index, "osurce").corrected == "source"
        assert search(index, "vterm").corrected is None
        assert search(index, "zource").corrected == "source"
        assert search(index, "peading").corrected == "reading"
        assert search(index, "cost funcshun").corrected == "cost function"  # spelt by ear: three letters off
        assert search(index, "fysics engine").corrected == "physics engine"  # its first sound too


def test_a_hostile_query_costs_no_more_to_correct_than_a_few_slips(index: Index) -> None:
    """A word's edits grow with its length (a 2,000-letter word had 110,000, each 2,000 letters long,
    stemmed and looked up: seconds of CPU, and memory enough to end a server at ten times that), and
    a query's with its words: a word longer than any a person misspells is searched for as it is,
    and so is every unknown word after a query's first few."""
    began = time.monotonic()
    found = search(index, "q" + "wxyz" * 750 + " source")
    assert time.monotonic() - began < 5
    assert found.corrected is None and found.hits[0].id == "code"
    unknown = ["zq" + "".join(letters) for letters in itertools.product("bcdfghj", repeat=4)]  # 2,401 words
    began = time.monotonic()
    found = search(index, " ".join(unknown) + " sourse")
    assert time.monotonic() - began < 5
    assert found.corrected is None  # the slip came after the first few unknown words: kept as typed


def test_a_capitalised_name_is_corrected_only_into_a_name_of_the_notes_with_its_letters(tmp_path: Path) -> None:
    """Two keys swapped in a name the notes hold is a slip of it, and so is a key beside one of its own
    ("Soutce"); a name one key from an ordinary word of theirs, far on the keyboard or a vowel for
    another, is no slip of that word ("Haming", "Raview"), though typed in lower case it is."""
    with indexed(tmp_path, {
        **NOTES, "sql.org": ":PROPERTIES:\n:ID: sql\n:END:\n#+title: Interactive SQL\n\n"
                            "Presto and BigQuery answer interactive queries over large tables.\n",
        "hire.org": ":PROPERTIES:\n:ID: hire\n:END:\n#+title: New hires\n\nOnboarding takes a week.\n"}) as index:
        found = search(index, "Persto BigQueyr")
        assert found.corrected == "presto bigquery" and found.hits[0].id == "sql" and found.relevant
        assert search(index, "Haming review").corrected is None  # not "having": other letters
        assert search(index, "Karpathy").corrected is None
        assert search(index, "Soutce").corrected == "source"  # "t" is beside "r"
        assert search(index, "Raview").corrected is None and search(index, "raview").corrected == "review"
        assert search(index, "Offboarding").corrected is None  # two edits from "onboarding", a word of its own


def test_the_model_ranks_by_the_query_as_it_was_read(cli, tmp_path: Path, tiny_model: Path) -> None:
    """A slip is corrected for meaning too: dense ranking embeds the corrected query, so a misspelt
    query ranks as the word it was taken for does (cosines and all); `--exact` embeds it as typed."""
    notes = write_notes(tmp_path / "notes", {
        "rust.org": ":PROPERTIES:\n:ID: rust\n:END:\n#+title: Rust\n\nThe borrow checker of the compiler "
                    "enforces ownership and memory safety.\n",
        "garden.org": ":PROPERTIES:\n:ID: garden\n:END:\n#+title: Garden\n\nTomato plants need water, "
                      "soil and compost.\n",
        "cats.org": ":PROPERTIES:\n:ID: cats\n:END:\n#+title: Cats\n\nA kitten sleeps in the garden.\n"})

    def dense(*query: str) -> list[tuple[str, float]]:
        result = cli("search", "--notes", str(notes), "--json", "--mode", "dense", *query)
        assert result.exit_code == 0, result.stderr
        return [(hit["id"], hit["score"]) for hit in json.loads(result.stdout)]

    read = dense("compilr", "safety")
    assert read == dense("compiler", "safety") and read[0][0] == "rust"
    assert dense("--exact", "compilr", "safety") != read
    # a word the language uses is read by BM25's passage in dense mode as in the others
    assert dense("kitteh", "garden") == dense("kitten", "garden")


def test_a_slip_is_read_as_the_word_the_best_matching_passage_holds(tmp_path: Path) -> None:
    """Of corrections alike in spelling ("modl": mold, model, modal), the one the passage that best
    matches the whole query holds; and a correction whose stem the tokenizer would cut again
    ("respons") still finds the notes' "response"."""
    with indexed(tmp_path, {
        "bread.org": ":PROPERTIES:\n:ID: bread\n:END:\n#+title: Bread\n\nMold grows on old bread.\n",
        "ml.org": ":PROPERTIES:\n:ID: ml\n:END:\n#+title: Learning\n\nWe fit a model to the training data.\n",
        "api.org": ":PROPERTIES:\n:ID: api\n:END:\n#+title: Web API\n\nThe server sends a response to "
                   "each request.\n"}) as index:
        found = search(index, "modl training")
        assert found.corrected == "model training" and found.hits[0].id == "ml"
        found = search(index, "responsse")
        assert found.corrected == "response" and found.hits and found.hits[0].id == "api"


def test_a_slip_alone_is_read_as_the_commonest_word_it_may_be(tmp_path: Path) -> None:
    """With no other word to read it by, "modl" is the notes' common "model": the passage BM25 puts
    first holds the rare "mold", first for its rarity alone, so it says nothing of what was meant."""
    models = {f"ml{i}.org": f":PROPERTIES:\n:ID: ml{i}\n:END:\n#+title: Learning {i}\n\nWe fit a model "
                            f"to the data of run {i}.\n" for i in range(3)}
    with indexed(tmp_path, {
        **models, "bread.org": ":PROPERTIES:\n:ID: bread\n:END:\n#+title: Bread\n\nMold grows on "
                               "old bread.\n"}) as index:
        assert search(index, "modl").corrected == "model"
        assert search(index, "modl bread").corrected == "mold bread"


def test_a_word_spelt_the_other_side_of_the_atlantic_is_the_notes_word(tmp_path: Path) -> None:
    """"organisation" is the notes' "organization" (the stemmer keeps the two apart) and "flavor" their
    "flavour", each held in full, no slip; a word with no such spelling in the notes stays absent."""
    with indexed(tmp_path, {
        "us.org": ":PROPERTIES:\n:ID: us\n:END:\n#+title: Studio\n\nThe color wheel gives the organization "
                  "of hues; the theater center keeps a catalog.\n",
        "uk.org": ":PROPERTIES:\n:ID: uk\n:END:\n#+title: Kitchen\n\nThe flavour of the harbour fish.\n"}) as index:
        for query, note in (("colour organisation", "us"), ("theatre centre catalogue", "us"), ("flavor", "uk")):
            found = search(index, query)
            assert [h.id for h in found.hits] == [note] and found.relevant and found.signals.coverage == 1.0
            assert found.corrected is None
        assert search(index, "tour").hits == [] and search(index, "colour", exact=True).hits == []


def test_exact_turns_correction_off_on_the_command_line(cli, notes: Path, tiny_model: Path) -> None:
    typed = cli("search", "--notes", str(notes), "--json", "regular", "expresion")
    assert typed.exit_code == 0 and json.loads(typed.stdout)[0]["corrected"] == "regular expression"
    assert "showing results for 'regular expression'" in typed.stderr
    exact = cli("search", "--notes", str(notes), "--json", "--exact", "regular", "expresion")
    assert exact.exit_code == 0 and not any("corrected" in h for h in json.loads(exact.stdout))
    assert "showing results for" not in exact.stderr
    for command in ("context", "recall"):
        result = cli(command, "--notes", str(notes), "--json", "--exact", "expresion")
        assert result.exit_code == 0, result.stderr
        assert "corrected" not in json.loads(result.stdout)
        result = cli(command, "--notes", str(notes), "--json", "expresion")
        assert json.loads(result.stdout)["corrected"] == "expression"


def test_exact_turns_correction_off_through_serve(notes: Path, tiny_model: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "from orgkit.cli import main; main()", "serve",
                             "--notes", str(notes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())

    def ask(request: dict) -> dict:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        assert ask({"op": "context", "query": "expresion"})["result"]["corrected"] == "expression"
        assert "corrected" not in ask({"op": "context", "query": "expresion", "exact": True})["result"]
        hits = ask({"op": "search", "query": "expresion", "exact": True})["result"]
        assert not any("corrected" in hit for hit in hits)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_exact_turns_correction_off_through_mcp(notes: Path, tiny_model: Path) -> None:
    ctx = OpContext(notes, warm=True)
    ctx.base = ctx.root

    async def main() -> tuple[dict, dict]:
        async with Client(build_server(ctx, warm_up=False)) as client:
            read = await client.call_tool("search", {"query": "expresion"})
            kept = await client.call_tool("search", {"query": "expresion", "exact": True})
            return json.loads(read.content[0].text), json.loads(kept.content[0].text)

    read, kept = anyio.run(main)
    assert read["result"][0]["corrected"] == "expression"
    assert not any("corrected" in hit for hit in kept["result"])


LONG = "The cache keeps what was read so the next read is quick. " * 40


def test_context_spends_the_budget_in_search_order_and_stops_where_search_stops(tmp_path: Path) -> None:
    """A long note ranked first keeps its place before a short one ranked second; a note search marks
    not relevant, and any note after it, never comes in; both read `relevant` the same way."""
    with indexed(tmp_path, {
        "cache.org": ":PROPERTIES:\n:ID: cache\n:END:\n#+title: Cache eviction\n\n* Eviction\n"
                     "Cache eviction drops the least recently used entry first.\n\n* More\n" + LONG,
        "lru.org": ":PROPERTIES:\n:ID: lru\n:END:\n#+title: Least recently used\n\n"
                   "An eviction order: the cache entry used least recently goes.\n",
        "garden.org": ":PROPERTIES:\n:ID: garden\n:END:\n#+title: Garden\n\nThe cache of seeds in the shed.\n",
    }) as index:
        for query, budget in (("cache eviction", 2000), ("cache eviction", 120), ("least recently used", 2000)):
            hits = search(index, query, limit=20).hits
            leading = []
            for hit in hits:
                if not hit.relevant:
                    break
                leading.append(hit.id)
            answer = context(index, query, budget=budget)
            included = [e["id"] for e in answer.included if e.get("via") is None]
            assert included == leading[:len(included)], (query, budget)  # search's order, nothing skipped
            assert included and answer.tokens <= budget
            if budget >= 2000:
                assert included == leading  # every relevant hit, and no hit past the first not relevant
        assert [h.id for h in search(index, "cache eviction").hits][0] == "cache"
        small = context(index, "cache eviction", budget=120)
        assert [e["id"] for e in small.included][0] == "cache"  # the long first note is excerpted, not passed over


def test_a_compound_the_notes_lack_is_no_slip_of_its_first_word(index: Index) -> None:
    """"changelog" is "change" and "log", a thing the notes never name; "changign" is "change" mistyped."""
    assert search(index, "changelog").corrected is None
    assert search(index, "changign").corrected == "change"


def test_letters_past_a_word_of_the_notes_make_a_name_not_a_slip(tmp_path: Path) -> None:
    """"graphql" is no "graph" with a slip in its suffix: a suffix's slip is one edit from the word
    ("grpahs"), and a name built on a word ("graphql") is read as typed."""
    with indexed(tmp_path, {"graphs.org": ":PROPERTIES:\n:ID: graphs\n:END:\n#+title: Graphs\n\n"
                                          "A graph holds nodes and the edges between them.\n"}) as index:
        assert search(index, "graphql schema").corrected is None
        assert not search(index, "graphql schema").relevant
        assert search(index, "grpahs edges").corrected == "graphs edges"


def test_a_compound_the_notes_write_apart_is_searched_for_as_their_two_words(tmp_path: Path) -> None:
    """"bikeshare" is the notes' "bike-share" and "homeserver" their "home server", the hyphen or space
    left out: no slip, and no thing they lack. Words the notes hold only apart ("sharebike"), and a word
    of the language they write apart ("lockdown" for their "lock down"), are kept as typed."""
    with indexed(tmp_path, {
        "bikes.org": ":PROPERTIES:\n:ID: bikes\n:END:\n#+title: Bike-share trips\n\n"
                     "A year of bike-share data: trips between stations.\n",
        "nook.org": ":PROPERTIES:\n:ID: nook\n:END:\n#+title: Nook\n\n"
                    "The home server keeps the backups; lock down its SSH first. Share a bike.\n"}) as index:
        found = search(index, "bikeshare trips")
        assert found.corrected == "bike share trips" and found.hits[0].id == "bikes" and found.relevant
        assert found.signals.coverage == 1.0 and found.signals.known == 1.0
        question = search(index, "which backups does the homeserver keep?")
        assert question.corrected == "which backups does the home server keep?" and question.relevant
        assert [h.id for h in question.hits if h.relevant] == ["nook"]
        assert search(index, "sharebike").corrected is None
        assert search(index, "lockdown").corrected is None and search(index, "lockdown").hits == []
        assert search(index, "bikeshare", exact=True).hits == []


def test_a_word_the_language_uses_is_a_slip_only_where_the_query_bears_it_out(tmp_path: Path) -> None:
    """Words too rare for the dictionaries ("matcha", "hangry") are no slips of the notes' "match" and
    "hungry", alone or beside words no passage holds with those, but are beside a word that passage
    holds ("chess matcha"); a misspelling the web writes as often
    ("recieve") is read as the notes' word where a passage holds it beside another word of the query,
    and a slip the language barely uses ("flie", "acheivement") against a far commoner word ("file",
    "achievement") is one alone."""
    with indexed(tmp_path, {
        "chess.org": ":PROPERTIES:\n:ID: chess\n:END:\n#+title: Chess club\n\nThe club match ends at ten; "
                     "players get hungry by then.\n",
        "post.org": ":PROPERTIES:\n:ID: post\n:END:\n#+title: Post\n\nWe receive each parcel at the desk.\n",
        "disk.org": ":PROPERTIES:\n:ID: disk\n:END:\n#+title: Disk\n\nEach file is copied twice.\n",
        "goals.org": ":PROPERTIES:\n:ID: goals\n:END:\n#+title: Goals\n\nIs the target achievable?\n"}) as index:
        for query in ("matcha", "Matcha", "matcha tea", "hangry", "recieve", "hangry recieve"):
            found = search(index, query)
            assert found.corrected is None and found.hits == [], query
        found = search(index, "recieve the parcel")
        assert found.corrected == "receive the parcel" and found.hits[0].id == "post" and found.relevant
        assert search(index, "flie").corrected == "file"
        # weighed against "achievement", one edit from it, though the notes write only "achievable"
        assert search(index, "acheivement").corrected == "achievable"
        assert search(index, "chess matcha").corrected == "chess match"  # the notes' match is a chess one


def test_a_compound_the_language_uses_is_cut_in_two_only_where_the_query_bears_it_out(tmp_path: Path) -> None:
    """"livestream" is a word of its own that the notes write apart: alone it is kept as typed (a word
    they lack), beside a word of the passage that holds "live stream" it is read as theirs; a compound
    no list knows ("homeserver") is cut alone too."""
    with indexed(tmp_path, {
        "club.org": ":PROPERTIES:\n:ID: club\n:END:\n#+title: Club\n\nThe chess final gets a live stream "
                    "from the hall.\n",
        "nook.org": ":PROPERTIES:\n:ID: nook\n:END:\n#+title: Nook\n\nThe home server keeps backups.\n"}) as index:
        assert search(index, "livestream").corrected is None and search(index, "livestream").hits == []
        found = search(index, "chess livestream")
        assert found.corrected == "chess live stream" and found.hits[0].id == "club"
        assert search(index, "homeserver").corrected == "home server"


def test_a_slip_the_stemmer_cuts_to_a_stem_of_the_notes_is_read_as_the_word_meant(tmp_path: Path) -> None:
    """"noeds" stems as "no" and "initalized" as "init", stems the notes hold, so they were searched
    as those; each is one edit from a word of the language the notes hold ("nodes", "initialized").
    The notes' own words stay as typed: "alloc" and "orgs" are words of theirs, though "allot" and
    "ors" are near, heading words too ("Kubes"), and "signning" is read by the stemmer as "signing"."""
    with indexed(tmp_path, {
        "graph.org": ":PROPERTIES:\n:ID: graph\n:END:\n#+title: Graphs\n\nA tree has no cycles; its nodes "
                     "have one parent each.\n",
        "cpu.org": ":PROPERTIES:\n:ID: cpu\n:END:\n#+title: Hardware\n\nRun init first: the module is "
                   "initialized once; rare mem alloc keeps caches warm.\n",
        "team.org": ":PROPERTIES:\n:ID: team\n:END:\n#+title: Teams\n\nWe allot time to the orgs we "
                    "serve, or we do not.\n",
        "cube.org": ":PROPERTIES:\n:ID: cube\n:END:\n#+title: Kubes\n\nCubes of ice.\n",
        "sign.org": ":PROPERTIES:\n:ID: sign\n:END:\n#+title: Signing\n\nSigning a release; sinning "
                    "is another matter.\n",
        "shell.org": ":PROPERTIES:\n:ID: shell\n:END:\n#+title: Shell\n\nEach dir holds files.\n",
        "light.org": ":PROPERTIES:\n:ID: light\n:END:\n#+title: Light\n\nThe lamp dims at night.\n"}) as index:
        found = search(index, "noeds of a tree")
        assert found.corrected == "nodes of a tree" and found.hits[0].id == "graph"
        assert search(index, "initalized").corrected == "initialized"
        assert search(index, "noeds", exact=True).corrected is None
        for query in ("alloc", "orgs", "kubes", "signning"):
            assert search(index, query).corrected is None, query
        # "dirs" the language uses, if rarely: a slip of "dims" only where the query bears it out; else
        # searched as typed, as the notes' "dir"
        found = search(index, "dirs")
        assert found.corrected is None and [hit.id for hit in found.hits] == ["shell"]


def test_a_flood_of_words_the_stemmer_cuts_costs_no_more_than_a_few(tmp_path: Path) -> None:
    """Each word the stemmer cut is asked of the notes as typed: only a query's first few are, so a
    pasted page of them costs what a question does, and a slip among them past those is kept."""
    stems = ["zq" + "".join(letters) for letters in itertools.product("bcdfghj", repeat=4)]  # 2,401
    text = " ".join(stems)
    with indexed(tmp_path, {"flood.org": f":PROPERTIES:\n:ID: flood\n:END:\n#+title: Flood\n\n{text}\n",
                            "graph.org": ":PROPERTIES:\n:ID: graph\n:END:\n#+title: Graphs\n\nTrees have "
                                         "nodes; no cycles.\n"}) as index:
        began = time.monotonic()  # each typed as the notes do not write it, with the stem they hold
        found = search(index, " ".join(s + "s" for s in stems) + " noeds")
        assert time.monotonic() - began < 5
        assert found.corrected is None and found.hits[0].id == "flood"
        assert search(index, "noeds").corrected == "nodes"


def test_a_slip_is_read_as_the_word_people_would_slip_that_way_from_before_a_commoner_one(tmp_path: Path) -> None:
    """"statuc" is one edit from "status" and from "static", but "u" is a key beside "i" and far from
    "s"; "paried" has two neighbours of "paired" swapped and a "t" of "parted" changed: the notes'
    commoner word loses to the one the slip is likely of ("drawm": the key beside the "n" of "drawn",
    not an "m" too many after "draw"). With no
    such difference between them ("canels": a vowel of "canals", a missed "c" of "cancels"), the
    commoner wins, as before."""
    common = "The status of each part of the build is parted out; the cancels drawn up are in the log."
    with indexed(tmp_path, {
        "build.org": ":PROPERTIES:\n:ID: build\n:END:\n#+title: Build\n\n"
                     + "".join(f"* Step {n}\n{common}\n" for n in range(3)),
        "sites.org": ":PROPERTIES:\n:ID: sites\n:END:\n#+title: Sites\n\nA static site, paired with a "
                     "draw of canals and a drawn map.\n"}) as index:
        assert search(index, "statuc").corrected == "static"
        assert search(index, "paried").corrected == "paired"
        assert search(index, "drawm").corrected == "drawn"
        assert search(index, "canels").corrected == "cancels"
