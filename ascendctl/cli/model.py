"""`ascendctl model prepare|list`: offline models materialised into ascendctl's model cache;
`ascendctl model config|pull`: models from Hugging Face / ModelScope into their caches (`ascendctl.run.hub`);
`ascendctl model identity`: the content hashes that say two nodes hold the same model."""

import json
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli import completers
from ascendctl.core.errors import OperationFailed, UserInputError

if TYPE_CHECKING:
    from ascendctl.run.hub import Fetched, HubClient, HubSource
    from ascendctl_engine.envs import EngineEnv

app = typer.Typer(
    name="model",
    help=(
        "Models: prepare offline ones (`model.source: prepared:NAME`), fetch a hub model's config or whole "
        "repository into the cache the plan and the engine read, print a model's identity hashes."
    ),
    no_args_is_help=True,
)


class ModelFailure(OperationFailed):
    def __init__(self, message: str, output: list[str], hint: str | None) -> None:
        super().__init__(message)
        self.output = output
        self.hint = hint

    def lines(self) -> list[str]:
        out = [str(self)] + [f"  | {line}" for line in self.output]
        return out + ([f"hint: {self.hint}"] if self.hint else [])


def pick_engine(name: str | None) -> "EngineEnv":
    """The engine interpreter that runs the preparation: `--engine NAME`, else the CPU engine of the
    latest-stable CPU row, else any ready CPU engine environment."""
    from ascendctl_engine import envs

    if name is not None:
        try:
            env = envs.load_engine(name)
        except envs.EngineEnvError as exc:  # a name no environment can have (`../x`, `-x`): the option's error
            raise UserInputError(f"--engine: {exc}") from None
        if env is None:
            raise UserInputError(
                f"--engine {name}: no ready engine environment of that name (see: ascendctl engine list)"
            )
        return env
    from ascendctl.run.engine_envs import engine_spec_for

    spec = engine_spec_for("cpu", "latest-stable")
    env = envs.find_engine(spec.backend, spec.release)
    if env is None:
        ready = [e for e in envs.list_engines() if e.status == "ready" and e.backend == "cpu"]
        env = envs.load_engine(ready[-1].name) if ready else None
    if env is None:
        raise OperationFailed(
            "preparing a model needs the CPU engine environment (its torch and transformers do the work); "
            "install it first: ascendctl engine install --backend cpu"
        )
    return env


@app.command("prepare")
def prepare(
    name: Annotated[
        str,
        typer.Argument(
            help="Model to prepare: smollm2-135m-instruct or tiny-random.",
            autocompletion=completers.preparable_models,
        ),
    ],
    engine: Annotated[
        str | None, typer.Option("--engine", help="Engine environment whose interpreter does the work.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when already prepared.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Materialise an offline model into the model cache (deterministic, with a recorded sha256).

    `--json` prints {"name", "path", "sha256", "size_bytes", "prepared_at", "source"}.
    """
    from ascendctl_engine import prepared_models

    if name not in prepared_models.CATALOG:
        known = ", ".join(sorted(prepared_models.CATALOG))
        raise UserInputError(f"unknown model {name!r} (known: {known})")
    env = pick_engine(engine)
    try:
        result = prepared_models.prepare_model(
            name, env.python, log=lambda line: typer.echo(line, err=True), force=force
        )
    except prepared_models.ModelError as exc:
        raise ModelFailure(str(exc), exc.output, exc.hint) from None
    if as_json:
        typer.echo(json.dumps({**result.as_dict(), "source": f"prepared:{name}"}, indent=2))
        return
    state = "already prepared" if result.already_prepared else f"prepared in {result.seconds:.0f} s"
    typer.echo(f"model {name}: {state}")
    typer.echo(f"  path:   {result.path}")
    typer.echo(f"  sha256: {result.sha256}")
    typer.echo(f"  use it: model.source: prepared:{name}")


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False) -> None:
    """List the models ascendctl can prepare and the ones prepared here.

    `--json` prints an array of {"name", "status" (ready/absent/incomplete), "path", "description",
    "sha256", "size_bytes", "source"}.
    """
    from ascendctl_engine import prepared_models

    listing = prepared_models.list_models()
    if as_json:
        typer.echo(json.dumps([m.as_dict() for m in listing], indent=2))
        return
    for m in listing:
        size = f"{m.size_bytes / 1e6:.0f} MB" if m.size_bytes else "-"
        typer.echo(f"{m.name:<24} {m.status:<10} {size:>8}  {m.description}")
        if m.status == "ready":
            typer.echo(f"{'':<24} {m.path}")


RevisionOption = Annotated[
    str | None, typer.Option("--revision", help="Branch, tag or commit to fetch (default: the hub's main).")
]
SourceArgument = Annotated[
    str,
    typer.Argument(
        help="hf:ORG/NAME, modelscope:ORG/NAME or ORG/NAME (Hugging Face), as a profile's model.source names it.",
        show_default=False,
    ),
]


def _hub_client(source: "HubSource") -> "HubClient":
    """The download library of `source`'s hub; exit 1 with the install hint when it is not installed."""
    from ascendctl.run.hub import HUB_NAMES, INSTALL_HINT

    library = "huggingface_hub" if source.hub == "hf" else "modelscope"
    try:
        if source.hub == "hf":
            from ascendctl.run.hub_hf import HfClient

            return HfClient()
        from ascendctl.run.hub_modelscope import ModelScopeClient

        return ModelScopeClient()
    except ImportError as exc:
        missing = exc.name or library
        raise OperationFailed(
            f"{HUB_NAMES[source.hub]} downloads need the {library} library ({missing} is not installed): {INSTALL_HINT}"
        ) from None


def _echo_fetched(fetched: "Fetched") -> None:
    typer.echo(f"{fetched.source.source}{f'@{fetched.revision}' if fetched.revision else ''}: {fetched.path}")
    shown = ", ".join(fetched.files) if len(fetched.files) <= 8 else f"{len(fetched.files)} files"
    typer.echo(f"  files: {shown}")
    if fetched.found_by_plan:
        typer.echo(f"  plan, fit and check read it as model.source: {fetched.source.source}")
    else:
        typer.echo(
            "  note: the plan's offline lookup does not find it there (ModelScope's cache keeps no revisions, or "
            "the cache variables changed); point model.source at the directory above"
        )


@app.command("config")
def config(
    source: SourceArgument,
    revision: RevisionOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fetch only config.json (with the safetensors index and the ModelSlim description, when the repository has
    them) into the Hugging Face or ModelScope cache, so `fit`, `plan` and `check` know the model's shapes.

    `--json` prints {"schema": 1, "source", "hub", "repo_id", "revision", "path", "files", "found_by_plan",
    "identity": {"config_sha256", "index_sha256", "path"}, "shapes": {"model_type", "architectures", "torch_dtype",
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "kv_lora_rank",
    "num_experts", "experts_per_token", "vocab_size", "max_model_len", "params", "weights_bytes"}}.
    """
    from ascendctl.run import hub

    parsed = hub.parse_hub_source(source)
    fetched = hub.fetch(parsed, _hub_client(parsed), revision=revision, patterns=hub.CONFIG_PATTERNS, progress=False)
    shapes = hub.key_shapes(fetched.path)
    if as_json:
        typer.echo(json.dumps({**fetched.as_dict(), "shapes": shapes}, indent=2))
        return
    _echo_fetched(fetched)
    for key, value in shapes.items():
        if value not in (None, []):
            shown = ", ".join(value) if isinstance(value, list) else value
            typer.echo(f"  {key + ':':<22}{shown:,}" if isinstance(shown, int) else f"  {key + ':':<22}{shown}")


@app.command("pull")
def pull(
    source: SourceArgument,
    revision: RevisionOption = None,
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include",
            metavar="GLOB",
            help="Only files matching this glob (repeatable); config.json and the weight index always come too.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Download a hub model into the Hugging Face or ModelScope cache the engine reads, with a progress bar
    (on stderr). An interrupted pull resumes where it stopped when run again (byte ranges, by the hub's library).

    `--json` prints {"schema": 1, "source", "hub", "repo_id", "revision", "path", "files", "found_by_plan",
    "identity": {"config_sha256", "index_sha256", "path"}}. Compare `identity` across nodes (or run
    `ascendctl model identity SOURCE --json` on each) to see that every node holds the same model.
    """
    from ascendctl.run import hub

    parsed = hub.parse_hub_source(source)
    patterns = [*include, *hub.CONFIG_PATTERNS] if include else None
    fetched = hub.fetch(parsed, _hub_client(parsed), revision=revision, patterns=patterns, progress=True)
    if as_json:
        typer.echo(json.dumps(fetched.as_dict(), indent=2))
        return
    _echo_fetched(fetched)
    if fetched.identity is not None:
        typer.echo(f"  config_sha256: {fetched.identity.config_sha256}")
        typer.echo(f"  index_sha256:  {fetched.identity.index_sha256 or 'none (no model.safetensors.index.json)'}")


@app.command("identity")
def identity(
    source: Annotated[
        str,
        typer.Argument(
            help="A model directory, prepared:NAME, or a hub id (hf:/modelscope:/ORG/NAME) in this machine's cache.",
            show_default=False,
        ),
    ],
    revision: RevisionOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Print the sha256 of the model's config.json and of its safetensors index (offline). Run it on every node of
    a multi-node deployment: equal hashes mean every node loads the same model. Exit 1 when it is not on disk.

    `--json` prints {"schema": 1, "source", "path", "config_sha256", "index_sha256" (null without an index)}.
    """
    from ascendctl.run import hub

    found = hub.identity_of(source, revision)
    if as_json:
        typer.echo(json.dumps({"schema": hub.HUB_JSON_SCHEMA, "source": source, **found.as_dict()}, indent=2))
        return
    typer.echo(f"path:          {found.path}")
    typer.echo(f"config_sha256: {found.config_sha256}")
    typer.echo(f"index_sha256:  {found.index_sha256 or 'none (no model.safetensors.index.json)'}")
