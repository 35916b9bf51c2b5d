"""``goodbench.hf.Measure``: the Hugging Face ``TrainerCallback`` (``pip install 'goodbench[hf]'``)."""
from suite.api.hf import Measure

__all__ = ["Measure"]
