"""ascendctl.cli.pydantic_plugins: the CLI process builds pydantic validators without plugin discovery.

The replacement stands in for a private pydantic module, so the tests read pydantic's own source for what it asks
of that module, and check both outcomes of `disable` in fresh interpreters (the test session itself has pydantic's
loader imported already, which is the case where `disable` must leave it alone).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pydantic.plugin._loader as pydantic_loader

from ascendctl.cli import pydantic_plugins


def _imports_from_loader(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "_loader":
            names.update(alias.name for alias in node.names)
    return names


def test_the_stand_in_provides_every_name_pydantic_imports_from_its_loader() -> None:
    spec = importlib.util.find_spec("pydantic.plugin._schema_validator")
    assert spec is not None and spec.origin is not None
    asked = _imports_from_loader(Path(spec.origin).read_text(encoding="utf-8"))
    assert asked == set(pydantic_plugins.ASKED_FOR), "pydantic asks its plugin loader for other names now"
    assert pydantic_loader.__name__ == pydantic_plugins.LOADER
    assert callable(pydantic_loader.get_plugins)  # the function the stand-in answers for


def test_the_source_reader_finds_relative_imports_of_the_loader_only() -> None:
    source = "from ._loader import a, b\nfrom .other import c\nfrom pydantic.plugin._loader import d\n"
    assert _imports_from_loader(source) == {"a", "b"}


def _fresh(code: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True, timeout=60
    )
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def test_a_fresh_process_validates_with_no_plugins_and_no_distribution_scan() -> None:
    result = _fresh(
        """
        import importlib.util, json, sys
        from ascendctl.cli import pydantic_plugins
        done = pydantic_plugins.disable()
        from pydantic import BaseModel, ValidationError
        from pydantic_core import SchemaValidator

        class Probe(BaseModel):
            n: int

        try:
            Probe(n="x")
            refused = False
        except ValidationError:
            refused = True
        print(json.dumps({
            "done": done,
            "plain_validator": type(Probe.__pydantic_validator__) is SchemaValidator,
            "valid": Probe(n=3).n == 3,
            "refused": refused,
            "scanned": "importlib.metadata" in sys.modules,
            "spec_origin": importlib.util.find_spec(pydantic_plugins.LOADER).origin,
        }))
        """
    )
    assert result == {
        "done": True,
        "plain_validator": True,
        "valid": True,
        "refused": True,
        "scanned": False,
        "spec_origin": "ascendctl.cli.pydantic_plugins",
    }


def test_pydantic_loader_already_imported_is_left_as_it_is() -> None:
    result = _fresh(
        """
        import json, sys
        import pydantic.plugin._loader as real
        from ascendctl.cli import pydantic_plugins
        done = pydantic_plugins.disable()
        print(json.dumps({"done": done, "kept": sys.modules[pydantic_plugins.LOADER] is real}))
        """
    )
    assert result == {"done": False, "kept": True}
