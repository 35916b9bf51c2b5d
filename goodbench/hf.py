"""``goodbench.hf.Measure``: the Hugging Face ``TrainerCallback`` (``pip install 'goodbench[hf]'``)."""
try:
    from suite.api.hf import Measure
except ModuleNotFoundError as exc:  # the optional extra is not installed: say which
    raise ModuleNotFoundError(f"goodbench.hf needs Hugging Face transformers ({exc.name} is missing): "
                              "pip install 'goodbench[hf]'", name=exc.name) from exc

__all__ = ["Measure"]
