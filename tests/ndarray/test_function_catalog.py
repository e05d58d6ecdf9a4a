"""docs/functions.md is the catalog the package generates (ndengine/catalog.py)."""
import pathlib

import ndengine as nd
from ndengine.catalog import catalog

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "functions.md"


def test_the_catalog_in_the_docs_is_up_to_date():
    assert DOC.read_text() == catalog(), (
        "docs/functions.md is out of date: python -m ndengine.catalog > docs/functions.md")


def test_the_catalog_lists_what_the_package_has():
    text = catalog()
    for name in ("exp", "median", "pad", "concatenate", "unique", "allclose"):
        assert f"`{name}`" in text and callable(getattr(nd, name))
