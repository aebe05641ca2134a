"""Write the Granite Speech front-end reference: transformers' own GraniteSpeechFeatureExtractor (torchaudio's
MelSpectrogram inside) on two real speech clips, as tests/backends/audio_lm/data/granite_torchaudio_reference.npz.

torchaudio is not a halluscope dependency (no wheel of it loads against the project's torch), so this runs once,
in a separate venv, and its output is committed; tests/backends/audio_lm/test_granite.py checks halluscope's
torch-only front end against it.

    python3 -m venv /tmp/ta && /tmp/ta/bin/pip install torch==2.9.1 'torchaudio==2.9.*' transformers==5.24.0 soundfile
    /tmp/ta/bin/python scripts/granite_reference.py ../shared/realdata/speech_en

Clips (16 kHz mono PCM, stored in the file as int16): a 1.5 s cut of LibriVox 'Sense and Sensibility' ch. 1
(pocketsphinx's test data, public domain) and the whole pisets test sound (Apache-2.0); each alone and the two as
one batch, which the extractor zero-pads to the longer.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio
import transformers
from transformers import GraniteSpeechFeatureExtractor

OUT = Path(__file__).resolve().parents[1] / "tests/backends/audio_lm/data/granite_torchaudio_reference.npz"


def main(root: str) -> None:
    base = Path(root)
    libri, sr1 = sf.read(base / "librivox_pocketsphinx/sense_and_sensibility_01_austen_64kb-0880.wav", dtype="int16")
    pisets, sr2 = sf.read(base / "pisets_test_sound_en.wav", dtype="int16")
    assert sr1 == sr2 == 16000 and libri.ndim == pisets.ndim == 1
    clips = {"libri": libri[8000:32000], "pisets": pisets}  # 151 and 141 STFT frames: both odd (the last dropped)
    fe = GraniteSpeechFeatureExtractor()
    out: dict[str, np.ndarray] = {k: v for k, v in clips.items()}
    for name, batch in (("libri", ["libri"]), ("pisets", ["pisets"]), ("both", ["libri", "pisets"])):
        got = fe([clips[c].astype(np.float32) / 32768.0 for c in batch])
        out[f"{name}_features"] = got["input_features"].numpy()
        out[f"{name}_mask"] = got["input_features_mask"].numpy()
        out[f"{name}_sizes"] = np.asarray(got["audio_embed_sizes"])
    out["versions"] = np.asarray(
        [
            f"torch {torch.__version__}",
            f"torchaudio {torchaudio.__version__}",
            f"transformers {transformers.__version__}",
        ]
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **out)
    print(OUT, {k: v.shape for k, v in out.items()})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/realdata/speech_en")
