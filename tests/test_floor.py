"""The relevance floor, typo-tolerant words and the one fusion module."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from conftest import REPO, SHARED, shared_path, write_notes
from orgkit.retrieve.floor import Baseline
from test_index import NOTES

if TYPE_CHECKING:
    from orgkit.retrieve.search import SearchResult


def search(cli, notes: Path, *args: str) -> list[dict]:
    result = cli("search", "--notes", str(notes), "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def test_nonsense_marks_every_hit_not_relevant_and_min_score_cuts_them(cli, notes: Path, tiny_model: Path) -> None:
    hits = search(cli, notes, "xqzzyv", "nonexistentterm")
    assert hits and not any(h["relevant"] for h in hits)
    assert search(cli, notes, "--min-score", "0.01", "xqzzyv", "nonexistentterm") == []
    found = search(cli, notes, "compost", "soil")
    assert found[0]["id"] == "tomatoes" and found[0]["relevant"]
    assert [h["id"] for h in search(cli, notes, "--min-score", "0.5", "compost", "soil")] == ["tomatoes"]
    text = cli("search", "--notes", str(notes), "--limit", "1", "xqzzyv").stdout
    assert "(not relevant)" in text or text == ""


def test_min_score_comes_from_the_config_when_not_given(cli, notes: Path, tiny_model: Path) -> None:
    (notes / "orgkit.toml").write_text("[search]\nmin_score = 0.5\n")
    assert search(cli, notes, "xqzzyv", "nonexistentterm") == []
    assert len(search(cli, notes, "--min-score", "0", "xqzzyv", "nonexistentterm")) > 0


def test_a_misspelled_title_word_still_finds_the_note(cli, notes: Path) -> None:
    assert search(cli, notes, "--mode", "lexical", "tmoatoes")[0]["id"] == "tomatoes"
    assert search(cli, notes, "--mode", "lexical", "kitens")[0]["id"] == "kittens"
    # a word that matches nothing and is near nothing is left out, not guessed at
    assert search(cli, notes, "--mode", "lexical", "qqqqqqq") == []


def test_braindump_by_words_only_floor_keeps_what_it_finds(cli, tmp_path: Path) -> None:
    """Without a model: a mistyped title finds its note, relevant; words the notes lack are not relevant."""
    notes = tmp_path / "braindump"
    shutil.copytree(shared_path("corpora", "braindump"), notes)
    hits = search(cli, notes, "--mode", "lexical", "robot", "kinematcs")
    assert hits[0]["title"] == "Robot Kinematics" and hits[0]["relevant"]
    for query in ("ancient egyptian burial rituals", "volcano eruption prediction in iceland"):
        assert not any(h["relevant"] for h in search(cli, notes, "--mode", "lexical", *query.split()))
    manual = tmp_path / "manual"
    shutil.copytree(REPO / "notes", manual)
    assert search(cli, manual, "--mode", "lexical", "token", "budget")[0]["relevant"]
    for query in ("symptoms of the flu in toddlers", "causes of the french revolution"):
        assert not any(h["relevant"] for h in search(cli, manual, "--mode", "lexical", *query.split()))


BRAINDUMP_FILES = ("spaced_repetition", "richard_hamming", "bloom_filter", "cuckoo_filters", "gaussian_filter",
                   "robot_kinematics", "studying", "unix_lsof")
MANUAL_FILES = ("20261202121900-token-budgets", "20261202120100-installing")


@pytest.fixture
def minilm(monkeypatch) -> Callable[[Path], Callable[[str], "SearchResult"]]:
    """Index a notes folder with the real model; a search of it (skips when the shared model is absent)."""
    from orgkit.config import load
    from orgkit.embed import Embedder
    from orgkit.index import Index, update
    from orgkit.retrieve.search import VectorCache
    from orgkit.retrieve.search import search as search_index

    model = SHARED / "models" / "all-MiniLM-L6-v2-int8"
    if not model.is_dir():
        pytest.skip("the offline model in ../shared/models is absent")
    monkeypatch.setenv("ORGKIT_MODEL", "sentence-transformers/all-MiniLM-L6-v2")
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(model))
    opened: list = []

    def indexed(notes: Path) -> Callable[[str], "SearchResult"]:
        index, embedder, cache = Index.at(notes), Embedder.from_config(load(notes)), VectorCache()
        update(index, embedder=embedder)
        opened.append(index)
        return lambda query: search_index(index, query, embedder=embedder, cache=cache)

    yield indexed
    for index in opened:
        index.close()


def test_off_topic_questions_find_nothing_relevant_with_the_real_model(tmp_path: Path, minilm) -> None:
    """Notes from braindump and the manual: their own queries pass the floor, the dev set's off-topic ones do not."""
    notes = tmp_path / "mixed"
    notes.mkdir()
    for name in BRAINDUMP_FILES:
        shutil.copy(shared_path("corpora", "braindump", "reference", f"{name}.org"), notes)
    for name in MANUAL_FILES:
        shutil.copy(REPO / "notes" / f"{name}.org", notes)
    search_index = minilm(notes)
    for query, title in (("gaussian filtering", "Gaussian Filter"), ("robot kinematcs", "Robot Kinematics"),
                         ("token budget", "Token budgets"), ("how do I install orgkit", "Installing orgkit"),
                         ("studyng", "Studying"), ("gausian filtr", "Gaussian Filter")):
        found = search_index(query)
        assert found.relevant and found.hits[0].title == title and found.hits[0].relevant, query
    queries = json.loads((REPO / "bench" / "retrieval_dev.json").read_text())["queries"]
    answered = []
    for query in [q["query"] for q in queries if q["kind"] == "off-topic"]:
        found = search_index(query)
        assert found.relevant or not any(h.relevant for h in found.hits), query
        answered += [query] if found.relevant else []
    # ten notes ask little of a cosine (their scale, probes.py): a question near one's subject ("Studying")
    # passes, as a paraphrase of it would; the 44 others do not
    assert answered == ["learning to play the cello"]


def test_edit_distance_counts_a_swap_of_neighbours_as_one() -> None:
    from orgkit.index.vocab import edit_distance

    assert edit_distance("lsof", "losf", 2) == 1
    assert edit_distance("kinemat", "kinematc", 2) == 1
    assert edit_distance("abcdef", "uvwxyz", 2) == 3  # past the limit: limit + 1


def test_candidates_take_the_floor_verdict_and_scan_only_ones_are_no_evidence() -> None:
    from orgkit.retrieve.candidates import fuse

    def row(node_id: str, **extra) -> dict:
        return {"id": node_id, "title": node_id, "file": f"{node_id}.org", "line": 1, "level": 0, **extra}

    off_topic = fuse({"search": [row("a", relevant=False), row("b", relevant=False)], "scan": [row("c"), row("a")]}, 5)
    assert not any(c.relevant for c in off_topic)
    assert [c.id for c in off_topic][0] == "a" and off_topic[0].sources == ["search", "scan"]
    answered = fuse({"search": [row("a", relevant=True), row("b", relevant=False)], "scan": [row("c")]}, 5)
    # a headline sharing a word with the query ("Pros and Cons") is no evidence when search judged
    assert {c.id: c.relevant for c in answered} == {"a": True, "b": False, "c": False}
    assert all(c.relevant for c in fuse({"scan": [row("c")]}, 5))


def test_a_misspelled_four_letter_word_is_corrected_though_its_stem_is_shorter(cli, tmp_path: Path) -> None:
    """"gibs" stems to "gib": the word's length, not the stem's, decides whether it is corrected (beside
    a word of its note: English uses "gibs" itself, so alone it is kept as typed, vocab.doubtful)."""
    notes = write_notes(tmp_path / "gibbs", {
        "gibbs.org": (":PROPERTIES:\n:ID: gibbs\n:END:\n#+title: Gibbs' Inequality\n\n"
                      "Entropy is at most cross entropy.\n"),
        "other.org": ":PROPERTIES:\n:ID: other\n:END:\n#+title: Other\n\nNothing about it.\n",
    })
    hits = search(cli, notes, "--mode", "lexical", "gibs", "entropy")
    assert [h["id"] for h in hits] == ["gibbs"] and hits[0]["corrected"] == "gibbs entropy"
    assert search(cli, notes, "--mode", "lexical", "gib") == []  # three letters: too short to guess at


def test_a_query_whose_words_one_passage_holds_passes_whatever_its_cosine(tmp_path: Path) -> None:
    """A query of remembered words that one note holds is answered though the model finds its meaning far;
    a query with few of its words held needs the cosine, and a hit answers only on its own signals."""
    from orgkit.index import Index, update
    from orgkit.retrieve import floor
    from orgkit.retrieve.search import Cosines, _hits, _judge, lexical_ranking, lexical_terms

    index = Index.at(write_notes(tmp_path / "notes", NOTES))
    update(index)
    dense = floor.floors_for("sentence-transformers/all-MiniLM-L6-v2")
    assert dense is not None

    def judged(query: str, cosine: float) -> tuple[bool, dict]:
        with index.snapshot() as conn:
            terms = lexical_terms(conn, query, index.backend, index.memo)
            lexical = lexical_ranking(conn, query, 10, terms, index.backend)
            hits = _hits(index, lexical, query, 10)
            total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            cosines = Cosines(cosine, lambda node: cosine, BRAINDUMP_LIKE)
            best = _judge(index, hits, terms, lexical, cosines, dense, total)
        assert best is not None
        return floor.judge(best, dense).relevant, {hit.title: hit.relevant for hit in hits}

    passes, answers = judged("compost soil water", 0.10)  # every word in one note, its meaning far
    assert passes and answers["Tomatoes"] and not answers.get("Cats", False)
    passes, answers = judged("compost sparrows migrating south", 0.10)  # one word of four held
    assert not passes and not any(answers.values())
    # three real words the notes never use raise the floor: near in meaning is not enough, very near is
    assert not judged("compost sparrows migrating south", 0.40)[0]
    assert judged("compost sparrows migrating south", 0.60)[0]
    index.close()


BRAINDUMP_LIKE = Baseline(median=0.25, spread=0.07)  # everyday questions' top cosines over a broad corpus


ADRS = {"01-arachne-configuration": "arachne config schema", "09-govuk-documentdb": "documentdb tls certificates fqdn",
        "11-cloudplatform-one-cluster": "should dev staging and production share a single kubernetes cluster",
        "15-ucsschool-bff-rest-service": "bff rankine api"}


def test_the_floor_holds_on_a_second_corpus_nothing_was_fitted_on(tmp_path: Path, minilm) -> None:
    """Decision records (none of them seen while the floor was fitted): queries written blind for them pass with
    their record first, and the everyday questions written blind for the corpus find nothing relevant."""
    notes = tmp_path / "adr"
    notes.mkdir()
    for name in ADRS:
        lines = shared_path("corpora", "adr", f"{name}.md").read_text().splitlines()
        body = [("*" * (len(line) - len(line.lstrip("#")) - 1) + " " + line.lstrip("# ")) if line.startswith("##")
                else line for line in lines if not line.startswith("# ")]
        title = next(line[2:] for line in lines if line.startswith("# "))
        (notes / f"{name}.org").write_text(f":PROPERTIES:\n:ID: {name}\n:END:\n#+title: {title}\n\n" + "\n".join(body))
    search_index = minilm(notes)
    for name, query in ADRS.items():
        found = search_index(query)
        assert found.relevant and found.hits[0].id == name and found.hits[0].relevant, query
    everyday = json.loads((REPO / "bench" / "retrieval_blind" / "adr_everyday.json").read_text())["queries"]
    for query in [q["query"] for q in everyday]:
        found = search_index(query)
        assert not found.relevant and not any(h.relevant for h in found.hits), query


def test_the_corpus_scale_is_the_probes_median_and_spread() -> None:
    """The median of the probes' top cosines and their median absolute deviation as a standard deviation;
    a corpus whose probes all reach one cosine still has a spread, so a standing is always a number."""
    import numpy as np

    from orgkit.retrieve.probes import MAD_AS_SD, measured

    scale = measured(np.array([0.1, 0.2, 0.3, 0.4, 0.9]))
    assert scale.median == pytest.approx(0.3) and scale.spread == pytest.approx(0.1 * MAD_AS_SD)
    assert scale.standing(0.3 + 2 * scale.spread) == pytest.approx(2.0)
    assert measured(np.array([0.2, 0.2, 0.2])).spread > 0


def test_a_query_is_judged_on_its_corpus_scale_measured_once_a_generation(tmp_path: Path, minilm) -> None:
    """Over three notes on pets and a garden, everyday questions the notes do touch pass and others do not;
    the scale is measured once for an index generation and again after the notes change."""
    notes = write_notes(tmp_path / "notes", NOTES)
    search_index = minilm(notes)
    found = search_index("how do I look after a young cat")
    assert found.relevant and found.hits[0].id == "kittens"
    scale = found.signals.baseline if found.signals else None
    assert scale is not None and scale.median < 0.3
    refused = search_index("stock market crash of 1929")
    assert not refused.relevant and refused.signals is not None and refused.signals.baseline is scale
    (notes / "stocks.org").write_text(":PROPERTIES:\n:ID: stocks\n:END:\n#+title: Stocks\n\n"
                                      "The stock market crashed in October 1929.\n")
    from orgkit.index import Index, update

    changed = Index.at(notes)
    update(changed)
    changed.close()
    again = search_index("stock market crash of 1929")
    assert again.signals is not None and again.signals.baseline is not scale


def test_a_question_must_come_nearer_than_a_described_subject() -> None:
    """The same top cosine passes as a subject described and not as a question asked; one far above does."""
    from orgkit.retrieve import floor

    dense = floor.floors_for("sentence-transformers/all-MiniLM-L6-v2")
    assert dense is not None
    assert floor.asks("how does an isolation forest detect anomalies") and floor.asks("isolation forest anomalies?")
    assert not floor.asks("trimming connections from trained nets") and not floor.asks("  ")
    assert floor.asks("linux oom killer, how does it pick which process to kill")  # its subject named first
    assert not floor.asks("grid cells, place cells and head direction")
    assert floor.asks("what's the difference between a call option and a put") and floor.asks("how many steps per minute")
    # a question word followed by no auxiliary starts a description, not a question
    assert not floor.asks("when adding a file to an outline entry, the prompt starts in the other window's folder")
    assert not floor.asks("how names and parent chains get derived for entries")
    assert not floor.asks("why comparing yourself with competitors derails your aims")

    def passes(cosine: float, query: str, named: float = 0.3) -> bool:
        signals = floor.Signals(cosine, 0.3, 1.0, BRAINDUMP_LIKE, floor.asks(query), named=named)
        return floor.judge(signals, dense).relevant

    assert passes(0.35, "grid of tiny magnets matching their neighbours")
    assert not passes(0.35, "what do grid cells in the entorhinal cortex encode")
    assert passes(0.60, "what do grid cells in the entorhinal cortex encode")
    # a question comes near in words too: the same cosine passes when its first note holds most of them
    assert passes(0.42, "why would a database store values by column", named=0.6)
    assert not passes(0.42, "why would a database store values by column", named=0.1)


def test_a_question_needs_a_cosine_no_corpus_scale_lowers() -> None:
    """A corpus on one subject leaves everyday questions far, so a question near its field stands high on its
    scale; an answered question comes near its note whatever else the notes hold, and one that stays below
    that cosine is refused however high it stands. A described subject is still read on the scale alone."""
    from orgkit.retrieve import floor

    dense = floor.floors_for("sentence-transformers/all-MiniLM-L6-v2")
    assert dense is not None
    narrow = Baseline(median=0.15, spread=0.04)  # a manual's: everyday questions reach 0.15

    def passes(cosine: float, query: str, known: float = 1.0) -> bool:
        return floor.judge(floor.Signals(cosine, 0.3, known, narrow, floor.asks(query), 0.3), dense).relevant

    asked = "how do i switch the review page to dark mode?"
    assert narrow.standing(0.36) > 10 * dense.query  # far above the scale's floor...
    assert not passes(0.36, asked)  # ...and refused all the same
    assert passes(0.50, asked) and passes(0.36, "the review page in dark colours")
    assert not passes(0.45, asked, known=0.5)  # a word the notes lack counts against it, as on the scale


def test_a_question_passes_only_when_its_top_hit_holds_some_of_its_words() -> None:
    """A question near the notes' subjects scores as a paraphrase does on the cosine, but the note ranked
    first for it holds none of the words it names; a question with no meaningful words is not held to it."""
    from orgkit.retrieve import floor

    dense = floor.floors_for("sentence-transformers/all-MiniLM-L6-v2")

    def passes(named: float, query: str) -> bool:
        return floor.judge(floor.Signals(0.60, 0.3, 1.0, BRAINDUMP_LIKE, floor.asks(query), named), dense).relevant

    asked = "how do i run orgkit inside a docker container"
    assert passes(0.5, asked) and passes(floor.NAMED, asked)
    assert not passes(0.01, asked)
    assert not passes(0.06, asked)  # a word of little weight: what a question near the notes' field may hold
    assert passes(0.01, "running the tool in an isolated box")  # a described subject: the cosine alone decides
    assert floor.judge(floor.Signals(0.60, 0.9, 1.0, BRAINDUMP_LIKE, True, 0.0), dense).relevant  # its words alone

    def lifted(cosine: float, named: float) -> bool:
        return floor.judge(floor.Signals(cosine, 0.3, 1.0, BRAINDUMP_LIKE, True, named), dense).relevant

    assert lifted(0.44, 0.5) and not lifted(0.44, 0.1)  # the words its first note holds count toward its floor


def test_the_manual_refuses_a_question_its_notes_do_not_answer(tmp_path: Path, minilm) -> None:
    """The manual answers how to install orgkit; it never says how to run it in a container."""
    notes = tmp_path / "manual"
    notes.mkdir()
    for name in MANUAL_FILES:
        shutil.copy(REPO / "notes" / f"{name}.org", notes)
    search_index = minilm(notes)
    assert search_index("how do I install orgkit").relevant
    assert not search_index("how do i run orgkit inside a docker container").relevant


def test_a_question_naming_a_thing_the_notes_lack_is_not_answered() -> None:
    """A rare word no note holds, no slip of theirs, names a thing the notes do not answer a question
    about; a subject described with it is judged on its cosine as before."""
    from orgkit.retrieve import floor

    dense = floor.floors_for("sentence-transformers/all-MiniLM-L6-v2")

    def passes(query: str, unnamed: bool, cosine: float = 0.60) -> bool:
        signals = floor.Signals(cosine, 0.4, 0.8, BRAINDUMP_LIKE, floor.asks(query), 0.4, unnamed)
        return floor.judge(signals, dense).relevant

    asked = "how does paxos elect a leader"
    assert passes(asked, unnamed=False) and not passes(asked, unnamed=True)
    assert passes("paxos leader election rounds", unnamed=True)
    assert not floor.judge(floor.Signals(None, 0.5, 0.8, asks=True, unnamed=True)).relevant  # words only, too
    assert floor.judge(floor.Signals(None, 0.5, 0.8, asks=True)).relevant
    assert floor.rare(0) and floor.rare(50) and not floor.rare(5000)


def _raft_notes(tmp_path: Path) -> Path:
    """A folder of one note on how raft elects a leader."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "raft.org").write_text(
        ":PROPERTIES:\n:ID: raft\n:END:\n#+title: Raft consensus\n\n"
        "Raft elects a leader by votes: a follower that hears no heartbeat becomes a candidate and\n"
        "asks the others for votes; the leader replicates the log to its followers.\n")
    return notes


def test_search_refuses_a_question_about_a_thing_its_notes_never_name(cli, tmp_path: Path) -> None:
    """Notes on raft answer how raft elects a leader, also asked with an ordinary word they lack, and
    not how paxos does; the tail of a contraction is no word of the question."""
    notes = _raft_notes(tmp_path)
    (notes / "soup.org").write_text(":PROPERTIES:\n:ID: soup\n:END:\n#+title: Soup\n\nLeek and potato soup.\n")

    def relevant(query: str) -> bool:
        hits = search(cli, notes, "--mode", "lexical", query)
        return bool(hits) and hits[0]["id"] == "raft" and hits[0]["relevant"]

    assert relevant("how does raft elect a leader")
    assert relevant("how does raft actually elect a leader")  # "actually": a common word, no name
    assert not relevant("how does paxos elect a leader")  # "paxos": no note names it
    assert relevant("paxos leader election votes")  # not asked: its words decide
    assert relevant("why isn't the raft leader elected by votes")  # "isn", "t": a contraction's tails, no names
    assert relevant("how does raft 3 elect a leader")  # a number names nothing alone
    assert relevant("how did raft elect a leader in its 4th term")  # nor an ordinal
    assert relevant("how did raft elect a leader in the 1990s")  # nor a decade
    assert relevant("how does raft elect a leader with asterisks")  # a plural the lists barely count, of a word they do


def test_a_query_of_function_words_alone_is_about_nothing_the_notes_hold(cli, tmp_path: Path) -> None:
    """Every note holds "the", "of" and "and": a query of them alone is ranked by them, and judged
    as one of no word."""
    notes = _raft_notes(tmp_path)
    for query in ("the of and", "how does it?", "the"):
        hits = search(cli, notes, "--mode", "lexical", query)
        assert hits and not any(hit["relevant"] for hit in hits), query
    assert search(cli, notes, "--mode", "lexical", "the leader of raft")[0]["relevant"]


def test_a_query_of_no_word_holds_nothing_the_notes_hold() -> None:
    """Punctuation alone gets a cosine from the model like any text; with no word, the notes hold none
    of the query's words, and the floor asks of its cosine what it asks of a query of absent words."""
    from orgkit.retrieve import floor
    from orgkit.retrieve.search import known

    dense = floor.floors_for("sentence-transformers/all-MiniLM-L6-v2")
    assert known([]) == 0.0
    assert floor.judge(floor.Signals(0.41, 0.0, 1.0, BRAINDUMP_LIKE), dense).relevant
    assert not floor.judge(floor.Signals(0.41, 0.0, known([]), BRAINDUMP_LIKE), dense).relevant


def test_search_refuses_a_question_about_a_name_its_notes_never_write(cli, tmp_path: Path) -> None:
    """A word typed capitalised where no sentence starts is a name, however common the word: notes on
    raft do not say how Telegram elects a leader. A name the notes hold a word of is theirs ("the Raft
    Telegram"), a query typed in Title Case is one such name, and a sentence's first word is no name."""
    notes = _raft_notes(tmp_path)

    def relevant(query: str) -> bool:
        hits = search(cli, notes, "--mode", "lexical", query)
        return bool(hits) and hits[0]["relevant"]

    assert relevant("how does a telegram leader collect votes")  # an ordinary word the notes lack
    assert not relevant("how does a Telegram leader collect votes")  # the same word, typed as a name
    assert not relevant("how do Telegram Groups elect a leader by votes")  # a name of two words, neither held
    assert relevant("how does the Raft Telegram elect a leader")  # a name of two words, one of them held
    assert relevant("How Does A Telegram Leader Collect Votes")  # Title Case: one name, which the notes hold a word of
    assert relevant("Telegram: how does a leader collect votes")  # where a sentence starts
    assert relevant("telegram leader votes, Telegram Votes")  # not asked: its words decide


def test_a_capital_marks_a_name_only_in_english(cli, tmp_path: Path) -> None:
    """German writes every noun with a capital: a German question whose nouns the notes lack in part is
    judged on its words, not refused as one naming a thing."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "raft.org").write_text(
        ":PROPERTIES:\n:ID: raft\n:END:\n#+title: Raft\n\n"
        "Raft wählt den Leiter durch Stimmen: ein Knoten ohne Herzschlag wird Kandidat und bittet\n"
        "die anderen Knoten um ihre Stimmen; der Leiter repliziert das Protokoll.\n")

    def relevant(query: str) -> bool:
        hits = search(cli, notes, "--mode", "lexical", query)
        return bool(hits) and hits[0]["relevant"]

    assert relevant("Wie wählt Raft den Leiter mit der Zeit?")  # "Zeit": a word German uses often
    assert not relevant("how does Raft pick the Leiter by Stimmen over Zeit?")  # in English, a name
    # German's list counts most nouns at its floor ("stadt", "minuten", "beispiel"): common all the same
    assert relevant("Wie wählt Raft den Leiter in der Stadt?")
    assert relevant("Wie wählt Raft den Leiter in Minuten?")
    assert not relevant("Wie wählt Paxos den Leiter?")  # a word the language barely uses names a thing


def test_the_language_counts_british_spellings_and_plurals_as_their_words() -> None:
    from orgkit.index.lexicon import Lexicon

    lexicon = Lexicon()
    assert lexicon.count("honour") == lexicon.count("honor") > 1000
    assert lexicon.count("behaviour") == lexicon.count("behavior") > 1000
    assert lexicon.count("colour") == lexicon.count("color") > 1000
    assert lexicon.count("paxos") == 0 and lexicon.count("goroutines") == 0
    assert lexicon.count("asterisks") == lexicon.count("asterisk") > 100  # a plural counts as its word does
    assert lexicon.count("class") > lexicon.count("clas")  # no plural of "clas"
    assert lexicon.count("stadt") >= 600 and lexicon.count("wohnung") >= 600  # German nouns its list leaves at 50
    assert lexicon.count("qr") == 0  # wordfreq's German list alone is no dictionary's word


def test_the_language_knows_words_of_everyday_life_the_dictionaries_lack_and_no_common_slips() -> None:
    from orgkit.index.lexicon import Lexicon

    lexicon = Lexicon()
    for word in ("app", "wifi", "selfie", "emoji", "hashtag", "Podcast", "sourdough", "fromage"):
        assert lexicon.is_real(word), word
    for slip in ("recieve", "seperate", "definately", "expresion", "funcion", "flashcrd"):
        assert not lexicon.is_real(slip), slip  # an accent dropped in Spanish web text is no word either
    assert lexicon.count("wifi") == 0 and lexicon.count("paxos") == 0  # known, yet no count of the dictionaries
