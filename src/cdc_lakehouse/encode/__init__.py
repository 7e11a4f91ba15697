"""Encoders: build CDC messages of a format from a friendly description (sample data, tests,
the change simulator). Each module is the inverse of the decoder of the same name."""
