"""The AudioSet ontology as a hierarchy of sound classes, for grounding caption objects ('score captions --ontology').

Input: AudioSet's ``ontology.json`` as released (J. F. Gemmeke et al., "Audio Set: An ontology and human-labeled
dataset for audio events", ICASSP 2017; github.com/audioset/ontology, CC BY-SA 4.0; not shipped here): a JSON array
of classes ``{id, name, child_ids, ...}``. A class is named by its display name, by each comma-separated part of it
("car horn" of "Vehicle horn, car horn, honking") and by the name without its parenthesised qualifier.

A caption object is *grounded* by a clip label when it names the label's class, an ancestor of it (less specific
and still true: "engine" for *Idling*, "vehicle" for *Car*) or a descendant (more specific: "bark" for *Dog*); a
label is *covered* when the caption names its class or a descendant of it (naming "vehicle" does not cover *Car*).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from halluscope.core.errors import InputError
from halluscope.reply.free import normalize_label

_QUALIFIER = re.compile(r"\s*\([^)]*\)")
FIX = "pass AudioSet's ontology.json as released (a JSON array of {id, name, child_ids})"


def spellings(name: str) -> set[str]:
    """The normalised names a class display name is spelled by."""
    parts = {name, _QUALIFIER.sub(" ", name), *name.split(",")}
    return {normalize_label(p) for p in parts if normalize_label(p)}


class Ontology:
    """Classes by id, their parents, and the ids each normalised spelling names."""

    def __init__(self, classes: list[dict], *, source: str = "ontology") -> None:
        self.source = source
        self.names: dict[str, set[str]] = {}
        self.display: dict[str, str] = {}
        self.parents: dict[str, set[str]] = {}
        for k, c in enumerate(classes):
            if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not isinstance(c.get("name"), str):
                raise InputError(
                    "a class needs a string 'id' and 'name'", file=source, row=k + 1, field="id/name", fix=FIX
                )
            kids = c.get("child_ids", [])
            if not isinstance(kids, list):
                raise InputError("'child_ids' is not a list", file=source, row=k + 1, field="child_ids", fix=FIX)
            self.display[c["id"]] = c["name"]
            for kid in kids:
                self.parents.setdefault(str(kid), set()).add(c["id"])
            for s in spellings(c["name"]):
                self.names.setdefault(s, set()).add(c["id"])
        self._up: dict[str, frozenset[str]] = {}

    @classmethod
    def load(cls, path: str | Path) -> Ontology:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise InputError("file not found", file=str(path), fix=FIX) from exc
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc.msg}", file=str(path), row=exc.lineno, fix=FIX) from exc
        if not isinstance(data, list):
            raise InputError(f"expected a JSON array, got {type(data).__name__}", file=str(path), fix=FIX)
        return cls(data, source=str(path))

    def ancestors(self, cid: str) -> frozenset[str]:
        """Every class above ``cid`` (a class may have several parents)."""
        if cid not in self._up:
            self._up[cid] = frozenset()  # a cycle in a hand-edited file ends here
            up: set[str] = set()
            for p in self.parents.get(cid, ()):
                up |= {p, *self.ancestors(p)}
            self._up[cid] = frozenset(up)
        return self._up[cid]

    def classes(self, names: Iterable[str]) -> set[str]:
        """The class ids the normalised names spell."""
        return {cid for n in names for s in spellings(n) for cid in self.names.get(s, ())}

    def grounds(self, obj: str, labels: Iterable[str]) -> bool:
        """Whether the object (a name) is a label's class, an ancestor or a descendant of it."""
        mine = self.classes([obj])
        for lab in self.classes(labels):
            if lab in mine or mine & self.ancestors(lab) or any(lab in self.ancestors(m) for m in mine):
                return True
        return False

    def covered(self, label: str, objects: Iterable[str]) -> bool:
        """Whether the caption's objects name the label's class or a descendant of it."""
        mine = self.classes([label])
        return any(m in mine or mine & self.ancestors(m) for m in self.classes(objects))
