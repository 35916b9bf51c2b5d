"""``goodbench.lightning.Measure``: the PyTorch Lightning callback (``pip install 'goodbench[lightning]'``)."""
try:
    from suite.api.lightning import Measure
except ModuleNotFoundError as exc:  # the optional extra is not installed: say which
    from suite.record.dependencies import install_hint

    raise ModuleNotFoundError(f"goodbench.lightning needs PyTorch Lightning ({exc.name} is missing): "
                              f"{install_hint('lightning')}", name=exc.name) from None

__all__ = ["Measure"]
