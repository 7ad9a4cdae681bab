"""The lookup function's logic: API query models, their mapping onto the catalog's operations, and the
`Lookup` that sends every upstream call through the router. Handlers stay thin on top of this."""

from functions.lookups.runner import Fetcher, InvalidParams, Lookup, OperationRouter, operation_params

__all__ = ["Fetcher", "InvalidParams", "Lookup", "OperationRouter", "operation_params"]
