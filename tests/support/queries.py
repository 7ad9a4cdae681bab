"""The lookup API's query models field by field, for property tests that draw any mix of their fields."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from functions.catalog.cgv import CgvMoviesQuery, CgvTheatersQuery, CgvTimetableQuery
from functions.catalog.compare import CompareProductsQuery
from functions.catalog.contract import LookupQuery
from functions.catalog.cu import CuProductsQuery, CuStoresQuery
from functions.catalog.gs25 import Gs25ProductsQuery, Gs25StockQuery
from functions.catalog.oliveyoung import OliveyoungProductsQuery, OliveyoungStockQuery, OliveyoungStoresQuery
from functions.catalog.seveneleven import (
    SevenElevenPopwordsQuery,
    SevenElevenProductsQuery,
    SevenElevenStockQuery,
    SevenElevenStoresQuery,
)

QueryCases = list[tuple[type[LookupQuery], dict[str, st.SearchStrategy[Any]]]]
"""Query models, each with a strategy per field."""
Kind = Literal["text", "count", "coordinate", "code", "product"]

QUERY_FIELDS: list[tuple[type[LookupQuery], dict[str, Kind]]] = [
    (OliveyoungStoresQuery, {"keyword": "text", "lat": "coordinate", "page": "count"}),
    (OliveyoungProductsQuery, {"keyword": "text", "page": "count", "size": "count"}),
    (OliveyoungStockQuery, {"productId": "product", "keyword": "text", "lon": "coordinate", "page": "count"}),
    (CuProductsQuery, {"keyword": "text", "offset": "count", "limit": "count"}),
    (CuStoresQuery, {"lat": "coordinate", "lon": "coordinate", "keyword": "text", "itemCd": "code"}),
    (Gs25ProductsQuery, {"keyword": "text"}),
    (Gs25StockQuery, {"lat": "coordinate", "lon": "coordinate", "keyword": "text", "itemCode": "code"}),
    (SevenElevenProductsQuery, {"keyword": "text", "page": "count", "size": "count"}),
    (SevenElevenStoresQuery, {"keyword": "text", "limit": "count"}),
    (SevenElevenStockQuery, {"itemCd": "code", "storeCd": "code"}),
    (SevenElevenPopwordsQuery, {"label": "code"}),
    (CgvTheatersQuery, {"keyword": "text", "regionCode": "code", "limit": "count"}),
    (CgvMoviesQuery, {"theaterCode": "code", "playDate": "code", "keyword": "text"}),
    (CgvTimetableQuery, {"theaterCode": "code", "movieCode": "code", "limit": "count"}),
    (CompareProductsQuery, {"keyword": "text", "limit": "count"}),
]
"""Each query model with its fields and what kind of value each holds."""


def query_fields(strategies: dict[Kind, st.SearchStrategy[Any]]) -> QueryCases:
    """QUERY_FIELDS with each field drawn from the strategy for its kind."""
    return [
        (model, {name: strategies[kind] for name, kind in fields.items()}) for model, fields in QUERY_FIELDS
    ]


def draw_query(
    data: st.DataObject, model: type[LookupQuery], fields: Mapping[str, st.SearchStrategy[Any]]
) -> LookupQuery | None:
    """Any mix of `fields`, read into `model` as the API reads a query; None where the API answers 400."""
    values = data.draw(st.fixed_dictionaries({}, optional=dict(fields)))
    try:
        return model.model_validate(values)
    except ValidationError:
        return None


def for_every_accepted_query(
    cases: QueryCases, *, max_examples: int
) -> Callable[[Callable[[LookupQuery], None]], Any]:
    """Runs the property on queries of each model of `cases` drawn as `draw_query` does and the API accepts."""

    def decorate(test: Callable[[LookupQuery], None]) -> Any:
        @pytest.mark.parametrize(("model", "fields"), cases, ids=[model.__name__ for model, _ in cases])
        @settings(
            max_examples=max_examples,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(data=st.data())
        def property_test(
            model: type[LookupQuery], fields: Mapping[str, st.SearchStrategy[Any]], data: st.DataObject
        ) -> None:
            query = draw_query(data, model, fields)
            if query is not None:  # None: a 400 from the API, nothing runs
                test(query)

        property_test.__name__, property_test.__doc__ = test.__name__, test.__doc__
        return property_test

    return decorate
