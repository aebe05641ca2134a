"""The base of every typed record (ARCHITECTURE.md: records are never bare dicts)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """Base of all records: frozen, extra fields forbidden so a typo never passes silently."""

    model_config = ConfigDict(frozen=True, extra="forbid")
