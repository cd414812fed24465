"""The Budgeted Read Gate: native fit, the E/L ledger, check-before-delivery and the full-view fallback."""

from .ledger import Ledger
from .route import Route, choose_route

__all__ = ["Ledger", "Route", "choose_route"]
