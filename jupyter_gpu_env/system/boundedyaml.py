"""YAML files users write (an environment file, a pipeline file), read safely and within bounds.

``yaml.safe_load`` builds no objects but plain ones; it does not bound what a small file can expand to
(a "billion laughs" of aliases) or how deep it nests. Both are counted here as the document is
composed, before anything is built from it: each node once, each alias as the size of what it stands
for, so nine aliases of nine aliases of ... cost what they expand to.

A mapping that names a key twice is refused (a ``yaml.YAMLError`` naming the key and both lines):
YAML's readers keep the last silently, so a pipeline file naming node ``a`` twice would run one node
where its JSON form is refused. Keys a merge (``<<``) brings in may still be overridden.
"""

from __future__ import annotations

from typing import Any


class YamlTooBig(ValueError):
    """The document is nested too deep or holds too many values; the message says which."""


def load_yaml(text: str, max_depth: int, max_nodes: int) -> Any:
    """The document in ``text``; :class:`YamlTooBig` beyond the bounds, ``yaml.YAMLError`` when it is
    no YAML."""
    import yaml  # type: ignore[import-untyped]

    class Bounded(yaml.SafeLoader):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = self.nodes = self.aliases = 0
            self.sizes: dict[int, int] = {}  # id(node) -> values it stands for

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                node = super().compose_node(parent, index)
                self.aliases += 1
                self.nodes += self.sizes.get(id(node), 1)
            else:
                self.depth += 1
                if self.depth > max_depth:
                    raise YamlTooBig(f"it is nested deeper than {max_depth} levels")
                before = self.nodes
                try:
                    node = super().compose_node(parent, index)
                finally:
                    self.depth -= 1
                self.nodes += 1
                self.sizes[id(node)] = self.nodes - before
            if self.nodes > max_nodes:
                raise YamlTooBig(
                    f"its aliases expand to more than {max_nodes} values"
                    if self.aliases
                    else f"it holds more than {max_nodes} values"
                )
            return node

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            # Checked before the merge keys are flattened in: those may be overridden, by design.
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # unhashable: the constructor refuses it, saying so
                    continue
                if first is not key_node:
                    named = repr(key) if len(repr(key)) <= 80 else repr(key)[:77] + "..."
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"found duplicate key {named} (first on line {first.start_mark.line + 1})",
                        key_node.start_mark,
                    )
            return super().construct_mapping(node, deep)

    loader = Bounded(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
