"""Qwen3-Omni thinker (transformers 'qwen3_omni_moe'): AuT audio encoder + MoE text decoder, text output only.

The prompt is assembled as for Qwen2.5-Omni (tokenizer + feature extractor, the processor's own audio-token
formula), so no image or video processor is needed; the full checkpoint's talker is dropped on load.
Window: 30 s by default, the Whisper feature extractor's chunk; the encoder is block-wise (n_window), so a larger
``audio_window_s`` sends the whole clip up to that length (what is heard is read from the feature mask).
"""

from __future__ import annotations

from typing import Any

from halluscope.backends.audio_lm._adapters import Qwen25OmniThinkerAdapter, register_adapter


@register_adapter("qwen3_omni_moe_thinker", "qwen3_omni_moe")
class Qwen3OmniThinkerAdapter(Qwen25OmniThinkerAdapter):
    name = "qwen3-omni-thinker"
    default_window_s = 30.0
    languages = "19 languages of speech (MISHAP-Bench, App. B.1)"
    full_type, full_class, thinker_class = (
        "qwen3_omni_moe",
        "Qwen3OmniMoeForConditionalGeneration",
        "Qwen3OmniMoeThinkerForConditionalGeneration",
    )

    def audio_tokens_of(self, feature_lengths: Any) -> list[int]:
        from transformers.models.qwen3_omni_moe.processing_qwen3_omni_moe import _get_feat_extract_output_lengths

        n_window = int(getattr(self.model.config.audio_config, "n_window", 50))
        return [int(n) for n in _get_feat_extract_output_lengths(feature_lengths, n_window).tolist()]
