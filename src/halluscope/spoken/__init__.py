"""The spoken benchmark of seed 000: corpus -> rewrites -> speech -> judges -> detectors -> real-world split."""
