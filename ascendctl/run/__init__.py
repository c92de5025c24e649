"""Running a plan: `serve` (plan against this host, pick the engine environment, hand the commands to the
bundled launcher and supervisor), `deployments` (the state records behind `ps`, `logs`, `stop`) and
`engine_envs` (which engine environment a release row needs).

May import: `ascendctl.outputs`, `ascendctl.check`, `ascendctl.plan`, `ascendctl.facts`, `ascendctl.schema`,
`ascendctl.core` and `ascendctl_engine`.
"""
