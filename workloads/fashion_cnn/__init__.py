"""fashion-cnn: a small residual CNN on Fashion-MNIST (spec; job; model; config; evaluator)."""
