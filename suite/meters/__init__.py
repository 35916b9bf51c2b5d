"""Meters: the instruments that read a device, a clock or the host (one module each); what their
readings become is worked out in :mod:`suite.figures`."""
