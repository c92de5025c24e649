"""`ascendctl schema`: the JSON Schema of the profile format, for editors and CI."""


def schema() -> None:
    """Print the JSON Schema of the profile (apiVersion ascendctl/v1) on stdout."""
    import typer

    from ascendctl.schema.shipped_schema import shipped_schema_text

    # The shipped file, not the models' output: the same text (tests/test_profile_doc.py), without building them.
    typer.echo(shipped_schema_text(), nl=False)
