"""Profile × matrix × host facts → one `Plan` (`types`): the planner (`planner.plan_profile`), the `plan.*`
rules over the resolved plan (`plan_rules`) and the memory fit (`fit`).

May import: `ascendctl.facts`, `ascendctl.schema`, `ascendctl.core` and `ascendctl_engine`.
"""
