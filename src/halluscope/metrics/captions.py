"""Caption metrics as the COCO caption evaluation computes them (pycocoevalcap): the Stanford PTB tokenizer
(lower-cased, punctuation dropped), METEOR 1.5 (Denkowski & Lavie 2014; the jar, English, normalised) and CIDEr-D
(Vedantam et al. 2015; n-grams 1-4, sigma 6, document frequencies from the references scored together).

The tokenizer and METEOR are Java programs shipped inside pycocoevalcap (no download at run time); they need a
``java`` on the PATH (Debian: default-jre-headless). Without it the figures are None with the reason, never 0.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence

JAVA_FIX = "install a Java runtime (Debian: apt-get install default-jre-headless); scripts/install.sh does"


def coco_caption_scores(references: Mapping[str, Sequence[str]], hypotheses: Mapping[str, str]) -> dict:
    """Corpus METEOR and CIDEr-D with one score per item: {"meteor", "cider", "items": {id: {"meteor", "cider"}},
    "error"}; ``references`` maps each id to its reference captions, ``hypotheses`` to the model's caption."""
    ids = [k for k in hypotheses if k in references]
    out: dict = {"meteor": None, "cider": None, "items": {}, "error": None, "n": len(ids)}
    if not ids:
        return out
    if shutil.which("java") is None:
        out["error"] = f"METEOR and CIDEr need java for the COCO tokenizer and METEOR: {JAVA_FIX}"
        return out
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tok = PTBTokenizer()
    try:  # the tokenizer writes its input beside its jar: a read-only install cannot run it
        gts = tok.tokenize({k: [{"caption": c} for c in references[k]] for k in ids})
        res = tok.tokenize({k: [{"caption": hypotheses[k]}] for k in ids})
    except OSError as exc:
        out["error"] = f"the COCO tokenizer could not run ({exc}); {JAVA_FIX}, with pycocoevalcap in a writable folder"
        return out
    # an empty caption stays one empty string (METEOR 0, CIDEr 0), never dropped from the corpus
    res = {k: res.get(k) or [""] for k in ids}
    cider, cider_items = Cider().compute_score(gts, res)
    meteor_scorer = Meteor()
    try:
        meteor, meteor_items = meteor_scorer.compute_score(gts, res)
    finally:
        del meteor_scorer  # stops the METEOR process
    out.update(
        meteor=float(meteor),
        cider=float(cider),
        items={k: {"meteor": float(m), "cider": float(c)} for k, m, c in zip(ids, meteor_items, cider_items)},
    )
    return out
