"""ModelSpec: one parse of 'provider/model', its options and the legacy glued '?k=v' forms; canonical round trip."""

import pickle

import pytest

from halluscope.core.errors import HalluscopeError
from halluscope.core.spec import ModelSpec, format_value, parse_value


@pytest.mark.parametrize(
    "name, options, provider, model, expected",
    [
        ("hf/dir?gguf=x.gguf", {"temperature": 0}, "hf", "dir", {"gguf": "x.gguf", "temperature": 0}),
        ("hf-audio/m?mitigation=aad&alpha=0.5", None, "hf-audio", "m", {"mitigation": "aad", "alpha": 0.5}),
        ("openai/gpt-4o-mini", None, "openai", "gpt-4o-mini", {}),
        ("tfidf", None, "tfidf", "", {}),
        ("espeak/en-us+f3", None, "espeak", "en-us+f3", {}),
        ("cascade/whisper/base+hf/x?language=kk", None, "cascade", "whisper/base+hf/x", {"language": "kk"}),
        ("hf-asr/dir?punct=hf-punct/p&chunk_s=20", None, "hf-asr", "dir", {"punct": "hf-punct/p", "chunk_s": 20}),
        ("hf/dir?mitigation=dola", {"mitigation": "none"}, "hf", "dir", {"mitigation": "none"}),  # keywords win
    ],
)
def test_parse_reads_the_name_and_the_options_once(name, options, provider, model, expected):
    spec = ModelSpec.parse(name, options)
    assert (spec.provider, spec.model, dict(spec.options)) == (provider, model, expected)
    again = ModelSpec.parse(str(spec))
    assert again == spec and dict(again.options) == expected and hash(again) == hash(spec)


def test_canonical_form_puts_mitigation_first_then_sorted_keys():
    a = ModelSpec.parse("hf-audio/m?noise_steps=300&alpha=0.5&mitigation=vcd")
    b = ModelSpec.parse("hf-audio/m", {"mitigation": "vcd", "alpha": 0.5, "noise_steps": 300})
    assert str(a) == str(b) == "hf-audio/m?mitigation=vcd&alpha=0.5&noise_steps=300"
    assert a == b and a.name == "hf-audio/m"
    assert str(ModelSpec.parse("hf-audio/m?mitigation=aad&alpha=0.5")) == "hf-audio/m?mitigation=aad&alpha=0.5"


@pytest.mark.parametrize(
    "value",
    [
        "aad",
        "1",
        "true",
        "a & b = c?",
        "Focus on the audio:",
        0,
        0.5,
        1.0,
        True,
        None,
        [1, 2],
        {"method": "aad"},
        "café",
    ],
)
def test_values_survive_the_canonical_string(value):
    assert parse_value(format_value(value)) == value
    spec = ModelSpec.parse("hf/x", {"k": value})
    assert ModelSpec.parse(str(spec)).options["k"] == value


def test_values_read_as_the_cli_reads_them():
    spec = ModelSpec.parse("hf/x?a=3&b=true&c=cot&d=%5B1,2%5D&e=")
    assert dict(spec.options) == {"a": 3, "b": True, "c": "cot", "d": [1, 2], "e": ""}


def test_a_spec_is_frozen_hashable_and_pickles():
    spec = ModelSpec.parse("hf-audio/m?mitigation=aad")
    with pytest.raises(AttributeError, match="frozen"):
        spec.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.options["alpha"] = 1  # type: ignore[index]
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert len({spec, ModelSpec.parse(str(spec)), ModelSpec.parse("hf-audio/m")}) == 2
    assert ModelSpec.parse(spec) is spec
    assert ModelSpec.parse(spec, {"alpha": 0.5}) == ModelSpec.parse("hf-audio/m?mitigation=aad&alpha=0.5")


def test_with_options_without_and_split():
    spec = ModelSpec.parse("cascade/a/b+hf/c?language=kk&mitigation=dola")
    own, rest = spec.split(["language"])
    assert own == {"language": "kk"} and str(rest) == "cascade/a/b+hf/c?mitigation=dola"
    assert str(spec.with_options(mitigation=None)) == "cascade/a/b+hf/c?language=kk"
    assert str(spec.without("language", "mitigation")) == "cascade/a/b+hf/c"


@pytest.mark.parametrize(
    "name, match",
    [
        ("", "expected a model name"),
        ("hf/x?a=1&a=2", "given twice"),
        ("hf/x?novalue", "cannot read the options"),
        ("/x", "bad provider"),
    ],
)
def test_malformed_names_are_refused(name, match):
    with pytest.raises(HalluscopeError, match=match):
        ModelSpec.parse(name)


def test_unknown_option_keys_are_refused_naming_the_allowed_ones():
    from pydantic import BaseModel, ConfigDict

    class Opts(BaseModel):
        model_config = ConfigDict(extra="forbid")
        device: str = "cpu"
        seed: int = 0

    spec = ModelSpec.parse("hf-tts/x?sede=1")
    with pytest.raises(HalluscopeError, match=r"unknown option\(s\) sede; its options: device, seed"):
        spec.check(Opts)
    with pytest.raises(HalluscopeError, match="unknown option"):
        spec.validate(Opts)
    assert ModelSpec.parse("hf-tts/x?seed=3").validate(Opts).seed == 3
    with pytest.raises(HalluscopeError, match="bad options"):
        ModelSpec.parse("hf-tts/x?seed=abc").validate(Opts)
    with pytest.raises(HalluscopeError, match="names no model; expected e.g. hf-tts/<"):
        ModelSpec.parse("hf-tts").require_model()


def test_backends_refuse_unknown_options_in_the_spec_and_as_keywords():
    from halluscope.backends.audio_lm import create_audio_backend
    from halluscope.backends.llm import LLMConfig, create_backend

    config = LLMConfig()
    with pytest.raises(HalluscopeError, match=r"does not take option\(s\) nope; its options: .*batch_size"):
        create_backend("hf/some-dir?nope=1", config=config)
    with pytest.raises(HalluscopeError, match=r"does not take option\(s\) nope; its options: .*api_key_env"):
        create_backend("openai/m", config=config, nope=1)
    with pytest.raises(HalluscopeError, match=r"does not take option\(s\) batch_size; its options: .*audio_window_s"):
        create_audio_backend("hf-audio/some-dir?batch_size=2", config=config)
    with pytest.raises(HalluscopeError, match="unknown mitigation 'aadd'"):
        create_audio_backend("hf-audio/some-dir?mitigation=aadd", config=config)
    # a misspelt mitigation setting names the mitigation's keys among the allowed ones
    with pytest.raises(HalluscopeError, match=r"does not take option\(s\) alpah; its options: .*alpha.*noise_steps"):
        create_audio_backend("hf-audio/some-dir?mitigation=vcd&alpah=0.5", config=config)
    with pytest.raises(HalluscopeError, match=r"does not take option\(s\) alpah; its options: .*alpha.*batch_size"):
        create_backend("hf/some-dir", config=config, mitigation="dola", alpah=0.5)


def test_a_backend_built_from_a_glued_name_or_from_options_is_the_same_model():
    from halluscope.backends.audio_lm import create_audio_backend
    from halluscope.backends.llm import LLMConfig, create_backend

    config = LLMConfig()
    glued = create_audio_backend("hf-audio/some-dir?alpha=0.5&mitigation=aad", config=config)
    typed = create_audio_backend(
        ModelSpec.parse("hf-audio/some-dir", {"mitigation": "aad", "alpha": 0.5}), config=config
    )
    assert glued.spec == typed.spec == "hf-audio/some-dir?mitigation=aad&alpha=0.5"
    assert glued.options.mitigation == typed.options.mitigation and glued.options.mitigation.alpha == 0.5
    assert glued.mitigation_label == typed.mitigation_label == "AAD (alpha=0.5)"
    hf = create_backend("hf/some-dir?gguf=x.gguf", config=config, batch_size=2)
    assert (hf.spec, hf.path, hf.options.gguf, hf.options.batch_size) == (
        "hf/some-dir?gguf=x.gguf",
        "some-dir",
        "x.gguf",
        2,
    )
    # keyword options tune the backend without renaming it
    assert create_backend("hf/some-dir", config=config, batch_size=2).spec == "hf/some-dir"


def test_the_llm_config_section_is_found_by_the_name_without_options():
    from halluscope.backends.llm import LLMConfig, create_backend

    config = LLMConfig(models={"hf/some-dir": {"batch_size": 3}})
    assert create_backend("hf/some-dir?mitigation=dola", config=config).options.batch_size == 3


def test_reports_read_the_decoding_method_from_the_spec():
    from halluscope.mitigation import method_label, mitigation_of

    assert method_label("hf-audio/m") == "W/O"
    assert method_label("hf-audio/m?mitigation=aad&alpha=0.5") == "AAD (alpha=0.5)"
    assert method_label(ModelSpec.parse("hf/m", {"mitigation": "dola"})) == "DoLa"
    assert method_label({"mitigation": "vcd", "seed": 3, "prompting": "cot"}) == "VCD"
    assert method_label({"mitigation": "unknown-old"}) == "unknown-old"  # an old manifest still gets a row
    assert mitigation_of("hf-audio/m?mitigation=mti&tau=2").tau == 2.0


@pytest.mark.parametrize(
    "text, rest",
    [
        ("hf/dir?b=1&a=2", "dir?b=1&a=2"),  # the options in the order written, not the canonical one
        ("hf?k=v", "?k=v"),
        ("tfidf", ""),
        ("openai/gpt-4o", "gpt-4o"),
        ("cascade/whisper/base+hf/x?language=kk", "whisper/base+hf/x?language=kk"),
        ("hf/", ""),
    ],
)
def test_written_keeps_the_text_after_the_provider_as_given(text, rest):
    spec, after = ModelSpec.written(text)
    assert spec == ModelSpec.parse(text) and after == rest  # stage keys hold ``after``: stored keys stay the same
