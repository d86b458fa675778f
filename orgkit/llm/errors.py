"""The two ways a model call ends badly, each reported to the user in one line."""

from __future__ import annotations

from ..errors import OrgkitError


class ModelUnavailable(OrgkitError):
    """No model is configured (or the configured one cannot be loaded) for a role."""


class ModelFailure(OrgkitError):
    """A model call failed: transport error, a length-cut reply, or invalid JSON twice."""
