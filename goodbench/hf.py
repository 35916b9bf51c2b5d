"""``goodbench.hf.Measure``: the Hugging Face ``TrainerCallback`` (``pip install 'goodbench[hf]'``)."""
try:
    from suite.api.hf import Measure
except ModuleNotFoundError as exc:  # the optional extra is not installed: say which
    from suite.record.dependencies import install_hint

    raise ModuleNotFoundError(f"goodbench.hf needs Hugging Face transformers ({exc.name} is missing): "
                              f"{install_hint('hf')}", name=exc.name) from None

__all__ = ["Measure"]
