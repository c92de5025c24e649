"""ascendctl: validate, plan, check and serve vLLM deployments on Huawei Ascend NPUs.

The packages are stages of one data flow, each importing only the stages below it (enforced by the
import-linter contracts in pyproject.toml, run by `make lint` and tests/test_layers.py):

    cli       the typer commands: parse options, call one function of a stage below, hand its result to the UI
    run       serving: start and supervise the plan with the bundled engine; deployment state (ps, logs, stop)
    outputs   what a plan, the matrix or the rules become for people and machines: render targets, plan text, docs
    check     host checks: the `host.*` rules over probed host facts, the matrix and a profile's plan
    plan      profile × matrix × host → Plan: the planner, the `plan.*` rules, the memory fit
    facts     what ascendctl knows: the support matrix and its upstream extracts, model configs and shapes
    schema    what users write: the profile schema, its load boundary and the `profile.*` rules
    core      shared by every stage: the exception family, the YAML reader, the finding type and rule registry

`ascendctl_engine` (the distribution in engine/) sits below all of them and never imports `ascendctl`.
"""

__version__ = "0.1.0"
