"""MISHAP-Bench (seed 001): clips + descriptions -> adversarial questions -> rubrics -> audio-LM answers ->
groundedness judge -> rates, stance and agreement, with a human annotation app.

Each step is a resumable stage over the run directory's store; a step finds its upstream through the
manifest of the latest run of the step before it.
"""

from halluscope.mishap.annotate import AnnotationServer, export_labels
from halluscope.mishap.answers import collect_answers, load_answers
from halluscope.mishap.clips import import_clips, kept_clips, load_manifest
from halluscope.mishap.evidence import Evidence, EvidenceTool, FtsEvidence
from halluscope.mishap.judge import GroundednessJudge, load_examples, load_judgements, run_judge
from halluscope.mishap.labels import Annotations, human_labels
from halluscope.mishap.questions import make_questions, name_collision
from halluscope.mishap.report import write_mishap_report
from halluscope.mishap.rubrics import current_rubrics, export_rubrics, import_rubrics, make_rubrics

__all__ = [
    "AnnotationServer",
    "Annotations",
    "Evidence",
    "EvidenceTool",
    "FtsEvidence",
    "GroundednessJudge",
    "collect_answers",
    "current_rubrics",
    "export_labels",
    "export_rubrics",
    "human_labels",
    "import_clips",
    "import_rubrics",
    "kept_clips",
    "load_answers",
    "load_examples",
    "load_judgements",
    "load_manifest",
    "make_questions",
    "make_rubrics",
    "name_collision",
    "run_judge",
    "write_mishap_report",
]
