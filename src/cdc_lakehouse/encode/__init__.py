"""Encoders that produce CDC messages in vendor formats (samples, tests, the change simulator)."""
