"""Running a skill's stages, the same way for the CLI, the server and agents."""

from __future__ import annotations

from ..errors import OrgkitError
from .model import Request, Skill
from .reply import BadReply, check_reply


def run_skill(skill: Skill, request: Request, stage: str, reply: dict | None) -> dict:
    """Run `stage` of `skill`: symbolic data, the neuro prompt, or a later stage."""
    if stage == "symbolic":
        return {"skill": skill.name, "stage": stage, **skill.symbolic(request)}
    if stage == "neuro":
        prompt = skill.neuro(request, skill.symbolic(request))
        return {"skill": skill.name, "stage": stage, **prompt.to_json()}
    if stage not in skill.stages:
        names = ", ".join(["symbolic", "neuro", *skill.stages])
        raise OrgkitError(f"skill {skill.name!r} has no stage {stage!r} (stages: {names})")
    if reply is None:
        raise OrgkitError(f"stage {stage!r} of {skill.name!r} needs the model's reply (--reply JSON)")
    if not isinstance(reply, dict):
        raise BadReply("the reply must be a JSON object")
    if skill.reply_format is not None:
        check_reply(reply, skill.reply_format)
    return {"skill": skill.name, "stage": stage, **skill.stages[stage](request, reply)}
