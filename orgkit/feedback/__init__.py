"""The feedback loop: human corrections of generated notes become guidance for the extractors.

`generated` records what orgkit wrote, `observe` compares it with the notes as they
are now and appends correction events (`events`), `evolve` distils clusters of
events into bullets, and `guidance` keeps them in an org file people read and edit,
sliced into an extractor's prompt when the user asks for it.
"""
