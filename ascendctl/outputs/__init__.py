"""What plans, the matrix and the rules become for people and machines: the render targets (`render`:
Kubernetes, compose, docker, systemd, scripts), the plan's text view (`plan_text`), the generated docs
(`matrix_docs`, `intent_doc`, `rules_doc`) and the one shell-quoting module (`quoting`).

May import: `ascendctl.check`, `ascendctl.plan`, `ascendctl.facts`, `ascendctl.schema`, `ascendctl.core` and
`ascendctl_engine`.
"""
