import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).parents[1] / "audio_lm"))
