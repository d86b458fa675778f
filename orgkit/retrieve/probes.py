"""The corpus's own scale for a cosine: how near its passages come to texts it is not about.

A top cosine of 0.45 means one thing over fifteen decision records and
another over five hundred notes on everything from running to finance: the
more a corpus covers, the nearer its best passage comes to any question.
So the relevance floor reads a query's top cosine against the top cosines of
PROBES, everyday questions no notes folder is written to answer, over the
same passages: their median and their spread (the median absolute
deviation, scaled as a standard deviation's) are the cosines this corpus
gives a question it does not hold (floor.Baseline). A few probes a corpus
does touch (a folder with notes on running answers one about a marathon)
move the median and the spread little. Measured once per index generation
and model, and kept for the process; the probes' vectors are kept per model
on disk (`Embedder.kept_queries`), so a cold process only multiplies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Hashable

from ..embed import Embedder
from .floor import Baseline

if TYPE_CHECKING:
    import numpy as np

    from ..index.memo import Kept

PROBES = (
    "what time does the supermarket close on sunday",
    "how do I remove a coffee stain from a white shirt",
    "best exercises for lower back pain",
    "how many calories are in a banana",
    "what should I pack for a week at the beach",
    "how do I reset my wifi router",
    "tips for a child who will not sleep through the night",
    "how long does it take to walk a marathon",
    "recipe for vegetable soup with lentils",
    "what is the weather like in lisbon in march",
    "how do I ask my landlord to fix the heating",
    "when should I replace my running shoes",
    "how to keep basil alive indoors",
    "cheap ideas for a birthday party at home",
    "how much does it cost to renew a passport",
    "why does my car make a squeaking noise when braking",
    "how to write a thank you card to a teacher",
    "what are the rules of volleyball",
    "how do I train my puppy to walk on a leash",
    "good board games for a family evening",
    "how do I unclog a bathroom sink",
    "what to wear to a summer wedding",
    "how to cook rice without it sticking",
    "is it safe to swim after eating",
    "how to save money on groceries each month",
    "what are the symptoms of a cold versus the flu",
    "how do I get rid of ants in the kitchen",
    "which houseplants are safe for cats",
    "how to iron a shirt quickly",
    "recommend a novel for a long train ride",
    "how do I choose a good watermelon",
    "what is the capital of australia",
    "how to stop my glasses from fogging up",
    "how long can cooked chicken stay in the fridge",
    "ideas for a weekend trip with kids",
    "how to fold a fitted sheet",
    "how to prepare for a job interview at a bakery",
    "what is a fair price for a used bicycle",
    "how to paint a bedroom wall without streaks",
    "how often should I wash my hair",
    "what flowers bloom in early spring",
    "how do I file my taxes as a freelancer",
    "how to make pancakes without eggs",
    "why do my feet hurt after standing all day",
    "how to learn to swim as an adult",
    "what is the best time to visit japan",
    "how do I clean the oven",
    "how do I make my apartment warmer in winter",
    "what songs are good for a road trip",
    "how to get a toddler to eat vegetables",
)
MAD_AS_SD = 1.4826  # the median absolute deviation of a normal sample times this is its standard deviation

def baseline(kept: "Kept", key: Hashable, embedder: Embedder,
             top_cosines: Callable[["np.ndarray"], "np.ndarray"]) -> Baseline:
    """The baseline of the corpus at `key` (its model and generation), measured the first time and
    kept in `kept` (the index's memo): `top_cosines` gives each probe vector's best cosine over the
    corpus's passages."""
    known = kept.get(key)
    if known is None:
        known = measured(top_cosines(embedder.kept_queries(PROBES)))
        kept.put(key, known)
    return known


def measured(tops: "np.ndarray") -> Baseline:
    """The median of the probes' top cosines and their spread (never zero: a corpus of one passage has one)."""
    import numpy as np

    median = float(np.median(tops))
    spread = float(np.median(np.abs(tops - median))) * MAD_AS_SD
    return Baseline(median, max(spread, 1e-3))
