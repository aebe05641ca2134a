import sys
from pathlib import Path
