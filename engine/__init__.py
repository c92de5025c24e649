"""ascendctl's bundled engine, imported as `ascendctl_engine` (the folder is `engine/`).

It drives vLLM (+ vllm-ascend on NPUs): engine environments, version-era adapters, launch and
supervision, host probes. It never imports `ascendctl`; its inputs are its own small typed specs.
"""

__all__: list[str] = []
