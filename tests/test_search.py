"""search and context through the CLI; read and backlinks through the index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import real_model, write_notes
from test_index import NOTES


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def search(cli, notes: Path, *args: str) -> list[dict]:
    result = cli("search", "--notes", str(notes), "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_each_mode_finds_the_note(cli, notes: Path, tiny_model: Path, mode: str) -> None:
    hits = search(cli, notes, "--mode", mode, "compost", "soil")
    assert hits[0]["id"] == "tomatoes"
    assert set(hits[0]) == {"id", "title", "file", "line", "level", "score", "snippet", "mode", "relevance", "relevant"}
    assert hits[0]["mode"] == mode
    # the file node, and the line of the passage that matched (opening the hit lands on it)
    assert hits[0]["file"] == "garden/tomatoes.org" and hits[0]["line"] == 6 and hits[0]["level"] == 0
    assert "compost" in hits[0]["snippet"]


def test_heading_nodes_are_hits_of_their_own(cli, notes: Path, tiny_model: Path) -> None:
    hits = search(cli, notes, "--mode", "lexical", "kitten young")
    assert (hits[0]["id"], hits[0]["title"], hits[0]["level"], hits[0]["line"]) == ("kittens", "Kittens", 1, 8)


def test_limit_and_a_new_note_is_found_without_reindexing(cli, notes: Path, tiny_model: Path) -> None:
    assert len(search(cli, notes, "--limit", "1", "pets")) == 1
    write_notes(notes, {"fish.org": ":PROPERTIES:\n:ID: fish\n:END:\n#+title: Fish\n\nGoldfish swim.\n"})
    assert search(cli, notes, "--mode", "lexical", "goldfish")[0]["id"] == "fish"
    (notes / "fish.org").unlink()
    assert search(cli, notes, "--mode", "lexical", "--no-update", "goldfish")[0]["id"] == "fish"
    assert search(cli, notes, "--mode", "lexical", "goldfish") == []


def test_bad_queries_are_user_errors(cli, notes: Path, tiny_model: Path) -> None:
    result = cli("search", "--notes", str(notes), "--mode", "sideways", "x")
    assert result.exit_code == 2
    result = cli("search", "--notes", str(notes), "   ")
    assert result.exit_code == 1 and "empty query" in result.stderr


def test_context_fits_the_budget_and_says_what_it_left_out(cli, notes: Path, tiny_model: Path) -> None:
    result = cli("context", "--notes", str(notes), "--json", "--budget", "60", "cats", "pets")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["tokens"] <= 60 and doc["tokens"] == sum(d["tokens"] for d in doc["included"])
    assert doc["included"][0]["id"] in {"cats", "dogs"}
    assert "#+title:" in doc["included"][0]["content"]
    assert doc["omitted"] and all("reason" in o for o in doc["omitted"])

    roomy = json.loads(cli("context", "--notes", str(notes), "--json", "--budget", "5000", "cats").stdout)
    included = [d["id"] for d in roomy["included"]]
    assert included[0] == "cats" and "kittens" not in included  # its text is part of cats.org
    assert any(o["id"] == "kittens" and o["reason"].startswith("inside cats") for o in roomy["omitted"])
    assert any(d.get("via") == "cats" for d in roomy["included"]) or "dogs" in included


def test_read_and_backlinks_agree_with_and_without_the_index(cli, notes: Path, tiny_model: Path) -> None:
    before_read = cli("read", "--notes", str(notes), "--json", "--depth", "1", "cats").stdout
    before_back = cli("backlinks", "--notes", str(notes), "--json", "dogs").stdout
    assert cli("index", "--notes", str(notes), "--no-embed").exit_code == 0
    assert cli("read", "--notes", str(notes), "--json", "--depth", "1", "cats").stdout == before_read
    assert cli("backlinks", "--notes", str(notes), "--json", "dogs").stdout == before_back
    assert json.loads(before_back)[0]["source"] == "cats"
    unknown = cli("backlinks", "--notes", str(notes), "--json", "nope")
    assert unknown.exit_code == 1 and "unknown ID" in unknown.stderr


def test_read_finds_a_node_moved_since_indexing(cli, notes: Path, tiny_model: Path) -> None:
    assert cli("index", "--notes", str(notes), "--no-embed").exit_code == 0
    (notes / "dogs.org").rename(notes / "hounds.org")
    doc = json.loads(cli("read", "--notes", str(notes), "--json", "dogs").stdout)
    assert doc[0]["file"] == "hounds.org"


def test_dense_search_with_the_real_model(cli, notes: Path, monkeypatch) -> None:
    name, model = real_model()
    monkeypatch.setenv("ORGKIT_MODEL", name)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(model))
    hits = search(cli, notes, "--mode", "dense", "growing vegetables")
    assert hits[0]["id"] == "tomatoes"
    assert search(cli, notes, "--mode", "dense", "a faithful animal companion")[0]["id"] == "dogs"


def test_a_heading_match_outranks_the_same_word_in_a_body(cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "ranked", {
        "body.org": ":PROPERTIES:\n:ID: body\n:END:\n#+title: Gardening\n\n"
                    "A long note about beds, paths, sheds and the weather; it mentions mulch once.\n",
        "head.org": ":PROPERTIES:\n:ID: head\n:END:\n#+title: Mulch\n\n"
                    "A long note about beds, paths, sheds and the weather; it is about this.\n",
    })
    hits = search(cli, notes, "--mode", "lexical", "mulch")
    assert [h["id"] for h in hits] == ["head", "body"]
    assert hits[0]["score"] > hits[1]["score"]


def test_lexical_hits_are_in_the_order_of_their_scores(cli, notes: Path) -> None:
    hits = search(cli, notes, "--mode", "lexical", "cats", "dogs", "pets", "kitten")
    scores = [h["score"] for h in hits]
    assert len(hits) > 2 and scores == sorted(scores, reverse=True)


def test_context_never_includes_a_text_twice(cli, notes: Path, tiny_model: Path) -> None:
    doc = json.loads(cli("context", "--notes", str(notes), "--json", "--budget", "4000",
                         "kitten", "cats", "feline").stdout)
    texts = [d["content"] for d in doc["included"]]
    assert not any(a != b and a in b for a in texts for b in texts)
    assert len({d["id"] for d in doc["included"]}) == len(texts)
    assert {"cats"} <= {d["id"] for d in doc["included"]}


def test_a_note_named_by_the_query_comes_first_in_hybrid(cli, tmp_path: Path, tiny_model: Path) -> None:
    # Dense prefers "soil" (its passage is nothing but the word); the note titled
    # exactly as the query is among BM25's top hits and is what the query asks for.
    notes = write_notes(tmp_path / "titled", {
        "compost.org": ":PROPERTIES:\n:ID: compost\n:END:\n#+title: Compost\n\n"
                       "Garden work through the year: water the plants, sow the seeds, "
                       "and you will have tomatoes, a cat on the wall and a dog in the way.\n",
        "soil.org": ":PROPERTIES:\n:ID: soil\n:END:\n#+title: Soil\n\ncompost compost compost compost\n",
        "seeds.org": ":PROPERTIES:\n:ID: seeds\n:END:\n#+title: Seeds\n\nSeeds need compost and water.\n",
    })
    assert search(cli, notes, "--mode", "dense", "compost")[0]["id"] == "soil"
    hits = search(cli, notes, "--mode", "hybrid", "Compost")
    assert hits[0]["id"] == "compost" and hits[0]["mode"] == "hybrid"
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1]
    # A title that only contains the query's words is not a name for it.
    assert search(cli, notes, "--mode", "hybrid", "compost", "seeds")[0]["id"] != "compost"


def test_a_note_only_meaning_finds_stays_at_the_top_of_hybrid(cli, tmp_path: Path, monkeypatch) -> None:
    """A note with none of the query's words, dense's best by far, is not pushed down by BM25's list."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    from tiny_model import MODEL_NAME, build_tiny_model

    model = build_tiny_model(tmp_path / "model", ["pup"])
    vocab = json.loads((model / "tokenizer.json").read_text())["model"]["vocab"]
    matrix = load_file(str(model / "model.safetensors"))["embeddings"]
    matrix[vocab["pup"]] = matrix[vocab["kitten"]]  # a synonym: the same meaning, another word
    save_file({"embeddings": np.ascontiguousarray(matrix)}, str(model / "model.safetensors"))
    monkeypatch.setenv("ORGKIT_MODEL", MODEL_NAME)
    monkeypatch.setenv("ORGKIT_MODEL_PATH", str(model))
    monkeypatch.delenv("ORGKIT_STATE_DIR", raising=False)
    files = {"pup.org": ":PROPERTIES:\n:ID: pup\n:END:\n#+title: Pup\n\npup pup pup\n"}
    for i, words in enumerate(["a kitten is a young cat", "the kitten and the dog play in the garden",
                               "my kitten likes water", "kitten kitten: notes on a new pet",
                               "one kitten, two cats and a dog", "a kitten in the garden soil"]):
        files[f"k{i}.org"] = f":PROPERTIES:\n:ID: k{i}\n:END:\n#+title: Note {i}\n\n{words.capitalize()}.\n"
    notes = write_notes(tmp_path / "synonyms", files)
    assert "pup" not in [h["id"] for h in search(cli, notes, "--mode", "lexical", "kitten")]
    assert search(cli, notes, "--mode", "dense", "kitten")[0]["id"] == "pup"
    assert "pup" in [h["id"] for h in search(cli, notes, "--mode", "hybrid", "--limit", "3", "kitten")]


def test_a_question_is_fused_for_the_note_both_rankings_hold_near_their_tops() -> None:
    """A note second in both rankings comes before the surer ranking's first at a question's k, not at
    the k of a query of words, where the top of a trusted ranking counts most."""
    from orgkit.retrieve import fusion
    from orgkit.retrieve.search import QUESTION_RRF_K, RRF_K, fuse

    lexical = [(1, 10, 9.0), (3, 30, 8.0), (4, 40, 7.0)]
    dense = [(2, 21, 0.7), (3, 31, 0.6), (5, 51, 0.5)]
    trust = fusion.Trust(lexical=0.3, dense=0.8)
    assert fuse(lexical, dense, trust=trust, k=RRF_K)[0][0] == 2
    assert fuse(lexical, dense, trust=trust, k=QUESTION_RRF_K)[0][0] == 3


def test_fusion_puts_the_title_match_first_however_far_behind_it_is() -> None:
    """Even from the bottom of both lists, against one outlier at the top of each, scores stay sorted."""
    from orgkit.retrieve.search import fuse

    lexical = [(1, 10, 100.0)] + [(n, n * 10, 1.0) for n in range(2, 50)] + [(99, 990, 0.5)]
    dense = [(1, 11, 0.99)] + [(n, n * 10 + 1, 0.1) for n in range(2, 50)] + [(99, 991, 0.0)]
    fused = fuse(lexical, dense, title_match=99)
    assert [n for n, _, _ in fused[:2]] == [99, 1]
    assert [s for _, _, s in fused] == sorted((s for _, _, s in fused), reverse=True)
    assert fused[0][1] == 990  # the passage of the ranking that ranked it higher (tie: lexical's)
    assert [n for n, _, _ in fuse(lexical, dense)][:2] == [1, 2]


def test_each_of_bm25s_notes_weighs_by_the_share_of_the_query_its_passage_holds() -> None:
    """BM25's top note weighs as its evidence says; one further down holding little of the query
    weighs little, and falls behind the notes dense found instead of passing them for its rank."""
    from orgkit.retrieve import fusion
    from orgkit.retrieve.search import fuse

    weights = fusion.note_weights([0.9, 0.1, 0.1], 0.5, False)
    trust = fusion.trust(0.9, 0.5, False)
    assert weights[0] == trust.lexical and weights[1] == weights[2] < weights[0]
    assert fusion.note_weights([], 0.5, True) == []
    lexical = [(1, 10, 9.0), (2, 20, 8.0), (3, 30, 7.0)]
    dense = [(n, n * 10 + 1, 0.5) for n in range(4, 12)]
    at_the_tops_weight = [n for n, _, _ in fuse(lexical, dense, trust=trust)]
    at_their_own = [n for n, _, _ in fuse(lexical, dense, trust=trust, lexical_weights=weights)]
    assert at_the_tops_weight[:3] == [1, 2, 3]
    assert at_their_own[0] == 1 and at_their_own.index(2) > at_their_own.index(4)


def _named(tmp_path: Path, files: dict[str, str], queries: list[str]) -> dict[str, str | None]:
    """The note each query names by the title rule (None: none), over an index of `files`."""
    from orgkit.index import Index, refresh
    from orgkit.retrieve.search import lexical_ranking, lexical_terms, title_match

    index = Index.at(write_notes(tmp_path / "titles", files), tmp_path / "state")
    try:
        refresh(index)
        named = {}
        with index.snapshot() as conn:
            for query in queries:
                terms = lexical_terms(conn, query, index.backend, index.memo)
                node = title_match(index, lexical_ranking(conn, query, 10, terms, index.backend), query, terms)
                named[query] = index.nodes_by_rowid([node])[node]["id"] if node is not None else None
        return named
    finally:
        index.close()


def test_a_title_word_in_another_form_still_names_the_note(tmp_path: Path) -> None:
    """The stemmer keeps "argu" from "argue" and "argument" from "arguments": one starting the other
    is the same word for the title rule, a shorter start ("bay" of "bayesian") is not."""
    named = _named(tmp_path, {
        "against.org": ":PROPERTIES:\n:ID: against\n:END:\n#+title: Arguments Against Bayesian Inference\n\n"
                       "Priors are subjective, and the posterior inherits that.\n",
        "bayes.org": ":PROPERTIES:\n:ID: bayes\n:END:\n#+title: Bayesian Inference\n\n"
                     "Arguing from the posterior: inference against the prior, argued twice.\n",
    }, ["argue against bayesian inferences", "bayes inference", "argue bayesian inference"])
    assert named == {"argue against bayesian inferences": "against", "bayes inference": None,
                     "argue bayesian inference": None}


def test_of_two_titles_alike_as_stems_the_one_as_typed_is_named(tmp_path: Path) -> None:
    """"C++ Language" and "The C Language" are both {c, languag}; "c language" names the second."""
    c = "Pointers, arrays and the C language standard library; the C language in practice.\n"
    named = _named(tmp_path, {
        "cpp.org": ":PROPERTIES:\n:ID: cpp\n:END:\n#+title: C++ Language\n\n" + c + c,
        "c.org": ":PROPERTIES:\n:ID: c\n:END:\n#+title: The C Language\n\n" + c,
    }, ["c language", "c langauge", "c++ language"])
    assert named == {"c language": "c", "c langauge": "c", "c++ language": "cpp"}


def test_a_note_holding_every_rare_word_of_the_query_comes_first_in_hybrid(cli, tmp_path: Path,
                                                                          tiny_model: Path) -> None:
    """Three names only one note holds: BM25's pool has one member, and the dense ranking (words the
    model does not know, so nearest are the notes made of unknown words) does not bury it."""
    files = {"models.org": ":PROPERTIES:\n:ID: models\n:END:\n#+title: Neuron models\n\n"
                           "Hodgkin-Huxley, FitzHugh-Nagumo and Morris-Lecar describe how a neuron fires; "
                           "the cat and the dog have neurons too, and so do the people in the garden.\n"}
    for i in range(6):
        files[f"noise{i}.org"] = (f":PROPERTIES:\n:ID: noise{i}\n:END:\n#+title: Zorblax {i}\n\n"
                                  f"Quintrel-vasheen olumbar-treskel anduvar-plimsoth-{i}.\n")
    notes = write_notes(tmp_path / "rare", files)
    assert [h["id"] for h in search(cli, notes, "--mode", "lexical", "hodgkin-huxley fitzhugh-nagumo morris-lecar")] \
        == ["models"]
    assert search(cli, notes, "--mode", "dense", "hodgkin-huxley fitzhugh-nagumo morris-lecar")[0]["id"] != "models"
    hits = search(cli, notes, "hodgkin-huxley fitzhugh-nagumo morris-lecar")
    assert hits[0]["id"] == "models" and hits[0]["relevant"]


def test_a_query_with_two_typos_finds_its_note_and_says_how_it_was_read(cli, tmp_path: Path,
                                                                        tiny_model: Path) -> None:
    notes = write_notes(tmp_path / "typos", {
        "leaf.org": ":PROPERTIES:\n:ID: leaf\n:END:\n#+title: Leaves\n\n"
                    "Photosynthesis needs chlorophyll, water and light.\n",
        "soil.org": ":PROPERTIES:\n:ID: soil\n:END:\n#+title: Soil\n\nCompost feeds the soil of the garden.\n",
    })
    result = cli("search", "--notes", str(notes), "--json", "photosyntesis", "chlorofyll")
    hits = json.loads(result.stdout)
    assert hits[0]["id"] == "leaf" and hits[0]["relevant"]
    assert hits[0]["corrected"] == "photosynthesis chlorophyll"
    assert "showing results for 'photosynthesis chlorophyll'" in result.stderr
    assert "corrected" not in search(cli, notes, "photosynthesis")[0]  # nothing to correct: nothing said


def test_remembered_stems_are_the_tokenizers_and_stay_bounded() -> None:
    """A warm server remembers each text's stems rather than tokenizing it again for every call;
    what it remembers is what the tokenizer gives, and no more than its limit of texts are kept."""
    from orgkit.index import vocab
    from orgkit.index.memo import Kept
    from orgkit.storage.terms import tokenizer

    kept: Kept[str, frozenset[str]] = Kept(2)
    texts = {1: "Spaced repetition schedules", 2: "Running runners ran", 3: "Bayesian inference"}
    fresh = {key: frozenset(stems) for key, stems in tokenizer().stems(texts).items()}
    assert vocab.stems_of(texts, kept) == fresh
    assert vocab.stems_of({7: texts[2], 8: texts[3]}, kept) == {7: fresh[2], 8: fresh[3]}  # remembered, keyed anew
    assert len(kept) == 2 and kept.get(texts[3]) == fresh[3] and kept.get(texts[1]) is None
