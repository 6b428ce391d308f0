"""QGIS plugin entry point (GUI only; all geometry logic lives in the `scoring` package).

Nothing is put first on sys.path: see plugin/install/paths.py for how `scoring` and the private
libraries are found without changing what other plugins import."""


def classFactory(iface):  # noqa: N802 - QGIS's required name
    from .install.installer import expose_private_dir
    from .install.paths import expose_scoring

    expose_scoring()
    expose_private_dir()  # what the Install dependencies dialog installed, before scoring loads
    from .install.deps import missing_dependencies

    missing = missing_dependencies()
    if missing:
        from .install.missing import MissingDependenciesPlugin

        return MissingDependenciesPlugin(iface, missing)
    from .main import SpatialGapPlugin

    return SpatialGapPlugin(iface)
