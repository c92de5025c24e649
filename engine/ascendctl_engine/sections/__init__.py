"""The profile's sections: one strict, frozen pydantic model per section (`deployment`, `serving`, `ascend`),
each field declared once with its default, bounds and description, on the value shapes of `fields` and the
secret sources of `secret_source`. `ascendctl.schema.profile.Profile` composes them into the document an
operator writes; the era adapters read them as they are (`ascendctl_engine.adapters.intent.EngineIntent`).

May import: `ascendctl_engine`'s leaf modules (`vocab`, `defaults`, `spec`, `argv_items`), never the adapters.
"""
