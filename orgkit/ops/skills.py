"""skills_list, skills_show, skills_run, skills_prompt: the skills registry and its stages."""

from __future__ import annotations

from typing import Any, Callable

from . import declare
from .context import OpContext
from .spec import Op, Param

NAME = Param("name", "string", "The skill's name.", required=True, positional=True, metavar="NAME")
QUERY = Param("query", "string", "The request for the skill.", required=True, max_chars="query.max_chars")


def _request(ctx: OpContext, args: dict[str, Any]):
    """The skill's request, lending it this context's index, model and vectors for retrieval."""
    from ..retrieve.candidates import scan_ranked, search_ranker
    from ..skills import Request

    embedder = ctx.query_embedder()
    ctx.refresh(embed=embedder is not None)
    rankers: dict[str, Callable[..., Any]] = {"search": search_ranker(ctx.index, embedder, ctx.cache),
                                              "scan": scan_ranked}
    return Request(query=args["query"], notes=ctx.root, options=args.get("options") or {}, rankers=rankers)


def skills_list(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    return [s.describe() for s in ctx.skills().ordered()]


def skills_show(ctx: OpContext, args: dict[str, Any]) -> dict:
    return ctx.skills().get(args["name"]).describe()


def skills_run(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..skills.run import run_skill

    skill = ctx.skills().get(args["name"])
    return run_skill(skill, _request(ctx, args), args["stage"], args["reply"])


def skills_prompt(ctx: OpContext, args: dict[str, Any]) -> dict:
    from ..skills.run import run_skill

    skill = ctx.skills().get(args["name"])
    return run_skill(skill, _request(ctx, args), "neuro", None)


declare(Op("skills_list", "Every available skill, highest priority first.", skills_list,
           result="[{name, priority, description, stages, source}]", cli=("skills", "list"), role="reader"))
declare(Op("skills_show", "What a skill does and which stages it has.", skills_show, params=(NAME,),
           result="{name, priority, description, stages, source}", cli=("skills", "show"), role="reader"))
declare(Op("skills_run", "Run one stage of a skill: symbolic (data), neuro (the prompt), or a later stage "
           "that takes the model's reply.", skills_run,
           params=(NAME, QUERY,
                   Param("stage", "string", "symbolic, neuro, or a later stage of the skill.", default="symbolic"),
                   Param("reply", "object", "The model's reply (a JSON object) for a later stage."),
                   Param("options", "object", "Options for the skill (a JSON object), e.g. {\"limit\": 5}.")),
           result="{skill, stage, ...the stage's data}", cli=("skills", "run"), aliases=("skill",), role="reader"))
declare(Op("skills_prompt", "The prompt a skill would give a model for a query.", skills_prompt,
           params=(NAME, QUERY), result="{skill, stage, text, reply_format}", cli=("skills", "prompt"), role="reader"))
