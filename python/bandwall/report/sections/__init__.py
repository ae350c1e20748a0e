"""Report sections: each module here registers one with sections.register("name")(TheSection()).

(The registry itself is bandwall.report.registry; these names make `from bandwall.report import
sections` followed by `sections.register(...)` work from any module.)
"""

from bandwall.report import registry as _registry

register = _registry.register
names = _registry.names
items = _registry.items
get = _registry.get
