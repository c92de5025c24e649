"""What users write: the profile document (`profile.Profile`, composed of the sections declared once in
`ascendctl_engine.sections`, which the era adapters read as they are), secret handling (`secrets`), the
profile loader (`loader`: YAML → `Profile` with `file:line:col` errors) and the `profile.*` cross-field rules
(`profile_rules`).

May import: `ascendctl.core` and `ascendctl_engine`.
"""
