"""Closed-form audio hallucination benchmarks: HalluAudio, AHa-Bench and yes/no object hallucination."""
