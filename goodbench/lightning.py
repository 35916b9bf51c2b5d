"""``goodbench.lightning.Measure``: the PyTorch Lightning callback (``pip install 'goodbench[lightning]'``)."""
from suite.api.lightning import Measure

__all__ = ["Measure"]
