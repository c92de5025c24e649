"""ascendctl: validate, plan, check and serve vLLM deployments on Huawei Ascend NPUs."""

__version__ = "0.1.0"
