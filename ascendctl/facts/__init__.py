"""What ascendctl knows, as data with sources: the support matrix (`matrix`: its schema, loader and pure
queries; `data/matrix.yaml`), the per-tag upstream extracts it is built from (`upstream`, `data/upstream/`),
what a model is (`model_inspect`: config.json and safetensors headers of a local or cached model) and the
published model shapes (`published_shapes`, `data/model_configs/`).

May import: `ascendctl.schema`, `ascendctl.core` and `ascendctl_engine`.
"""
