"""The catalog of environments: where they are (`discovery`), what is known of each, saved (`saved`)."""

from .discovery import EnvironmentCatalog, EnvLocation

__all__ = ["EnvLocation", "EnvironmentCatalog"]
