"""What a result costs: accelerator classes, the dated and sourced price table
(:mod:`suite.cost.prices`, its data in ``prices.toml``) and the accelerator-hours of a result
(:mod:`suite.cost.hours`). Torch-free."""
