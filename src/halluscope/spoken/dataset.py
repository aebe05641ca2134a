"""samples.parquet: the built benchmark as a dataset file (one row per sample; loadable with ``datasets``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from halluscope.core.fs import atomic_path

if TYPE_CHECKING:
    from halluscope.spoken.build import BuildResult


def export_dataset(result: BuildResult) -> Path:
    """samples.parquet: one row per sample with text, audio and transcript; loadable with datasets."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for k in sorted(result.samples):
        v, a, t = result.samples[k], result.audio.get(k), result.transcripts.get(k)
        rows.append(
            {
                "id": v.id,
                "article_id": v.article_id,
                "language": v.language,
                "label": v.label,
                "type": v.type,
                "severity": v.severity,
                "generator": v.generator,
                "text": v.text,
                "changes": [c.model_dump_json() for c in v.changes],
                "audio_path": a.path if a else None,
                "audio_sha256": a.sha256 if a else None,
                "audio_duration_s": a.duration_s if a else None,
                "voice": a.voice if a else None,
                "tts": a.engine if a else None,
                "transcript": t.text if t else None,
                "asr": t.asr if t else None,
                "wer": t.wer if t else None,
                "cer": t.cer if t else None,
            }
        )
    out = result.run_dir / "dataset" / "samples.parquet"
    with atomic_path(out) as tmp:
        pq.write_table(pa.Table.from_pylist(rows), tmp)
    return out
