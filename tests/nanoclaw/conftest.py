from tests.host.conftest import conn, store, ws

__all__ = ["conn", "store", "ws"]
