"""Where measurements live: a SQLite database of runs, jobs, points and samples."""

from commchar.store.database import POINT_COLUMNS, Store, point_order

__all__ = ["POINT_COLUMNS", "Store", "point_order"]
