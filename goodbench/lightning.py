"""``goodbench.lightning.Measure``: the PyTorch Lightning callback (``pip install 'goodbench[lightning]'``)."""
try:
    from suite.api.lightning import Measure
except ModuleNotFoundError as exc:  # the optional extra is not installed: say which
    raise ModuleNotFoundError(f"goodbench.lightning needs PyTorch Lightning ({exc.name} is missing): "
                              "pip install 'goodbench[lightning]'", name=exc.name) from exc

__all__ = ["Measure"]
