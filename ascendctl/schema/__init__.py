"""What users write: the profile schema (one strict pydantic model per section, each field declared once with
its default and description), the boundary validators it uses (`fields`), secret sources (`secrets`), the
profile loader (`loader`: YAML → `Profile` with `file:line:col` errors) and the `profile.*` cross-field rules
(`profile_rules`).

May import: `ascendctl.core` and `ascendctl_engine`.
"""
