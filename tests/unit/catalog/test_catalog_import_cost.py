"""Importing the catalog package loads no retailer module until its specs are used (the operator function's
reads and overrides never use them), and loading them defines their models without building their validators
(pydantic's `defer_build`): each function's cold start pays only for the models its requests use, on first use."""

from __future__ import annotations

import subprocess
import sys

UNBUILT_AFTER_IMPORT = """
import inspect
from pydantic import BaseModel
import functions.catalog as catalog

catalog.CATALOG  # loads every retailer module
models = [
    model
    for module in (catalog.cu, catalog.dtryx, catalog.gs25, catalog.oliveyoung, catalog.seveneleven)
    for _, model in inspect.getmembers(module, inspect.isclass)
    if issubclass(model, BaseModel)
    and model.__module__ == module.__name__
    # generic templates and their parametrizations are built with the models that use them
    and not model.__pydantic_generic_metadata__["parameters"]
    and model.__pydantic_generic_metadata__["origin"] is None
]
built = [model.__name__ for model in models if model.__pydantic_complete__]
print(len(models), built)
"""


def test_importing_the_catalog_builds_no_model_validator() -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter running a fixed script
        [sys.executable, "-c", UNBUILT_AFTER_IMPORT], capture_output=True, text=True, check=True
    )
    count, built = result.stdout.strip().split(" ", 1)
    assert int(count) > 50
    assert built == "[]"


RETAILERS_LOADED = """
import sys
import functions.catalog as catalog
from functions.core import RouteKey

def retailers():
    return sorted(name for name in sys.modules if name.startswith("functions.catalog.") and "." not in name[18:]
                  and name[18:] in ("cgv", "cu", "dtryx", "gs25", "oliveyoung", "seveneleven"))

print(retailers())
catalog.spec_for(RouteKey.CU_STOCK)
print(retailers())
"""


def test_the_retailer_modules_load_on_first_use_of_the_specs() -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter running a fixed script
        [sys.executable, "-c", RETAILERS_LOADED], capture_output=True, text=True, check=True
    )
    before, after = result.stdout.strip().splitlines()
    assert before == "[]"
    assert after == str(
        [
            "functions.catalog.cgv",
            "functions.catalog.cu",
            "functions.catalog.dtryx",
            "functions.catalog.gs25",
            "functions.catalog.oliveyoung",
            "functions.catalog.seveneleven",
        ]
    )


def test_a_deferred_model_builds_and_validates_on_first_use() -> None:
    from functions.catalog.seveneleven import GoodsSearchResponse

    row = {"itemCd": "8801056018979", "itemOnm": "코카콜라"}
    answer = GoodsSearchResponse.model_validate({"data": {"content": [row]}}, strict=False)
    assert [r.itemCd for r in answer.data.rows()] == ["8801056018979"]


def test_the_retailer_modules_annotate_with_objects_not_strings() -> None:
    # Postponed (string) annotations make pydantic compile and evaluate each of the catalog's ~335 field
    # annotations at class creation, every cold start: about 1.5 % of the lookup function's import.
    from functions.catalog import common, cu, dtryx, gs25, oliveyoung, relay_rules, seveneleven

    modules = (common, relay_rules, cu, dtryx, gs25, oliveyoung, seveneleven)
    assert [module.__name__ for module in modules if "annotations" in vars(module)] == []
