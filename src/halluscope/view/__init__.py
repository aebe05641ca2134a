"""The sample viewer: every item of a run, its clip, transcript alignment, judges' and detectors' readings.

``halluscope view RUN`` serves it on loopback (halluscope.core.webapp: token, Host/Origin checks, verified audio);
``halluscope view RUN --export DIR`` writes the same page as static files that open from file://.
"""

from halluscope.view.data import ViewData, load_view

__all__ = ["ViewData", "load_view"]
