# The two commands of the README: `make serve` (the embedded default) and `make test` (everything CI runs).
# Works on a fresh machine with only Python 3.11, pip and make: the project venv is created on demand.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test serve lint typecheck unit venv clean

venv: $(STAMP)

# Re-install when the project metadata changes; editable install so tests run the working tree.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy cannot follow the editable-install hook that maps engine/ to `ascendctl_engine`; a symlink can.
typecheck: venv
	mkdir -p .mypy_path && ln -sfn ../engine .mypy_path/ascendctl_engine
	$(BIN)/mypy

unit: venv
	$(BIN)/python -m pytest -q

test: lint typecheck unit

serve: venv
	@echo "make serve: the embedded default needs the bundled CPU engine (engine environment, model prepare," >&2
	@echo "and 'ascendctl serve'), which is not built yet. Missing: ascendctl engine install --backend cpu;" >&2
	@echo "ascendctl model prepare smollm2-135m-instruct; ascendctl serve profiles/cpu-demo.yaml." >&2
	@exit 1

clean:
	rm -rf $(VENV) .mypy_path .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info
