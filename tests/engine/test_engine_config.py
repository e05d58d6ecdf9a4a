"""Settings from the environment (engine/config.py): every NDENGINE_* variable is read through
its checked helpers, so a bad value raises a ValueError naming the variable and its value where
it is read: at import, or when the process-wide engine is made. Run in fresh interpreters with
a timeout, as a user would set them.
"""
import pathlib
import re

import pytest

from ndengine.engine import config

from engine_helpers import KINDS, run_script

# ---------------------------------------------------------------- the helpers
@pytest.mark.parametrize("text, value", [
    ("1", True), ("true", True), ("TRUE", True), ("Yes", True), ("on", True), (" On ", True),
    ("0", False), ("false", False), ("False", False), ("no", False), ("OFF", False),
])
def test_booleans_take_the_usual_spellings(text, value):
    assert config.env_bool("NDENGINE_X", not value, environ={"NDENGINE_X": text}) is value


@pytest.mark.parametrize("default", [True, False])
def test_an_unset_or_blank_variable_takes_its_default(default):
    assert config.env_bool("NDENGINE_X", default, environ={}) is default
    assert config.env_bool("NDENGINE_X", default, environ={"NDENGINE_X": "  "}) is default
    assert config.env_int("NDENGINE_X", 7, environ={"NDENGINE_X": ""}) == 7
    assert config.env_float("NDENGINE_X", 0.5, environ={}) == 0.5
    assert config.env_text("NDENGINE_X", "d", environ={"NDENGINE_X": " "}) == "d"
    assert config.env_choice("NDENGINE_X", {"a", "b"}, "a", environ={}) == "a"


@pytest.mark.parametrize("text", ["2", "maybe", "enabled", "y", "nope"])
def test_other_boolean_words_raise_naming_the_variable_and_the_spellings(text):
    with pytest.raises(ValueError, match=f"NDENGINE_X must be one of 1/0, true/false, yes/no, "
                                         f"on/off \\(any case\\), got '{text}'"):
        config.env_bool("NDENGINE_X", True, environ={"NDENGINE_X": text})


@pytest.mark.parametrize("helper, text, message", [
    (lambda env: config.env_int("NDENGINE_X", minimum=1, environ=env), "lots",
     "an integer >= 1"),
    (lambda env: config.env_int("NDENGINE_X", minimum=1, environ=env), "0", "an integer >= 1"),
    (lambda env: config.env_int("NDENGINE_X", environ=env), "1.5", "an integer"),
    (lambda env: config.env_int("NDENGINE_X", minimum=0, what="a count", environ=env), "-1",
     "a count"),
    (lambda env: config.env_float("NDENGINE_X", minimum=0, environ=env), "nan", "a number >= 0"),
    (lambda env: config.env_float("NDENGINE_X", environ=env), "inf", "a number"),
    (lambda env: config.env_float("NDENGINE_X", minimum=0, environ=env), "-2", "a number >= 0"),
    (lambda env: config.env_float("NDENGINE_X", environ=env), "12MB", "a number"),
    (lambda env: config.env_choice("NDENGINE_X", {"a", "b"}, "a", environ=env), "c",
     "one of \\['a', 'b'\\]"),
])
def test_bad_numbers_and_choices_raise_naming_the_variable_and_the_value(helper, text, message):
    with pytest.raises(ValueError, match=f"environment variable NDENGINE_X must be {message}, "
                                         f"got '{text}'"):
        helper({"NDENGINE_X": text})


def test_numbers_are_read():
    assert config.env_int("NDENGINE_X", minimum=0, environ={"NDENGINE_X": " 12 "}) == 12
    assert config.env_float("NDENGINE_X", minimum=0, environ={"NDENGINE_X": "1.5"}) == 1.5


# ---------------------------------------------------------------- every variable, as set
IMPORT_PROBE = """
    import ndengine
    ndengine.engine.get()
    print("no error")
"""

# each variable the package reads at import or at engine creation, with a bad value
BAD_VALUES = [
    ("NDENGINE_FUSION", "maybe"), ("NDENGINE_FUSION", "2"),
    ("NDENGINE_FUSION_MAX_OPS", "lots"), ("NDENGINE_FUSION_MAX_OPS", "0"),
    ("NDENGINE_FUSION_MIN_ELEMENTS", "-1"), ("NDENGINE_FUSION_INLINE_ELEMENTS", "1e5"),
    ("NDENGINE_INLINE_MAX_BYTES", "64K"), ("NDENGINE_POOL_LIMIT_MB", "nan"),
    ("NDENGINE_FULL_STACKS", "always"), ("NDENGINE_FAKE_GPUS", "two"),
    ("NDENGINE_JIT_AFTER", "soon"), ("NDENGINE_BULK_SIZE", "0"), ("NDENGINE_BULK_SIZE", "big"),
    ("NDENGINE_ENGINE_TYPE", "Fast"), ("NDENGINE_MAX_PENDING", "1.5"),
]


@pytest.mark.parametrize("name, value", BAD_VALUES)
def test_every_bad_variable_raises_a_value_error_naming_it(name, value):
    proc = run_script(IMPORT_PROBE, env={name: value}, timeout=120)
    assert proc.returncode != 0 and "no error" not in proc.stdout, proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: environment variable " + name), proc.stderr
    assert repr(value) in last, last


SETTINGS_PROBE = """
    import ndengine as nd
    print(nd.get_settings()["fusion"], nd.get_settings()["bulk_size"])
"""


@pytest.mark.parametrize("spelling, fused", [("off", False), ("FALSE", False), ("no", False),
                                              ("0", False), ("On", True), ("yes", True),
                                              ("", True)])
def test_fusion_variable_spellings_switch_it(spelling, fused):
    proc = run_script(SETTINGS_PROBE, env={"NDENGINE_FUSION": spelling}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(fused), "64"]


@pytest.mark.parametrize("kind", KINDS)
def test_bulk_size_variable_sets_the_engines_start_value(kind):
    proc = run_script(SETTINGS_PROBE, env={"NDENGINE_BULK_SIZE": "9",
                                           "NDENGINE_ENGINE_TYPE": kind}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "1" if kind == "NaiveEngine" else "9"]


def test_full_stacks_takes_the_boolean_spellings():
    code = """
        from ndengine.engine import errors
        print(errors._FULL_STACKS)
    """
    for spelling, expected in (("on", "True"), ("True", "True"), ("off", "False"),
                               ("0", "False")):
        proc = run_script(code, env={"NDENGINE_FULL_STACKS": spelling}, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == expected, (spelling, proc.stdout)


# ---------------------------------------------------------------- one path, one list
PACKAGE = pathlib.Path(config.__file__).resolve().parents[1]


def test_the_package_reads_its_variables_only_through_the_helpers_and_lists_each():
    named, direct = set(), []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        named |= set(re.findall(r"[\"'](NDENGINE_[A-Z_]+)[\"']", text))
        if path.name != "config.py":
            direct += [f"{path.name}: {line.strip()}" for line in text.splitlines()
                       if re.search(r"os\.environ|getenv", line) and "NDENGINE_" in line]
    assert not direct, direct
    assert len(named) >= 20, sorted(named)
    missing = sorted(name for name in named if name not in config.__doc__)
    assert not missing, f"config.py's docstring should list {missing}"
