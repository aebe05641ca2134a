"""The subject a presence question asks about, for the yes/no reader: "Is there a dog barking in the audio? Answer
yes or no." -> "dog barking" (the question ends at its question mark: a trailing instruction is no part of it)."""

from __future__ import annotations

import re

_ART = r"(?:(?:a|an|the|any|some)\s+)?"
_SOUND = rf"(?:(?:sounds?|noise|noises)\s+of\s+{_ART})?"
_WHERE = r"(?:\s+(?:in|within|on|from)\s+(?:the|this)\s+(?:audio|clip|recording|sound|track|video)(?:\s+clip)?)?"
_CLIP = r"(?:the|this)\s+(?:audio|clip|recording|sound|track|music|song|speech|speaker|voice)(?:\s+clip)?"
_ASKED = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"^(?:is|are)\s+there\s+{_ART}{_SOUND}(?P<s>.+?){_WHERE}$",
        rf"^(?:does|do|did)\s+{_CLIP}\s+(?:contain|include|have|feature)s?\s+{_ART}{_SOUND}(?P<s>.+?)$",
        rf"^(?:can|could|do|did)\s+you\s+(?:hear|detect|notice|identify|recognize|recognise)\s+{_ART}{_SOUND}(?P<s>.+?){_WHERE}$",
        rf"^have\s+you\s+(?:noticed|heard|detected)\s+{_ART}{_SOUND}(?P<s>.+?){_WHERE}$",
        rf"^(?:is|are)\s+{_ART}(?P<s>.+?)\s+(?:present|audible|heard|visible|making\s+(?:a\s+)?sounds?)(?:{_WHERE})?$",
        # "Is a siren audible?", AVHBench's "Is the sleeping man visible in the video?" / "... making sound in the
        # audio?"; before the next, so that "Is the music visible in the video?" asks about the music
        rf"^(?:is|are|was)\s+(?:{_CLIP}|this|it)\s+(?:an?\s+)?(?:example\s+of\s+)?(?P<s>.+?)$",  # "Is the audio jazz music?"
    )
]


def asked_subject(question: str | None) -> str | None:
    """The object or event a presence question asks about ("Is there a dog barking?" -> "dog barking"; "Does the
    audio contain the sound of train wagon?" -> "train wagon"; "Is this angry speech?" -> "angry speech"), else None.
    Only the text up to the first question mark is read."""
    q = " ".join((question or "").split())
    if "?" in q:
        q = q[: q.index("?")]
    q = re.sub(r"^(?:question|q)\s*[:.]\s*", "", q.strip(), flags=re.IGNORECASE).rstrip("?.! ").strip()
    for p in _ASKED:
        m = p.match(q)
        if m:
            return m.group("s").strip() or None
    return None
