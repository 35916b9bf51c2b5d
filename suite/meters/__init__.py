"""Meters: each turns raw readings of one kind into the figures a results file reports."""
